/** Drag-and-drop move (docs/web-app.md): folder rows and tiles and the breadcrumbs take dragged rows and Move them there. */
import { useMemo } from 'react';
import { useMoveItems } from '../../api/files';
import type { FolderItem, Item, PathSegment } from '../../api/results';
import { useI18n } from '../../i18n';
import { moveRefusal, type MoveRefusal } from '../../lib/move-rules';
import { notify } from '../../lib/notices';
import { moveWithConflicts } from '../dialogs/move-with-conflicts';
import { describeError } from '../error-text';
import { notifyMoved } from './undo';

/** A folder rows can be dropped on: its folder ids from the root down to it, and its path for the notice. */
export interface DropFolder {
  readonly chain: readonly number[];
  readonly path: string;
}

export interface RowDrops {
  /** The breadcrumbs' folders, root first. */
  readonly crumbs: readonly DropFolder[];
  readonly inside: (folder: FolderItem) => DropFolder;
  /** What the move dialog would refuse (lib/move-rules.ts): intoItself shows as a refused target, alreadyThere as none. */
  readonly refusal: (target: DropFolder, items: readonly Item[]) => MoveRefusal | null;
  readonly drop: (target: DropFolder, items: readonly Item[]) => void;
}

const pathOf = (segments: readonly PathSegment[]) => `/${segments.filter((segment) => segment.id !== 0).map((segment) => segment.name).join('/')}`;

/** The drop targets of the folder shown, whose breadcrumbs are `dirs`; none until they are known. */
export function useRowDrops(dirs: readonly PathSegment[] | undefined): RowDrops | undefined {
  const { t } = useI18n();
  const { mutateAsync: move } = useMoveItems();
  return useMemo(() => {
    if (!dirs) return undefined;
    const ids = dirs.map((segment) => segment.id);
    return {
      crumbs: dirs.map((_, index) => ({ chain: ids.slice(0, index + 1), path: pathOf(dirs.slice(0, index + 1)) })),
      inside: (folder) => ({ chain: [...ids, folder.id], path: pathOf([...dirs, folder]) }),
      refusal: (target, items) => moveRefusal(items, target.chain),
      drop: (target, items) => {
        const what = t.itemsPhrase(items.length, items[0]?.name);
        const refusal = moveRefusal(items, target.chain);
        if (refusal === 'intoItself') {
          const folder = items.find((item) => item.type === 'folder' && target.chain.includes(item.id));
          notify('error', t.moveFailed(what), t.moveIntoItself(folder?.name ?? ''));
          return;
        }
        if (refusal === 'alreadyThere') return;
        // The dialog's move: taken names are asked about first; Undo moves straight back.
        moveWithConflicts(items, target.chain.at(-1) ?? 0).then(
          (outcome) => {
            if (outcome === null) return;
            if (outcome.moved.length === 0) notify('info', t.conflictAllSkipped);
            else notifyMoved(t, outcome.moved, t.moved(t.itemsPhrase(outcome.moved.length, outcome.moved[0].name), target.path), move);
          },
          (error: unknown) => notify('error', t.moveFailed(what), describeError(error, t).message),
        );
      },
    };
  }, [dirs, t, move]);
}
