import { Link } from 'react-router';
import type { Sort, SortKey } from '../../api/files';
import type { Item, Listing } from '../../api/results';
import { formatSize, formatTime } from '../../lib/format';
import { ItemBadges, ItemIcon } from './item-icon';

export interface FileTableProps {
  readonly listing: Listing;
  readonly sort: Sort;
  readonly onSort: (order: SortKey) => void;
  /** Accessible name of the table, e.g. "Contents of Photos". */
  readonly label: string;
}

const columns: readonly { readonly key: SortKey; readonly label: string; readonly className: string }[] = [
  { key: 'name', label: 'Name', className: 'text-left' },
  { key: 'size', label: 'Size', className: 'w-24 text-right' },
  { key: 'time', label: 'Modified', className: 'hidden w-48 text-left sm:table-cell' },
];

/**
 * Folders, then files, in a table. Plain rows for now: a virtualized list replaces the body when
 * listings grow to the 100,000 items the service allows.
 */
export function FileTable({ listing, sort, onSort, label }: FileTableProps) {
  const items: readonly Item[] = [...listing.folders, ...listing.files];
  return (
    <table className="w-full table-fixed border-collapse text-sm">
      <caption className="sr-only">{label}</caption>
      <thead>
        <tr className="border-b border-gray-200 text-gray-600 dark:border-gray-700 dark:text-gray-400">
          {columns.map((column) => {
            const active = sort.order === column.key;
            return (
              <th
                key={column.key}
                scope="col"
                className={`px-2 py-2 font-medium ${column.className}`}
                aria-sort={active ? (sort.desc ? 'descending' : 'ascending') : 'none'}
              >
                <button
                  type="button"
                  onClick={() => onSort(column.key)}
                  className="inline-flex items-center gap-1 rounded hover:text-gray-900 focus-visible:outline-2 focus-visible:outline-blue-600 dark:hover:text-gray-100"
                >
                  {column.label}
                  <span aria-hidden="true" className={active ? '' : 'invisible'}>
                    {sort.desc ? '↓' : '↑'}
                  </span>
                </button>
              </th>
            );
          })}
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr key={`${item.kind}-${item.id}`} className="border-b border-gray-100 hover:bg-gray-50 dark:border-gray-800 dark:hover:bg-gray-900">
            <td className="px-2 py-2">
              <div className="flex min-w-0 items-center gap-2">
                <ItemIcon item={item} />
                <div className="min-w-0">
                  {item.kind === 'folder' ? (
                    <Link
                      to={`/folder/${item.id}`}
                      state={{ name: item.name }}
                      className="block truncate font-medium text-blue-700 hover:underline focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-blue-300"
                    >
                      <span className="sr-only">Folder </span>
                      {item.name}
                    </Link>
                  ) : (
                    <span className="block truncate" title={item.name}>
                      {item.name}
                    </span>
                  )}
                  <ItemBadges item={item} />
                  <span className="block text-xs text-gray-500 sm:hidden dark:text-gray-400">{formatTime(item.time)}</span>
                </div>
              </div>
            </td>
            <td className="px-2 py-2 text-right whitespace-nowrap tabular-nums">{formatSize(item.size)}</td>
            <td className="hidden px-2 py-2 whitespace-nowrap sm:table-cell">
              <time dateTime={item.time}>{formatTime(item.time)}</time>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
