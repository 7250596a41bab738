/** The notices after a move or a delete to the bin, with Undo (lib/notices.ts): what Undo does, and what it says after. */
import type { Item } from '../../api/results';
import type { Messages } from '../../i18n';
import { byFolder } from '../../lib/move-rules';
import { notify, notifyUndoable } from '../../lib/notices';
import { describeError } from '../error-text';

// mutateAsync of useMoveItems and useRestoreItems: it runs and invalidates the listings after the dialog or page is gone.
type MoveCall = (variables: { readonly items: readonly Item[]; readonly to: number }) => Promise<unknown>;
type RestoreCall = (items: readonly Item[]) => Promise<unknown>;

async function undoing(t: Messages, what: string, done: string, run: () => Promise<unknown>) {
  try {
    await run();
    notify('info', done);
  } catch (error) {
    notify('error', t.undoFailed(what), describeError(error, t).message);
  }
}

/** After a move: Undo sends each item back to the folder it came from (the items as they were before the move). */
export function notifyMoved(t: Messages, items: readonly Item[], text: string, move: MoveCall): void {
  const what = t.itemsPhrase(items.length, items[0]?.name);
  notifyUndoable(text, () => {
    void undoing(t, what, t.movedBack(what), async () => {
      for (const [dir, group] of byFolder(items)) await move({ items: group, to: dir });
    });
  });
}

/** After a delete to the bin: Undo restores the items (the bin keeps their ids; a name taken since gets " (restored)"). */
export function notifyBinned(t: Messages, items: readonly Item[], text: string, restore: RestoreCall): void {
  const what = t.itemsPhrase(items.length, items[0]?.name);
  notifyUndoable(text, () => void undoing(t, what, t.restoredFromBin(what), () => restore(items)));
}
