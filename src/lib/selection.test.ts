import { describe, expect, it } from 'vitest';
import {
  EMPTY_SELECTION,
  clearSelection,
  click,
  cursorIndex,
  indexKeys,
  moveTo,
  retain,
  selectAll,
  selectOnly,
  toggleCursor,
  type Selection,
} from './selection';

const list = indexKeys(['d1', 'd2', 'f1', 'f2', 'f3', 'f4']);
const selectedOf = (selection: Selection) => [...selection.selected].sort();

describe('the selection model', () => {
  it('a plain click selects the clicked item alone and makes it the anchor and the cursor', () => {
    let selection = click(EMPTY_SELECTION, list, 2);
    selection = click(selection, list, 4);
    expect(selectedOf(selection)).toEqual(['f3']);
    expect(selection.anchor).toBe('f3');
    expect(selection.cursor).toBe('f3');
  });

  it('Shift-click selects the range from the anchor, in either direction, replacing the selection', () => {
    let selection = click(EMPTY_SELECTION, list, 1);
    selection = click(selection, list, 4, { shift: true });
    expect(selectedOf(selection)).toEqual(['d2', 'f1', 'f2', 'f3']);
    expect(selection.anchor).toBe('d2');
    // Another Shift-click re-spans from the same anchor, upwards this time.
    selection = click(selection, list, 0, { shift: true });
    expect(selectedOf(selection)).toEqual(['d1', 'd2']);
    expect(selection.cursor).toBe('d1');
  });

  it('Shift-click without an anchor selects just the clicked item', () => {
    const selection = click(EMPTY_SELECTION, list, 3, { shift: true });
    expect(selectedOf(selection)).toEqual(['f2']);
  });

  it('Ctrl/Cmd-click adds and removes single items and moves the anchor', () => {
    let selection = click(EMPTY_SELECTION, list, 0);
    selection = click(selection, list, 2, { toggle: true });
    selection = click(selection, list, 5, { toggle: true });
    expect(selectedOf(selection)).toEqual(['d1', 'f1', 'f4']);
    selection = click(selection, list, 2, { toggle: true });
    expect(selectedOf(selection)).toEqual(['d1', 'f4']);
    expect(selection.anchor).toBe('f1');
  });

  it('Ctrl+Shift-click adds the range to what is selected', () => {
    let selection = click(EMPTY_SELECTION, list, 0);
    selection = click(selection, list, 3, { toggle: true });
    selection = click(selection, list, 5, { toggle: true, shift: true });
    expect(selectedOf(selection)).toEqual(['d1', 'f2', 'f3', 'f4']);
  });

  it('select all selects every item and keeps the cursor', () => {
    let selection = click(EMPTY_SELECTION, list, 3);
    selection = selectAll(selection, list);
    expect(selection.selected.size).toBe(6);
    expect(selection.cursor).toBe('f2');
    expect(selectAll(EMPTY_SELECTION, list).cursor).toBe('d1');
  });

  it('Escape clears the selection and keeps the cursor', () => {
    const selection = clearSelection(click(EMPTY_SELECTION, list, 3));
    expect(selection.selected.size).toBe(0);
    expect(selection.cursor).toBe('f2');
  });

  it('arrows move the selection, Shift+arrows extend it, Ctrl+arrows move only the cursor and Ctrl+Space toggles', () => {
    let selection = moveTo(EMPTY_SELECTION, list, 1);
    expect(selectedOf(selection)).toEqual(['d2']);
    selection = moveTo(selection, list, 3, { shift: true });
    expect(selectedOf(selection)).toEqual(['d2', 'f1', 'f2']);
    selection = moveTo(selection, list, 5, { toggle: true });
    expect(selectedOf(selection)).toEqual(['d2', 'f1', 'f2']);
    expect(selection.cursor).toBe('f4');
    selection = toggleCursor(selection, list);
    expect(selectedOf(selection)).toEqual(['d2', 'f1', 'f2', 'f4']);
  });

  it('moving past either end stays on the first or the last item', () => {
    expect(moveTo(EMPTY_SELECTION, list, -5).cursor).toBe('d1');
    expect(moveTo(EMPTY_SELECTION, list, 99).cursor).toBe('f4');
    expect(cursorIndex(moveTo(EMPTY_SELECTION, list, 99), list)).toBe(5);
  });

  it('after the list changes, keys that are gone leave the selection; an unchanged selection stays the same object', () => {
    const selection = click(click(EMPTY_SELECTION, list, 1), list, 3, { toggle: true });
    expect(retain(selection, list)).toBe(selection);
    const shorter = indexKeys(['d1', 'f1', 'f2']);
    const kept = retain(selection, shorter);
    expect(selectedOf(kept)).toEqual(['f2']);
    expect(kept.cursor).toBe('f2');
    expect(retain(click(EMPTY_SELECTION, list, 1), shorter).cursor).toBeNull();
  });

  it('selectOnly selects the given keys that exist and puts the cursor on the last', () => {
    const selection = selectOnly(list, ['f9', 'f3']);
    expect(selectedOf(selection)).toEqual(['f3']);
    expect(selection.cursor).toBe('f3');
  });

  it('handles 100,000 items: select all and a Shift range over all of them', () => {
    const big = indexKeys(Array.from({ length: 100_000 }, (_, i) => `f${i}`));
    const started = performance.now();
    const all = selectAll(EMPTY_SELECTION, big);
    const ranged = click(click(EMPTY_SELECTION, big, 0), big, 99_999, { shift: true });
    expect(all.selected.size).toBe(100_000);
    expect(ranged.selected.size).toBe(100_000);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
