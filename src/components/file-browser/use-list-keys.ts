/** A file list's keyboard: arrows, Home, End, Page Up/Down (Shift extends, Ctrl moves), Space, Enter, Backspace, Delete, F2, Ctrl+A, Escape. */
import { useCallback, useRef } from 'react';
import type { Item } from '../../api/results';
import { useKeymap, type KeyInfo } from '../../hooks/use-keymap';
import type { SelectionControls } from '../../hooks/use-selection';
import type { FileListLayout } from '../file-list/file-list';

export interface ListCommands {
  readonly open: (item: Item) => void;
  readonly goUp?: () => void;
  readonly remove?: (permanent: boolean) => void;
  readonly rename?: () => void;
}

export function useListKeys(
  items: readonly Item[],
  controls: SelectionControls,
  commands: ListCommands,
  listId: string,
  enabled = true,
): (layout: FileListLayout) => void {
  const layout = useRef<FileListLayout>({ perRow: 1, pageRows: 10 });

  const focusList = () => {
    const list = document.getElementById(listId);
    if (list && document.activeElement !== list) list.focus({ preventScroll: true });
  };
  const moveToIndex = (index: number, keys: KeyInfo) => {
    if (items.length === 0) return false;
    controls.moveTo(index, { shift: keys.shift, toggle: keys.mod });
    focusList();
    return true;
  };
  const moveBy = (delta: number, keys: KeyInfo) => moveToIndex(controls.cursor < 0 ? 0 : controls.cursor + delta, keys);

  useKeymap(
    {
      ArrowDown: (keys) => moveBy(layout.current.perRow, keys),
      ArrowUp: (keys) => moveBy(-layout.current.perRow, keys),
      ArrowRight: (keys) => layout.current.perRow > 1 && moveBy(1, keys),
      ArrowLeft: (keys) => layout.current.perRow > 1 && moveBy(-1, keys),
      Home: (keys) => moveToIndex(0, keys),
      End: (keys) => moveToIndex(items.length - 1, keys),
      PageDown: (keys) => moveBy(layout.current.pageRows * layout.current.perRow, keys),
      PageUp: (keys) => moveBy(-layout.current.pageRows * layout.current.perRow, keys),
      ' ': (keys) => {
        if (controls.cursor < 0) return false;
        if (keys.mod) controls.toggleCursor();
        else controls.click(controls.cursor, { toggle: true });
        return true;
      },
      Enter: () => {
        const item = controls.cursor >= 0 ? items[controls.cursor] : controls.count === 1 ? controls.selectedItems()[0] : undefined;
        if (!item) return false;
        commands.open(item);
        return true;
      },
      Backspace: () => {
        if (!commands.goUp) return false;
        commands.goUp();
        return true;
      },
      Delete: (keys) => {
        if (!commands.remove || controls.count === 0) return false;
        commands.remove(keys.shift);
        return true;
      },
      F2: () => {
        if (!commands.rename || controls.count !== 1) return false;
        commands.rename();
        return true;
      },
      a: (keys) => {
        if (!keys.mod || items.length === 0) return false;
        controls.selectAll();
        focusList();
        return true;
      },
      Escape: () => {
        if (controls.count === 0) return false;
        controls.clear();
        return true;
      },
    },
    enabled,
  );

  return useCallback((next: FileListLayout) => {
    layout.current = next;
  }, []);
}
