import type { ReactNode } from 'react';
import type { Sort, SortKey } from '../../api/files';
import type { Messages } from '../../i18n';
import { Icon } from '../ui/icons';

/** A column's title in a list's header: a button that sorts by it, when the list sorts by that key. */
export function HeaderCell({
  className,
  label,
  sortKey,
  sort,
  onSort,
  t,
  alignEnd = false,
}: {
  readonly className: string;
  readonly label: string;
  readonly sortKey?: SortKey;
  readonly sort?: Sort;
  readonly onSort?: (order: SortKey) => void;
  readonly t: Messages;
  readonly alignEnd?: boolean;
}) {
  if (!sortKey || !onSort || !sort) {
    return <span className={`${className} py-1`}>{label}</span>;
  }
  const active = sort.order === sortKey;
  return (
    <span className={`${className} ${alignEnd ? 'justify-end' : ''}`}>
      <button
        type="button"
        onClick={() => onSort(sortKey)}
        aria-label={active ? `${label}, ${sort.desc ? t.sortedDescending : t.sortedAscending}` : undefined}
        className={`inline-flex items-center gap-1 rounded px-1 py-1 hover:bg-gray-200 focus-visible:outline-2 focus-visible:outline-blue-600 dark:hover:bg-gray-800 ${
          active ? 'text-gray-900 dark:text-gray-100' : ''
        }`}
      >
        {label}
        <Icon name={sort.desc ? 'arrowDown' : 'arrowUp'} className={`size-3.5 ${active ? '' : 'invisible'}`} />
      </button>
    </span>
  );
}

/** The box of a virtualized list (files, links): its header row, then the scrolling rows. */
export function ListFrame({ header, children }: { readonly header: ReactNode; readonly children: ReactNode }) {
  return (
    <div className="flex min-h-0 flex-1 flex-col overflow-hidden rounded-md border border-gray-200 bg-white dark:border-gray-800 dark:bg-gray-900">
      {header}
      {children}
    </div>
  );
}

export function HeaderBar({ children }: { readonly children: ReactNode }) {
  return (
    <div className="flex items-center gap-3 overflow-hidden border-b border-gray-200 bg-gray-50 px-3 py-1.5 text-xs font-medium text-gray-700 [scrollbar-gutter:stable] dark:border-gray-800 dark:bg-gray-900 dark:text-gray-300">
      {children}
    </div>
  );
}

export const ROW_CLASS = 'absolute inset-x-0 flex items-center gap-3 border-b border-gray-100 px-3 text-sm dark:border-gray-800';
