/** The recycle bin: restore (saying where each item went), delete forever, empty. */
import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { itemsOf } from '../api/files';
import { BIN_SORT, DEFAULT_RETENTION_DAYS, binQueries, retentionDays, useDeleteForever, useEmptyBin, useRestoreItems } from '../api/recycle-bin';
import type { Item, Items } from '../api/results';
import type { SortKey } from '../api/files';
import { ConfirmDialog } from '../components/dialogs/confirm-dialog';
import { ContainingFolderLink } from '../components/file-browser/breadcrumbs';
import { ListToolbar } from '../components/file-browser/sort-control';
import { useListKeys } from '../components/file-browser/use-list-keys';
import type { ColumnId } from '../components/file-list/columns';
import { EmptyState } from '../components/file-list/empty-state';
import { FileList } from '../components/file-list/file-list';
import { ItemIcon } from '../components/file-list/item-icon';
import { ListingStates, StatusLine } from '../components/file-list/listing-states';
import { PageHeading } from '../components/page-heading';
import { Button, ToolButton } from '../components/ui/button';
import { Menu, type MenuAction, type MenuAnchor } from '../components/ui/menu';
import { useDocumentTitle } from '../hooks/use-document-title';
import { useSelection } from '../hooks/use-selection';
import { useSortParam } from '../hooks/use-sort-param';
import { useViewMode } from '../hooks/use-view-mode';
import { useI18n } from '../i18n';
import { describeError } from '../components/error-text';
import { itemKey } from '../lib/items';
import { notify } from '../lib/notices';

const COLUMNS: readonly ColumnId[] = ['from', 'deleted', 'purge', 'size'];
/** What the bin sorts by: its items are not shared or linked while there. */
const BIN_SORT_KEYS: readonly SortKey[] = ['name', 'time', 'size'];
const nothing = () => {};

type Confirm = { readonly kind: 'forever'; readonly items: readonly Item[] } | { readonly kind: 'empty' };

export function RecycleBinPage() {
  const { t } = useI18n();
  useDocumentTitle(t.recycleBin);
  const { sort, setSort, sortBy } = useSortParam(BIN_SORT, BIN_SORT_KEYS);
  const [view, setView] = useViewMode();
  const bin = useQuery({ ...binQueries.list(sort), placeholderData: (previous) => previous });
  const items = itemsOf(bin.data);
  const controls = useSelection(items);
  const listId = useId();
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  const [restored, setRestored] = useState<Items | null>(null);
  const [menuAnchor, setMenuAnchor] = useState<MenuAnchor | null>(null);
  const restore = useRestoreItems();
  const deleteForever = useDeleteForever();
  const empty = useEmptyBin();
  const days = retentionDays(items) ?? DEFAULT_RETENTION_DAYS;

  const restoreSelected = () => {
    const chosen = controls.selectedItems();
    if (chosen.length === 0) return;
    restore.mutate(chosen, {
      onSuccess: (result) => setRestored(result),
      onError: (error) => notify('error', t.actionFailed, describeError(error, t).message),
    });
  };
  const askDeleteForever = () => {
    if (controls.count > 0) setConfirm({ kind: 'forever', items: controls.selectedItems() });
  };
  const closeConfirm = () => {
    setConfirm(null);
    deleteForever.reset();
    empty.reset();
  };

  const menu: MenuAction[] = [
    { id: 'restore', label: t.restore, icon: 'restore', disabled: controls.count === 0, onSelect: restoreSelected },
    { id: 'forever', label: t.deleteForever, icon: 'trash', shortcut: 'Del', danger: true, disabled: controls.count === 0, onSelect: askDeleteForever },
    { id: 'select-all', label: t.selectAll, icon: 'checkAll', shortcut: 'Ctrl+A', disabled: items.length === 0, onSelect: controls.selectAll },
  ];
  const onLayout = useListKeys(items, controls, { open: nothing, remove: askDeleteForever }, listId, confirm === null);

  return (
    <section aria-labelledby="bin-title" className="flex min-h-0 flex-1 flex-col gap-3">
      <PageHeading id="bin-title" title={t.recycleBin} hint={t.binRetention(days)} />

      {restored && <RestoredPanel restored={restored} onDismiss={() => setRestored(null)} />}

      {items.length > 0 && (
        <ListToolbar sort={sort} setSort={setSort} view={view} setView={setView} keys={BIN_SORT_KEYS} timeIsDeletion>
          <div role="group" aria-label={t.selectionActions} className="flex flex-wrap items-center gap-2">
            <ToolButton
              icon="restore"
              label={t.restore}
              variant="primary"
              disabled={controls.count === 0}
              busy={restore.isPending}
              busyLabel={t.restoring}
              onClick={restoreSelected}
            />
            <ToolButton icon="trash" label={t.deleteForever} disabled={controls.count === 0} onClick={askDeleteForever} />
            <ToolButton icon="bin" label={t.emptyBin} wide onClick={() => setConfirm({ kind: 'empty' })} />
          </div>
        </ListToolbar>
      )}

      <ListingStates query={bin} subject={t.subjectBin} empty={items.length === 0 && <EmptyState icon="bin" title={t.binEmpty} />}>
        <FileList
          id={listId}
          items={items}
          controls={controls}
          view={view}
          columns={COLUMNS}
          sort={sort}
          onSort={sortBy}
          label={t.recycleBin}
          onOpen={nothing}
          onContextMenu={(x, y) => setMenuAnchor({ x, y })}
          onLayout={onLayout}
        />
        <StatusLine selected={controls.count}>
          <span>{t.itemCounts(bin.data?.folders.length ?? 0, bin.data?.files.length ?? 0)}</span>
        </StatusLine>
      </ListingStates>

      {menuAnchor && <Menu label={t.selectionActions} actions={menu} anchor={menuAnchor} onClose={() => setMenuAnchor(null)} />}
      {confirm?.kind === 'forever' && (
        <ConfirmDialog
          title={t.deleteForeverTitle(t.itemsPhrase(confirm.items.length, confirm.items[0]?.name))}
          description={t.deleteForeverExplain}
          confirmLabel={t.deleteForever}
          busyLabel={t.deleting}
          mutation={deleteForever}
          variables={confirm.items}
          done={t.deletedForever(t.itemsPhrase(confirm.items.length, confirm.items[0]?.name))}
          onClose={closeConfirm}
        />
      )}
      {confirm?.kind === 'empty' && (
        <ConfirmDialog
          title={t.emptyBinTitle}
          description={t.emptyBinExplain}
          confirmLabel={t.emptyBin}
          busyLabel={t.emptying}
          mutation={empty}
          variables={undefined}
          done={t.binEmptied}
          onClose={closeConfirm}
        />
      )}
    </section>
  );
}

/** Where restored items went (the service answers each one's new folder and name). */
function RestoredPanel({ restored, onDismiss }: { readonly restored: Items; readonly onDismiss: () => void }) {
  const { t } = useI18n();
  const items: Item[] = [...restored.folders, ...restored.files];
  const headingId = useId();
  return (
    <section
      role="status"
      aria-labelledby={headingId}
      className="rounded-md border border-green-300 bg-green-50 p-3 text-sm text-green-950 dark:border-green-800 dark:bg-green-950 dark:text-green-50"
    >
      <div className="flex items-start gap-2">
        <h2 id={headingId} className="flex-1 font-semibold">
          {t.restoredHeading(items.length)}
        </h2>
        <Button icon="close" variant="ghost" compact onClick={onDismiss}>
          <span className="sr-only">{t.dismiss}</span>
        </Button>
      </div>
      <ul className="mt-1 max-h-40 space-y-1 overflow-auto">
        {items.map((item) => (
          <li key={itemKey(item)} className="flex min-w-0 flex-wrap items-center gap-x-1.5">
            <ItemIcon item={item} />
            <span className="font-medium break-all">{item.name}</span>
            <span>{t.restoredTo}</span>
            <ContainingFolderLink item={item} className="break-all text-blue-800 underline underline-offset-2 dark:text-blue-200" />
          </li>
        ))}
      </ul>
    </section>
  );
}
