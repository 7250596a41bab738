/** The actions on the selection (toolbar, menus) and their dialogs, shared by the folder, search and recent pages. */
import { Suspense, useState, type ReactNode } from 'react';
import { unlockedHolder, useLockItem } from '../../api/encryption';
import { useRenameItem } from '../../api/files';
import type { FileItem, FolderItem, Item } from '../../api/results';
import type { SelectionControls } from '../../hooks/use-selection';
import { useUploads } from '../../uploads/use-uploads';
import { useI18n } from '../../i18n';
import { describeError } from '../error-text';
import { notify } from '../../lib/notices';
import { UnlockRequests } from '../encryption/unlock-dialog';
import { useLinkMenu, type LinkDialogRequest } from '../links/link-actions';
import { lazyNamed } from '../ui/lazy-named';
import type { MenuAction } from '../ui/menu';

// Each dialog is a chunk of its own, fetched when it is first opened: the first load carries none.
const NewFolderDialog = lazyNamed(() => import('../dialogs/name-dialogs'), 'NewFolderDialog');
const RenameDialog = lazyNamed(() => import('../dialogs/name-dialogs'), 'RenameDialog');
const MoveDialog = lazyNamed(() => import('../dialogs/move-dialog'), 'MoveDialog');
const DeleteDialog = lazyNamed(() => import('../dialogs/delete-dialog'), 'DeleteDialog');
const ShareDialog = lazyNamed(() => import('../sharing/share-dialog'), 'ShareDialog');
const EmailShareDialog = lazyNamed(() => import('../email-share/email-share-dialog'), 'EmailShareDialog');
const LinkDialog = lazyNamed(() => import('../links/link-dialog'), 'LinkDialog');
const RemoveLinkDialog = lazyNamed(() => import('../links/remove-link-dialog'), 'RemoveLinkDialog');
const EncryptDialog = lazyNamed(() => import('../encryption/encrypt-dialog'), 'EncryptDialog');
const DecryptDialog = lazyNamed(() => import('../encryption/decrypt-dialog'), 'DecryptDialog');

export type DialogRequest =
  | { readonly kind: 'new-folder'; readonly dir: number }
  | { readonly kind: 'rename'; readonly item: Item }
  | { readonly kind: 'move' | 'copy'; readonly items: readonly Item[] }
  | { readonly kind: 'delete'; readonly items: readonly Item[]; readonly permanent: boolean }
  | { readonly kind: 'share'; readonly items: readonly Item[] }
  | { readonly kind: 'email-share'; readonly item: Item }
  | { readonly kind: 'encrypt' | 'decrypt'; readonly item: Item }
  | LinkDialogRequest;

export interface ItemActions {
  readonly request: DialogRequest | null;
  readonly open: (request: DialogRequest) => void;
  readonly dialogs: ReactNode;
  readonly rename: () => void;
  readonly move: () => void;
  readonly remove: (permanent: boolean) => void;
  readonly download: () => void;
  readonly share: () => void;
  readonly menu: readonly MenuAction[];
}

export function useItemActions(
  controls: SelectionControls,
  options: {
    /** The first action of the menu: "Open" in a folder, "Show in folder" in search results. */
    readonly primary?: { readonly label: string; readonly run: (item: Item) => void };
    /** Opens the viewer on a file (components/viewer). */
    readonly preview?: (file: FileItem) => void;
    readonly onFolderCreated?: (folder: FolderItem) => void;
    /** The folders from the root down to the listed one: an item inside an unlocked encrypted folder shares its password. */
    readonly pathIds?: readonly number[];
  } = {},
): ItemActions {
  const { t } = useI18n();
  const uploads = useUploads();
  const [request, setRequest] = useState<DialogRequest | null>(null);
  const renameItem = useRenameItem({
    onError: (error, { item }) => notify('error', t.renameFailed(item.name), describeError(error, t).message),
  });
  const { count } = controls;
  const lockItem = useLockItem();

  // The dialog of an action on one selected item, or on any selected items.
  const onItem = (kind: 'rename' | 'email-share') => () => {
    const [item] = controls.selectedItems();
    if (item && count === 1) setRequest({ kind, item });
  };
  const onItems = (kind: 'move' | 'copy' | 'share') => () => {
    if (count > 0) setRequest({ kind, items: controls.selectedItems() });
  };
  const rename = onItem('rename');
  const move = onItems('move');
  const share = onItems('share');
  const remove = (permanent: boolean) => {
    if (count > 0) setRequest({ kind: 'delete', items: controls.selectedItems(), permanent });
  };
  // One file as itself; folders, or several items, as one ZIP.
  const download = () => {
    const items = controls.selectedItems();
    if (items.length === 0) return;
    const single = items.length === 1 && items[0].type === 'file' ? items[0] : undefined;
    const title = `${t.download}: ${items.length === 1 ? items[0].name : t.selectedCount(items.length)}`;
    // A ZIP takes encrypted items only while this tab has them unlocked (docs/protocol.md §13.3); the service checks beneath folders.
    const locked = single ? undefined : items.find((item) => item.encrypted && !unlockedHolder(item, options.pathIds));
    if (locked) return notify('error', title, `${t.errLocked}${locked.tip ? t.passwordHint(locked.tip) : ''}`);
    (single ? uploads.downloadFile(single.id) : uploads.downloadZip(items)).catch((error: unknown) => notify('error', title, describeError(error, t).message));
  };

  const linkMenu = useLinkMenu(controls, setRequest);

  // Encrypt and Decrypt take one item: Encrypt one that is not encrypted, Decrypt one that is; Lock one this tab unlocked.
  const single = count === 1 ? controls.selectedItems()[0] : undefined;
  const holder = single ? unlockedHolder(single, options.pathIds) : null;
  const lockSingle = () => {
    if (!single || !holder) return;
    lockItem.mutate(holder, {
      onSuccess: () => notify('info', t.lockedAgain(single.name)),
      onError: (error) => notify('error', t.lockFailed(single.name), describeError(error, t).message),
    });
  };
  const encryptionMenu: MenuAction[] = [
    { id: 'encrypt', label: t.encryptMenu, icon: 'lock', disabled: !single || single.encrypted, onSelect: () => single && setRequest({ kind: 'encrypt', item: single }) },
    ...(holder ? [{ id: 'lock', label: t.lockMenu, icon: 'lock' as const, onSelect: lockSingle }] : []),
    { id: 'decrypt', label: t.decryptMenu, icon: 'unlock', disabled: !single?.encrypted, onSelect: () => single && setRequest({ kind: 'decrypt', item: single }) },
  ];

  const { primary, preview } = options;
  const menu: MenuAction[] = [
    ...(primary
      ? [
          {
            id: 'primary',
            label: primary.label,
            icon: 'folderOpen' as const,
            disabled: count !== 1,
            onSelect: () => {
              const [item] = controls.selectedItems();
              if (item) primary.run(item);
            },
          },
        ]
      : []),
    ...(preview
      ? [{ id: 'preview', label: t.preview, icon: 'eye' as const, disabled: single?.type !== 'file', onSelect: () => single?.type === 'file' && preview(single) }]
      : []),
    { id: 'download', label: t.download, icon: 'download', disabled: count === 0, onSelect: download },
    { id: 'rename', label: t.rename, icon: 'pencil', shortcut: 'F2', disabled: count !== 1, onSelect: rename },
    { id: 'move', label: t.moveTo, icon: 'move', disabled: count === 0, onSelect: move },
    { id: 'copy', label: t.copyTo, icon: 'copyText', disabled: count === 0, onSelect: onItems('copy') },
    { id: 'share', label: t.sharingMenu, icon: 'share', disabled: count === 0, onSelect: share },
    { id: 'email-share', label: t.emailShareAction, icon: 'mail', disabled: count !== 1, onSelect: onItem('email-share') },
    ...linkMenu,
    ...encryptionMenu,
    { id: 'delete', label: t.moveToBin, icon: 'trash', shortcut: 'Del', disabled: count === 0, onSelect: () => remove(false) },
    {
      id: 'delete-permanently',
      label: t.deletePermanently,
      icon: 'trash',
      shortcut: 'Shift+Del',
      danger: true,
      disabled: count === 0,
      onSelect: () => remove(true),
    },
    { id: 'select-all', label: t.selectAll, icon: 'checkAll', shortcut: 'Ctrl+A', disabled: controls.list.size === 0, onSelect: controls.selectAll },
  ];

  const close = () => setRequest(null);
  let dialogs: ReactNode = null;
  if (request?.kind === 'new-folder') dialogs = <NewFolderDialog dir={request.dir} onClose={close} onCreated={options.onFolderCreated} />;
  else if (request?.kind === 'rename') dialogs = <RenameDialog item={request.item} onRename={(item, name) => renameItem.mutate({ item, name })} onClose={close} />;
  else if (request?.kind === 'move' || request?.kind === 'copy') dialogs = <MoveDialog items={request.items} mode={request.kind} onClose={close} />;
  else if (request?.kind === 'delete') dialogs = <DeleteDialog items={request.items} permanent={request.permanent} onClose={close} />;
  else if (request?.kind === 'share') dialogs = <ShareDialog items={request.items} onClose={close} />;
  else if (request?.kind === 'email-share') dialogs = <EmailShareDialog item={request.item} onClose={close} />;
  else if (request?.kind === 'link') {
    dialogs = <LinkDialog files={request.files} mode={request.mode} foldersLeftOut={request.foldersLeftOut} onClose={close} />;
  } else if (request?.kind === 'unlink') dialogs = <RemoveLinkDialog files={request.files} onClose={close} />;
  else if (request?.kind === 'encrypt') dialogs = <EncryptDialog item={request.item} onClose={close} />;
  else if (request?.kind === 'decrypt') dialogs = <DecryptDialog item={request.item} onClose={close} />;
  // Always there: a download of a locked file asks for its password (api/encryption.ts requestUnlock).
  dialogs = (
    <>
      <Suspense fallback={null}>{dialogs}</Suspense>
      <UnlockRequests />
    </>
  );

  return { request, open: setRequest, dialogs, rename, move, remove, download, share, menu };
}
