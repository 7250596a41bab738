/** The columns a file list can show besides the name, and what sorts each one. */
import type { SortKey } from '../../api/files';
import type { Item } from '../../api/results';
import type { Messages } from '../../i18n';
import { formatDate, formatSize, formatTime } from '../../lib/format';
import { parentPath } from '../../lib/items';

export type ColumnId = 'size' | 'time' | 'location' | 'from' | 'deleted' | 'purge';

export interface ColumnSpec {
  readonly title: (t: Messages) => string;
  /** The sort key a click on the header chooses; none for columns the service cannot sort by. */
  readonly sort?: SortKey;
  /** Width and from which screen width on the column shows. */
  readonly className: string;
  /** Below that width, the value is shown under the name instead: the class that hides it there from then on. */
  readonly underNameClass: string;
  readonly value: (item: Item, t: Messages, locale: string) => string;
}

export const COLUMNS: Readonly<Record<ColumnId, ColumnSpec>> = {
  size: {
    title: (t) => t.colSize,
    sort: 'size',
    className: 'w-24 text-right tabular-nums hidden sm:block',
    underNameClass: 'sm:hidden',
    value: (item, _t, locale) => formatSize(item.size, locale),
  },
  time: {
    title: (t) => t.colModified,
    sort: 'time',
    className: 'w-44 hidden md:block',
    underNameClass: 'md:hidden',
    value: (item, _t, locale) => formatTime(item.time, locale),
  },
  location: {
    title: (t) => t.colLocation,
    className: 'w-56 hidden lg:block truncate',
    underNameClass: 'lg:hidden',
    value: (item) => (item.path ? parentPath(item.path) : ''),
  },
  from: {
    title: (t) => t.colFrom,
    className: 'w-48 hidden lg:block truncate',
    underNameClass: 'lg:hidden',
    value: (item) => item.from ?? '',
  },
  deleted: {
    title: (t) => t.colDeleted,
    sort: 'time',
    className: 'w-40 hidden md:block',
    // Under the name only the purge date: it says more, and the line is short.
    underNameClass: 'hidden',
    value: (item, _t, locale) => formatTime(item.deleted ?? '', locale),
  },
  purge: {
    title: (t) => t.colPurge,
    className: 'w-36 hidden sm:block',
    underNameClass: 'sm:hidden',
    value: (item, _t, locale) => formatDate(item.purge ?? '', locale),
  },
};

/** On narrow screens, the values of the hidden columns go under the name, each hidden again once its column shows. */
export function underName(item: Item, columns: readonly ColumnId[], t: Messages, locale: string): { readonly text: string; readonly className: string }[] {
  const parts: { text: string; className: string }[] = [];
  const places: { text: string; className: string }[] = [];
  for (const column of columns) {
    const value = COLUMNS[column].value(item, t, locale);
    if (!value || COLUMNS[column].underNameClass === 'hidden') continue;
    if (column === 'location' || column === 'from') {
      // The path goes last and is the part that gets cut short.
      places.push({ text: t.inFolder(value), className: `min-w-0 truncate ${COLUMNS[column].underNameClass}` });
    } else {
      parts.push({ text: column === 'purge' ? t.purgeOn(value) : value, className: `shrink-0 ${COLUMNS[column].underNameClass}` });
    }
  }
  return [...parts, ...places];
}
