/**
 * Move or Copy with a lazy folder picker; the folders being moved or copied cannot be opened or chosen (the service
 * checks again: 409). A copy may go into the items' own folder: the service numbers the copies' names.
 */
import { useMutation, useQuery } from '@tanstack/react-query';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState } from 'react';
import { DEFAULT_SORT, fileQueries, useCopyItems, useMoveItems } from '../../api/files';
import type { FolderItem, Item, PathSegment } from '../../api/results';
import { useI18n } from '../../i18n';
import { moveRefusal } from '../../lib/move-rules';
import { notify } from '../../lib/notices';
import { notifyMoved } from '../file-browser/undo';
import { ErrorPanel, InlineError } from '../error-panel';
import { LineSkeleton } from '../file-list/skeleton';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { Icon } from '../ui/icons';
import { moveWithConflicts } from './move-with-conflicts';

const PICKER_ROW = 40;

export function MoveDialog({
  items,
  mode = 'move',
  onClose,
}: {
  readonly items: readonly Item[];
  readonly mode?: 'move' | 'copy';
  readonly onClose: () => void;
}) {
  const { t } = useI18n();
  // A move asks about names the destination holds (move-with-conflicts.ts); a copy numbers them (the service does).
  const moveItems = useMutation({ mutationFn: ({ items, to }: { readonly items: readonly Item[]; readonly to: number }) => moveWithConflicts(items, to) });
  const copyItems = useCopyItems();
  // Undo moves the items straight back where they were (notifyMoved).
  const moveBack = useMoveItems();
  const copying = mode === 'copy';
  const move = copying ? copyItems : moveItems;
  // Start where the items are, when they are all in one folder; else at the root.
  const startDir = items.every((item) => item.dir === items[0]?.dir) ? (items[0]?.dir ?? 0) : 0;
  const [dir, setDir] = useState(startDir);
  const listing = useQuery({ ...fileQueries.withPath(dir, DEFAULT_SORT), placeholderData: (previous) => previous });
  const moving = useMemo(() => new Set(items.filter((item) => item.type === 'folder').map((item) => item.id)), [items]);
  const what = t.itemsPhrase(items.length, items[0]?.name);

  const shown = listing.data && !listing.isPlaceholderData ? listing.data : undefined;
  const trail: readonly PathSegment[] = shown?.path.dirs ?? [];
  const pathText = shown?.path.value ?? '';
  // The same refusals as a drag-and-drop move (file-browser/drop-move.ts); a copy may go where the items are.
  const refusal = moveRefusal(items, trail.length > 0 ? trail.map((segment) => segment.id) : [dir]);
  const nowhereToGo = refusal === 'intoItself' || (!copying && refusal === 'alreadyThere');

  const region = useRef<HTMLDivElement>(null);
  const open = (id: number) => {
    setDir(id);
    region.current?.focus();
  };

  const onMove = () => {
    move.mutate(
      { items, to: dir },
      {
        onSuccess: (outcome) => {
          if (outcome === null) return; // the user cancelled at a name conflict: the picker stays open
          const moved = outcome ? outcome.moved : items;
          const phrase = t.itemsPhrase(moved.length, moved[0]?.name);
          if (copying) notify('info', t.copied(what, pathText || '/'));
          else if (moved.length === 0) notify('info', t.conflictAllSkipped);
          else notifyMoved(t, moved, t.moved(phrase, pathText || '/'), moveBack.mutateAsync);
          onClose();
        },
      },
    );
  };

  return (
    <Dialog title={(copying ? t.copyTitle : t.moveTitle)(what)} onClose={onClose} wide>
      <nav aria-label={t.breadcrumb} className="text-sm">
        <ol className="flex flex-wrap items-center gap-1">
          {trail.map((segment, index) => {
            const last = index === trail.length - 1;
            const name = segment.id === 0 ? t.allFiles : segment.name;
            return (
              <li key={segment.id} className="flex min-w-0 items-center gap-1">
                {index > 0 && <Icon name="chevronRight" className="size-3.5 text-gray-500" />}
                {last ? (
                  <span aria-current="location" className="truncate font-semibold">
                    {name}
                  </span>
                ) : (
                  <button
                    type="button"
                    onClick={() => open(segment.id)}
                    className="max-w-40 truncate rounded text-blue-700 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-blue-300"
                  >
                    {name}
                  </button>
                )}
              </li>
            );
          })}
          {!shown && !listing.isError && <LineSkeleton />}
        </ol>
      </nav>

      <div
        ref={region}
        tabIndex={-1}
        aria-label={t.pickerFolders}
        role="group"
        aria-busy={!shown}
        className="rounded-md border border-gray-200 outline-none dark:border-gray-700"
      >
        {listing.isError ? (
          <div className="p-3">
            <ErrorPanel error={listing.error} subject={t.subjectFolder} onRetry={() => void listing.refetch()} retrying={listing.isFetching} />
          </div>
        ) : !shown ? (
          <p className="p-3 text-sm text-gray-700 dark:text-gray-300">{t.loading}</p>
        ) : shown.folders.length === 0 ? (
          <p className="p-3 text-sm text-gray-700 dark:text-gray-300">{t.pickerEmpty}</p>
        ) : (
          <FolderChoices folders={shown.folders} moving={moving} blockedText={copying ? t.pickerBeingCopied : t.pickerBeingMoved} onOpen={open} />
        )}
      </div>

      <p className="text-sm text-gray-700 dark:text-gray-300">{t.moveDestination(pathText || '…')}</p>
      {move.isError && <InlineError error={move.error} />}
      <DialogActions onCancel={onClose}>
        <Button onClick={onMove} disabled={!shown || nowhereToGo} busy={move.isPending} busyLabel={copying ? t.copying : t.moving}>
          {copying ? t.copyHere : t.moveHere}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

/** The subfolders of the folder being browsed, virtualized (a folder may hold 100,000 of them). */
function FolderChoices({
  folders,
  moving,
  blockedText,
  onOpen,
}: {
  readonly folders: readonly FolderItem[];
  readonly moving: ReadonlySet<number>;
  readonly blockedText: string;
  readonly onOpen: (id: number) => void;
}) {
  const { t } = useI18n();
  const scroll = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: folders.length,
    getScrollElement: () => scroll.current,
    estimateSize: () => PICKER_ROW,
    overscan: 8,
  });
  return (
    <div ref={scroll} className="max-h-72 overflow-auto" style={{ height: Math.min(folders.length * PICKER_ROW, 288) }}>
      <ul style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((row) => {
          const folder = folders[row.index];
          const blocked = moving.has(folder.id);
          return (
            <li
              key={folder.id}
              aria-setsize={folders.length}
              aria-posinset={row.index + 1}
              className="absolute inset-x-0"
              style={{ top: row.start, height: PICKER_ROW }}
            >
              <button
                type="button"
                disabled={blocked}
                onClick={() => onOpen(folder.id)}
                aria-label={blocked ? `${folder.name} (${blockedText})` : t.pickerOpen(folder.name)}
                className="flex h-full w-full items-center gap-2 px-3 text-left text-sm hover:bg-gray-100 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-blue-600 disabled:cursor-not-allowed disabled:text-gray-500 dark:hover:bg-gray-800 dark:disabled:text-gray-400"
              >
                <Icon name="folderOpen" className="size-5 text-amber-500" />
                <span className="min-w-0 flex-1 truncate">{folder.name}</span>
                {blocked ? <span className="text-xs">{blockedText}</span> : <Icon name="chevronRight" className="size-4 text-gray-500" />}
              </button>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
