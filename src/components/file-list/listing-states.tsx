import type { ReactNode } from 'react';
import { useI18n } from '../../i18n';
import { ErrorPanel } from '../error-panel';
import { ListSkeleton } from './skeleton';

/** What a listing page shows of its query: a skeleton, the error, what it says when empty, or the list. */
export function ListingStates({
  query,
  subject,
  failure,
  empty,
  children,
}: {
  readonly query: { readonly isPending: boolean; readonly isError: boolean; readonly error: unknown; readonly isFetching: boolean; refetch(): unknown };
  /** What failed to load, for the error panel: "this folder". */
  readonly subject: string;
  /** Shown instead of the error panel for an error the page explains itself (a locked folder). */
  readonly failure?: ReactNode;
  /** Shown instead of the list when it has nothing (false while it has something). */
  readonly empty: ReactNode;
  readonly children: ReactNode;
}) {
  if (query.isPending) return <ListSkeleton />;
  if (query.isError) return failure || <ErrorPanel error={query.error} subject={subject} onRetry={() => void query.refetch()} retrying={query.isFetching} />;
  return empty || children;
}

/** Under a list: its counts (the children) and how many items are selected. */
export function StatusLine({ selected, children }: { readonly selected: number; readonly children: ReactNode }) {
  const { t } = useI18n();
  return (
    <p className="mb-[max(var(--notice-space,0px),var(--upload-space,0px))] flex flex-wrap gap-x-3 text-sm text-gray-700 dark:text-gray-300">
      {children}
      <span aria-live="polite">{selected > 0 ? t.selectedCount(selected) : ''}</span>
    </p>
  );
}
