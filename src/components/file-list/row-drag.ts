// An internal drag of list rows (drag-and-drop move): a dataTransfer type of its own, never 'Files', so the upload drop zones
// stand aside. The items stay in this module: only the page they were dragged from can move them.
import type { DragEvent } from 'react';
import type { Item } from '../../api/results';
import { itemKey } from '../../lib/items';

export const ROW_DRAG_TYPE = 'application/x-fss-items';

let dragged: readonly Item[] | null = null;
const endListeners = new Set<() => void>();

export function startRowDrag(dataTransfer: DataTransfer, items: readonly Item[]): void {
  dragged = items;
  dataTransfer.effectAllowed = 'move';
  dataTransfer.setData(ROW_DRAG_TYPE, items.map(itemKey).join(' '));
}

/** The drag is over: dropped, or cancelled (Escape: the browser ends the drag); the drop targets stop showing. */
export function endRowDrag(): void {
  dragged = null;
  for (const listener of [...endListeners]) listener();
}

/** The rows a drag event carries, when it is a row drag of this page; else null. */
export function draggedRows(event: DragEvent): readonly Item[] | null {
  return event.dataTransfer.types.includes(ROW_DRAG_TYPE) ? dragged : null;
}

export function onRowDragEnd(listener: () => void): () => void {
  endListeners.add(listener);
  return () => void endListeners.delete(listener);
}
