import { useId, type ReactNode } from 'react';
import { SORT_KEYS, isSortKey, type Sort, type SortKey } from '../../api/files';
import type { ViewMode } from '../../hooks/use-view-mode';
import { useI18n, type Messages } from '../../i18n';
import { nextSort } from '../../hooks/use-sort-param';
import { selectClass } from '../ui/field';
import { Icon } from '../ui/icons';

const sortLabel = (t: Messages, key: SortKey, timeIsDeletion: boolean): string =>
  ({ name: t.sortName, time: timeIsDeletion ? t.sortDeleted : t.sortTime, size: t.sortSize, share: t.sortShare, link: t.sortLink })[key];

/** Sort key and direction, for the grid (which has no column headers) and for phones. */
export function SortControl({
  sort,
  onChange,
  keys = SORT_KEYS,
  timeIsDeletion = false,
}: {
  readonly sort: Sort;
  readonly onChange: (sort: Sort) => void;
  readonly keys?: readonly SortKey[];
  readonly timeIsDeletion?: boolean;
}) {
  const { t } = useI18n();
  const id = useId();
  return (
    <div className="flex items-center gap-1">
      <label htmlFor={id} className="sr-only">
        {t.sortBy}
      </label>
      <select
        id={id}
        value={sort.order}
        onChange={(event) => {
          if (isSortKey(event.target.value)) onChange(nextSort(sort, event.target.value));
        }}
        className={selectClass}
      >
        {keys.map((key) => (
          <option key={key} value={key}>
            {sortLabel(t, key, timeIsDeletion)}
          </option>
        ))}
      </select>
      <button
        type="button"
        onClick={() => onChange({ ...sort, desc: !sort.desc })}
        aria-label={`${t.sortOrder}: ${sort.desc ? t.descending : t.ascending}`}
        title={sort.desc ? t.descending : t.ascending}
        className="rounded-md border border-gray-400 p-1.5 hover:bg-gray-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-gray-500 dark:hover:bg-gray-800"
      >
        <Icon name={sort.desc ? 'arrowDown' : 'arrowUp'} className="size-4" />
      </button>
    </div>
  );
}

export function ViewToggle({ view, onChange }: { readonly view: ViewMode; readonly onChange: (view: ViewMode) => void }) {
  const { t } = useI18n();
  const button = (mode: ViewMode, label: string, icon: 'list' | 'grid') => (
    <button
      type="button"
      aria-pressed={view === mode}
      onClick={() => onChange(mode)}
      title={label}
      className={`p-1.5 focus-visible:outline-2 focus-visible:outline-blue-600 ${
        view === mode ? 'bg-gray-200 text-gray-900 dark:bg-gray-700 dark:text-gray-100' : 'hover:bg-gray-100 dark:hover:bg-gray-800'
      }`}
    >
      <Icon name={icon} className="size-4" />
      <span className="sr-only">{label}</span>
    </button>
  );
  return (
    <div role="group" aria-label={t.view} className="flex overflow-hidden rounded-md border border-gray-400 dark:border-gray-500">
      {button('list', t.listView, 'list')}
      {button('grid', t.gridView, 'grid')}
    </div>
  );
}

/** A listing's toolbar: its actions (the children), then sort and view (where the list has a grid) at the end. */
export function ListToolbar({
  sort,
  setSort,
  view,
  setView,
  keys,
  timeIsDeletion,
  children,
}: {
  readonly sort: Sort;
  readonly setSort: (sort: Sort) => void;
  readonly view?: ViewMode;
  readonly setView?: (view: ViewMode) => void;
  readonly keys?: readonly SortKey[];
  readonly timeIsDeletion?: boolean;
  readonly children: ReactNode;
}) {
  return (
    <div className="flex flex-wrap items-center gap-2">
      {children}
      <div className="ml-auto flex items-center gap-2">
        <SortControl sort={sort} onChange={setSort} keys={keys} timeIsDeletion={timeIsDeletion} />
        {view && setView && <ViewToggle view={view} onChange={setView} />}
      </div>
    </div>
  );
}
