/** Selection state over lib/selection.ts; callbacks are stable, so memoized rows do not re-render for them. */
import { useCallback, useMemo, useRef, useState } from 'react';
import type { Item } from '../api/results';
import { itemKey } from '../lib/items';
import {
  EMPTY_SELECTION,
  clearSelection,
  click,
  cursorIndex,
  lazyIndexKeys,
  moveTo,
  retain,
  selectAll,
  selectOnly,
  toggleCursor,
  type KeyIndex,
  type Modifiers,
  type Selection,
} from '../lib/selection';

export interface SelectionControls {
  readonly selection: Selection;
  readonly list: KeyIndex;
  /** Position of the keyboard cursor, -1 for none. */
  readonly cursor: number;
  readonly count: number;
  /** The selected items, in list order. */
  selectedItems(): Item[];
  isSelected(item: Item): boolean;
  click(index: number, modifiers?: Modifiers): void;
  moveTo(index: number, modifiers?: Modifiers): void;
  toggleCursor(): void;
  selectAll(): void;
  clear(): void;
  selectKeys(keys: readonly string[]): void;
}

export function useSelection(items: readonly Item[]): SelectionControls {
  // Indexed on first use: opening a big folder does not pay for keys nobody has selected yet.
  const list = useMemo(() => lazyIndexKeys(items.length, () => items.map(itemKey)), [items]);
  const [raw, setRaw] = useState<Selection>(EMPTY_SELECTION);
  // Keys that left the list (deleted, moved away) leave the selection.
  const selection = useMemo(() => retain(raw, list), [raw, list]);

  const current = useRef({ list, items, selection });
  current.current = { list, items, selection };

  const update = useCallback((change: (selection: Selection, list: KeyIndex) => Selection) => {
    setRaw((previous) => change(retain(previous, current.current.list), current.current.list));
  }, []);

  const controls = useMemo(
    () => ({
      click: (index: number, modifiers?: Modifiers) => update((s, l) => click(s, l, index, modifiers)),
      moveTo: (index: number, modifiers?: Modifiers) => update((s, l) => moveTo(s, l, index, modifiers)),
      toggleCursor: () => update(toggleCursor),
      selectAll: () => update(selectAll),
      clear: () => update(clearSelection),
      selectKeys: (keys: readonly string[]) => update((_s, l) => selectOnly(l, keys)),
      selectedItems: () => {
        const { list: l, items: all, selection: s } = current.current;
        const positions: number[] = [];
        for (const key of s.selected) {
          const position = l.position.get(key);
          if (position !== undefined) positions.push(position);
        }
        return positions.sort((a, b) => a - b).map((position) => all[position]);
      },
      isSelected: (item: Item) => current.current.selection.selected.has(itemKey(item)),
    }),
    [update],
  );

  return { ...controls, selection, list, cursor: cursorIndex(selection, list), count: selection.selected.size };
}
