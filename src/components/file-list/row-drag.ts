// An internal drag of list rows (drag-and-drop move): a dataTransfer type of its own, never 'Files', so the upload drop zones
// stand aside. The items stay in this module: only the page they were dragged from can move them.
import type { DragEvent } from 'react';
import type { Item } from '../../api/results';
import { itemKey } from '../../lib/items';

export const ROW_DRAG_TYPE = 'application/x-fss-items';

let dragged: readonly Item[] | null = null;
const cancelListeners = new Set<() => void>();

function onKeyDown(event: KeyboardEvent) {
  if (event.key === 'Escape') endRowDrag(true);
}

export function startRowDrag(dataTransfer: DataTransfer, items: readonly Item[]): void {
  dragged = items;
  dataTransfer.effectAllowed = 'move';
  dataTransfer.setData(ROW_DRAG_TYPE, items.map(itemKey).join(' '));
  // The browser cancels a drag on Escape itself; this covers the key reaching the page, and clears the drop targets at once.
  window.addEventListener('keydown', onKeyDown, true);
}

/** The drag is over: dropped, ended, or cancelled (then the drop targets are told, to stop showing). */
export function endRowDrag(cancelled = false): void {
  dragged = null;
  window.removeEventListener('keydown', onKeyDown, true);
  if (cancelled) for (const listener of [...cancelListeners]) listener();
}

/** The rows a drag event carries, when it is a row drag of this page that was not cancelled; else null. */
export function draggedRows(event: DragEvent): readonly Item[] | null {
  return event.dataTransfer.types.includes(ROW_DRAG_TYPE) ? dragged : null;
}

export function onRowDragCancel(listener: () => void): () => void {
  cancelListeners.add(listener);
  return () => void cancelListeners.delete(listener);
}
