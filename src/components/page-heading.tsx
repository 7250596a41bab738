import type { ReactNode, Ref } from 'react';
import { useI18n } from '../i18n';
import { Spinner } from './ui/button';

/** A page's title with "Updating…", a hint and what goes above (breadcrumbs); `headingRef` lets it take the focus. */
export function PageHeading({
  id,
  title,
  updating = false,
  hint,
  above,
  headingRef,
}: {
  readonly id: string;
  readonly title: string;
  readonly updating?: boolean;
  readonly hint?: ReactNode;
  readonly above?: ReactNode;
  readonly headingRef?: Ref<HTMLHeadingElement>;
}) {
  return (
    <div className={above ? 'space-y-1' : undefined}>
      {above}
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
        <h1 id={id} ref={headingRef} tabIndex={headingRef ? -1 : undefined} className="min-w-0 truncate text-xl font-semibold outline-none">
          {title}
        </h1>
        {updating && <UpdatingNote />}
      </div>
      {hint && <p className="text-sm text-gray-700 dark:text-gray-300">{hint}</p>}
    </div>
  );
}

/** "Updating…" while a list shown is fetched again. */
export function UpdatingNote() {
  const { t } = useI18n();
  return (
    <span role="status" className="inline-flex items-center gap-1 text-sm text-gray-700 dark:text-gray-300">
      <Spinner /> {t.updating}
    </span>
  );
}
