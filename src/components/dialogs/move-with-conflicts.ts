/**
 * The app's one move (the move dialog, drag and drop): names the destination already holds are asked about first
 * (name-conflicts.ts). Replace: the holder goes to the bin, then the move (restored if the move fails); Keep both:
 * the moved item is renamed to the first name free in both folders, then moved (renamed back if the move fails).
 */
import { api } from '../../api/client';
import { eachBatch, invalidateFiles, renameItem } from '../../api/files';
import { queryClient } from '../../api/query-client';
import { binKeys } from '../../api/recycle-bin';
import type { Item } from '../../api/results';
import { idParams } from '../../lib/items';
import { decideConflicts, freeNumberedName } from './name-conflicts';

export interface MoveOutcome {
  /** What was moved; fewer than asked when some were skipped. */
  readonly moved: readonly Item[];
  readonly skipped: number;
}


/** Moves `items` into folder `destination` (0: the root), asking about taken names; null when the user cancelled. */
export async function moveWithConflicts(items: readonly Item[], destination: number): Promise<MoveOutcome | null> {
  const decisions = await decideConflicts(destination, items.map((item) => ({ name: item.name, kind: item.type, id: item.id })));
  if (!decisions) return null;
  const moving = items.filter((_, index) => decisions[index]?.choice !== 'skip');
  const binned = decisions.flatMap((decision) => (decision?.choice === 'replace' ? [decision.existing] : []));
  const renamed: Item[] = [];
  try {
    for (const [index, item] of items.entries()) {
      if (decisions[index]?.choice !== 'keepBoth') continue;
      await renameItem(item, await freeNumberedName([destination, item.dir], item.name, item.type === 'file'));
      renamed.push(item);
    }
    if (binned.length > 0) await api.folderAndFileDelete({ ...idParams(binned), is_real: 0 });
    try {
      await eachBatch(moving, (batch) => api.move({ ...batch, todir: destination }));
    } catch (error) {
      // What was done for the move is undone, as far as the service lets it.
      if (binned.length > 0) await api.folderAndFileRestore(idParams(binned)).catch(() => {});
      for (const item of renamed) await renameItem(item, item.name).catch(() => {});
      throw error;
    }
  } finally {
    void invalidateFiles(queryClient);
    if (binned.length > 0) void queryClient.invalidateQueries({ queryKey: binKeys.all });
  }
  return { moved: moving, skipped: items.length - moving.length };
}
