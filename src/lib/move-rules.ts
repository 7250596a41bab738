/** What the move dialog and drag-and-drop both refuse before asking the service (which checks again: 409). */

interface MovedItem {
  readonly type: 'folder' | 'file';
  readonly id: number;
  /** The folder it is in now. */
  readonly dir: number;
}

/** intoItself: a moved folder is the destination or above it; alreadyThere: every item is in the destination already. */
export type MoveRefusal = 'intoItself' | 'alreadyThere';

/** Why moving `items` into the last folder of `chain` (folder ids from the root, 0, down to the destination) is refused; null if it is not. */
export function moveRefusal(items: readonly MovedItem[], chain: readonly number[]): MoveRefusal | null {
  const moving = new Set(items.filter((item) => item.type === 'folder').map((item) => item.id));
  if (chain.some((id) => moving.has(id))) return 'intoItself';
  const destination = chain.at(-1) ?? 0;
  return items.every((item) => item.dir === destination) ? 'alreadyThere' : null;
}

/** Items grouped by the folder they are in, for sending each group back there (undo of a move). */
export function byFolder<T extends MovedItem>(items: readonly T[]): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) groups.set(item.dir, [...(groups.get(item.dir) ?? []), item]);
  return groups;
}
