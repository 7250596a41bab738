/** A file list's selection as pure functions over keys (cheap for 100,000 items); keys, not indexes, so it survives a reordering refetch. */

export interface Selection {
  readonly selected: ReadonlySet<string>;
  /** Where Shift-click and Shift-arrow ranges start. */
  readonly anchor: string | null;
  /** The item the keyboard is on (aria-activedescendant). */
  readonly cursor: string | null;
}

export const EMPTY_SELECTION: Selection = { selected: new Set(), anchor: null, cursor: null };

/** Shift: extend a range from the anchor; toggle: Ctrl (Windows, Linux) or Cmd (macOS). */
export interface Modifiers {
  readonly shift?: boolean;
  readonly toggle?: boolean;
}

/** The keys of a list in display order, with their positions: built once per listing. */
export interface KeyIndex {
  /** How many keys: known without building the index. */
  readonly size: number;
  readonly keys: readonly string[];
  readonly position: ReadonlyMap<string, number>;
}

export function indexKeys(keys: readonly string[]): KeyIndex {
  const position = new Map<string, number>();
  for (let i = 0; i < keys.length; i++) position.set(keys[i], i);
  return { size: keys.length, keys, position };
}

/** Made on first use: a listing costs nothing here until someone selects in it. */
export function lazyIndexKeys(size: number, makeKeys: () => readonly string[]): KeyIndex {
  let index: KeyIndex | undefined;
  const built = () => (index ??= indexKeys(makeKeys()));
  return {
    size,
    get keys() {
      return built().keys;
    },
    get position() {
      return built().position;
    },
  };
}

function range(list: KeyIndex, from: number, to: number): string[] {
  const start = Math.min(from, to);
  const end = Math.max(from, to);
  return list.keys.slice(start, end + 1);
}

function clamp(list: KeyIndex, index: number): number {
  return Math.max(0, Math.min(list.keys.length - 1, index));
}

/** Alone selects only this item; toggle adds or removes it; Shift selects the range from the anchor. */
export function click(selection: Selection, list: KeyIndex, index: number, modifiers: Modifiers = {}): Selection {
  if (list.keys.length === 0) return selection;
  const key = list.keys[clamp(list, index)];
  if (modifiers.shift) {
    const anchorIndex = selection.anchor === null ? undefined : list.position.get(selection.anchor);
    const from = anchorIndex ?? index;
    const span = range(list, from, index);
    const selected = modifiers.toggle ? new Set([...selection.selected, ...span]) : new Set(span);
    return { selected, anchor: list.keys[from], cursor: key };
  }
  if (modifiers.toggle) {
    const selected = new Set(selection.selected);
    if (selected.has(key)) selected.delete(key);
    else selected.add(key);
    return { selected, anchor: key, cursor: key };
  }
  return { selected: new Set([key]), anchor: key, cursor: key };
}

/** Alone selects only the item at the cursor; Shift extends from the anchor; toggle leaves the selection (Space then toggles). */
export function moveTo(selection: Selection, list: KeyIndex, index: number, modifiers: Modifiers = {}): Selection {
  if (list.keys.length === 0) return selection;
  const target = clamp(list, index);
  if (modifiers.toggle && !modifiers.shift) return { ...selection, cursor: list.keys[target] };
  return click(selection, list, target, { shift: modifiers.shift });
}

/** Space with Ctrl/Cmd: adds or removes the item under the cursor. */
export function toggleCursor(selection: Selection, list: KeyIndex): Selection {
  const index = selection.cursor === null ? undefined : list.position.get(selection.cursor);
  if (index === undefined) return selection;
  return click(selection, list, index, { toggle: true });
}

export function selectAll(selection: Selection, list: KeyIndex): Selection {
  return { ...selection, selected: new Set(list.keys), cursor: selection.cursor ?? list.keys[0] ?? null };
}

/** Escape: nothing selected; the cursor stays where it is. */
export function clearSelection(selection: Selection): Selection {
  if (selection.selected.size === 0) return selection;
  return { ...selection, selected: new Set() };
}

/** Selects exactly these keys (a search result opened in its folder). */
export function selectOnly(list: KeyIndex, keys: readonly string[]): Selection {
  const present = keys.filter((key) => list.position.has(key));
  const last = present.at(-1) ?? null;
  return { selected: new Set(present), anchor: last, cursor: last };
}

/** Forgets keys that are gone; the same object when nothing changed, so React can skip the render. */
export function retain(selection: Selection, list: KeyIndex): Selection {
  let selected: Set<string> | undefined;
  for (const key of selection.selected) {
    if (!list.position.has(key)) {
      selected ??= new Set(selection.selected);
      selected.delete(key);
    }
  }
  const anchor = selection.anchor !== null && !list.position.has(selection.anchor) ? null : selection.anchor;
  const cursor = selection.cursor !== null && !list.position.has(selection.cursor) ? null : selection.cursor;
  if (!selected && anchor === selection.anchor && cursor === selection.cursor) return selection;
  return { selected: selected ?? selection.selected, anchor, cursor };
}

/** The position of the cursor in the list, or -1. */
export function cursorIndex(selection: Selection, list: KeyIndex): number {
  return selection.cursor === null ? -1 : (list.position.get(selection.cursor) ?? -1);
}
