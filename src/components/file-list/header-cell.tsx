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
