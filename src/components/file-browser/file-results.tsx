/**
 * Items from all over the account (search, recent uploads): each shows its folder. Opening a file shows it there;
 * opening a folder (a search hit) goes into it.
 */
import { useCallback, useId, type ReactNode } from 'react';
import { useNavigate } from 'react-router';
import type { Sort, SortKey } from '../../api/files';
import type { Item } from '../../api/results';
import { useSelection } from '../../hooks/use-selection';
import { useViewMode } from '../../hooks/use-view-mode';
import { useI18n } from '../../i18n';
import { itemKey } from '../../lib/items';
import type { ColumnId } from '../file-list/columns';
import { FileList } from '../file-list/file-list';
import { StatusLine } from '../file-list/listing-states';
import { useOwnerPreviewSource } from '../viewer/preview-sources';
import { useViewer } from '../viewer/use-viewer';
import { folderPath } from './breadcrumbs';
import { useItemActions } from './item-actions';
import { SelectionTools, useContextMenu } from './selection-tools';
import { ListToolbar } from './sort-control';
import { useListKeys } from './use-list-keys';

const COLUMNS: readonly ColumnId[] = ['location', 'size', 'time'];

export function FileResults({
  items,
  label,
  sort,
  setSort,
  sortBy,
  footer,
}: {
  readonly items: readonly Item[];
  readonly label: string;
  readonly sort: Sort;
  readonly setSort: (sort: Sort) => void;
  readonly sortBy: (order: SortKey) => void;
  readonly footer?: ReactNode;
}) {
  const { t } = useI18n();
  const navigate = useNavigate();
  const [view, setView] = useViewMode();
  const controls = useSelection(items);
  const listId = useId();

  // navigate's promise settles once the route has loaded; the router shows its own errors.
  const showInFolder = useCallback(
    (item: Item) => void navigate(folderPath(item.dir), { state: { select: itemKey(item) } }),
    [navigate],
  );
  const open = useCallback(
    (item: Item) => (item.type === 'folder' ? void navigate(folderPath(item.id)) : showInFolder(item)),
    [navigate, showInFolder],
  );
  const viewer = useViewer(items, useOwnerPreviewSource());
  const actions = useItemActions(controls, { primary: { label: t.openContainingFolder, run: showInFolder }, preview: viewer.open });
  const contextMenu = useContextMenu(actions);
  const onLayout = useListKeys(items, controls, { open, remove: actions.remove, rename: actions.rename }, listId, actions.request === null);

  return (
    <>
      <ListToolbar sort={sort} setSort={setSort} view={view} setView={setView}>
        <div role="group" aria-label={t.selectionActions} className="flex flex-wrap items-center gap-2">
          <SelectionTools actions={actions} count={controls.count} />
        </div>
      </ListToolbar>
      <FileList
        id={listId}
        items={items}
        controls={controls}
        view={view}
        columns={COLUMNS}
        sort={sort}
        onSort={sortBy}
        label={label}
        onOpen={open}
        onContextMenu={contextMenu.openAt}
        onLayout={onLayout}
      />
      <StatusLine selected={controls.count}>
        <span>{t.fileCount(items.length)}</span>
        {footer}
      </StatusLine>
      {actions.dialogs}
      {contextMenu.element}
      {viewer.element}
    </>
  );
}
