// A virtualized listbox (list or grid), so 100,000 items scroll like 100. Rows are memoized with plain props and pointer events handled once,
// on the list, from the row's data-index, so a click re-renders only the rows whose state changed.
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useEffect, useId, useRef, useState, type DragEvent, type FocusEvent, type MouseEvent, type PointerEvent } from 'react';
import type { Sort, SortKey } from '../../api/files';
import type { FolderItem, Item } from '../../api/results';
import type { SelectionControls } from '../../hooks/use-selection';
import type { ViewMode } from '../../hooks/use-view-mode';
import { useI18n, type Messages } from '../../i18n';
import { formatSize } from '../../lib/format';
import { itemKey } from '../../lib/items';
import type { RowDrops } from '../file-browser/drop-move';
import { Icon } from '../ui/icons';
import { COLUMNS, underName, type ColumnId } from './columns';
import { HeaderBar, HeaderCell, ListFrame, ROW_CLASS } from './header-cell';
import { useElementSize } from './use-element-size';
import { ItemBadges, ItemIcon } from './item-icon';
import { draggedRows, endRowDrag, onRowDragEnd, startRowDrag } from './row-drag';
import { Thumbnail, useThumbnailPrefix, wantsThumbnail } from './thumbnail';

const LIST_ROW_HEIGHT = 52;
const GRID_ROW_HEIGHT = 160;
const GRID_MIN_CARD_WIDTH = 148;

/** How the list is laid out now, for the keyboard: items per row (grid) and rows per screen. */
export interface FileListLayout {
  readonly perRow: number;
  readonly pageRows: number;
}

export interface FileListProps {
  readonly items: readonly Item[];
  /** The total when more items are still arriving: the list has their height at once, and unread rows are placeholders. */
  readonly total?: number;
  readonly controls: SelectionControls;
  readonly view: ViewMode;
  /** The columns after the name (list view); keep the array stable. */
  readonly columns: readonly ColumnId[];
  readonly sort?: Sort;
  readonly onSort?: (order: SortKey) => void;
  /** The accessible name of the list: "Contents of Photos". */
  readonly label: string;
  /** Double-click, Enter, or a tap on a phone. */
  readonly onOpen: (item: Item) => void;
  /** A right-click on an item (which is selected first): open the actions menu there. */
  readonly onContextMenu?: (x: number, y: number) => void;
  readonly onDropOnFolder?: (folder: FolderItem, data: DataTransfer) => void;
  readonly onDropOnList?: (data: DataTransfer) => void;
  /** Rows can be dragged onto folder rows and tiles, to be moved there (file-browser/drop-move.ts). */
  readonly rowDrops?: RowDrops;
  readonly onLayout?: (layout: FileListLayout) => void;
  readonly id?: string;
}

function indexFrom(target: EventTarget | null): number {
  const element = target instanceof Element ? target.closest<HTMLElement>('[data-index]') : null;
  return element ? Number(element.dataset.index) : -1;
}

const hasFiles = (event: DragEvent) => event.dataTransfer.types.includes('Files');

export function FileList({
  items,
  total = items.length,
  controls,
  view,
  columns,
  sort,
  onSort,
  label,
  onOpen,
  onContextMenu,
  onDropOnFolder,
  onDropOnList,
  rowDrops,
  onLayout,
  id,
}: FileListProps) {
  const { t, language } = useI18n();
  const generatedId = useId();
  const listId = id ?? generatedId;
  const scrollRef = useRef<HTMLDivElement>(null);
  // The row under a drag (-1: the list itself), and whether a drop there is refused (a folder onto itself).
  const [dropIndex, setDropIndex] = useState<number | null>(null);
  const [dropRefused, setDropRefused] = useState(false);
  const dragLabel = useRef<HTMLDivElement>(null);
  useEffect(() => onRowDragEnd(() => setDropIndex(null)), []);
  const pointerType = useRef('mouse');

  const box = useElementSize(scrollRef);

  const grid = view === 'grid';
  const perRow = grid ? Math.max(2, Math.floor((box.width - 16) / GRID_MIN_CARD_WIDTH)) : 1;
  const rowHeight = grid ? GRID_ROW_HEIGHT : LIST_ROW_HEIGHT;
  const setSize = Math.max(total, items.length);
  const rowCount = Math.ceil(setSize / perRow);

  const virtualizer = useVirtualizer({
    count: rowCount,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    // About a screen's third beyond each edge: each grid row overscanned mounts a row of thumbnails to load and decode.
    overscan: grid ? 2 : 6,
    paddingStart: grid ? 8 : 0,
    paddingEnd: grid ? 8 : 0,
  });

  useEffect(() => {
    virtualizer.measure();
  }, [virtualizer, rowHeight, perRow]);

  const pageRows = Math.max(1, Math.floor(box.height / rowHeight));
  useEffect(() => {
    onLayout?.({ perRow, pageRows });
  }, [onLayout, perRow, pageRows]);

  // The keyboard moves the cursor; the list follows it.
  const cursor = controls.cursor;
  useEffect(() => {
    if (cursor >= 0) virtualizer.scrollToIndex(Math.floor(cursor / perRow), { align: 'auto' });
  }, [virtualizer, cursor, perRow]);

  const virtualRows = virtualizer.getVirtualItems();
  // Rows are keyed by their slot on screen, so scrolling reuses elements; slots only grow, so rows staying on screen keep theirs.
  const slotCount = useRef(0);
  slotCount.current = Math.max(slotCount.current, virtualRows.length);
  const slots = slotCount.current;
  const cursorRow = cursor >= 0 ? Math.floor(cursor / perRow) : -1;
  const cursorRendered = cursorRow >= 0 && virtualRows.some((row) => row.index === cursorRow);
  const selected = controls.selection.selected;
  // Asked once a row on screen wants a thumbnail.
  const thumbnailPrefix = useThumbnailPrefix(virtualRows.some((row) => items.slice(row.index * perRow, (row.index + 1) * perRow).some(wantsThumbnail)));

  const onPointerDown = (event: PointerEvent) => {
    pointerType.current = event.pointerType;
  };

  const onClick = (event: MouseEvent<HTMLDivElement>) => {
    const index = indexFrom(event.target);
    const toggle = event.ctrlKey || event.metaKey;
    if (index < 0) {
      if (!toggle && !event.shiftKey) controls.clear();
      return;
    }
    const onCheck = event.target instanceof Element && event.target.closest('[data-check]') !== null;
    if (pointerType.current === 'touch' && !toggle && !event.shiftKey) {
      // Phones: a tap opens; a tap on the check box adds or removes the item (a long press opens the menu).
      if (onCheck) controls.click(index, { toggle: true });
      else onOpen(items[index]);
      return;
    }
    controls.click(index, { shift: event.shiftKey, toggle: toggle || onCheck });
  };

  const onDoubleClick = (event: MouseEvent<HTMLDivElement>) => {
    const index = indexFrom(event.target);
    if (index < 0 || (event.target instanceof Element && event.target.closest('[data-check]'))) return;
    onOpen(items[index]);
  };

  const onRightClick = (event: MouseEvent<HTMLDivElement>) => {
    if (!onContextMenu) return;
    const index = indexFrom(event.target);
    if (index < 0) return;
    event.preventDefault();
    if (!selected.has(itemKey(items[index]))) controls.click(index);
    onContextMenu(event.clientX, event.clientY);
  };

  const dropTargetOf = (event: DragEvent): number => {
    const index = indexFrom(event.target);
    return index >= 0 && items[index].type === 'folder' && onDropOnFolder ? index : -1;
  };
  const onDragStart = (event: DragEvent<HTMLDivElement>) => {
    const index = indexFrom(event.target);
    if (!rowDrops || index < 0) return event.preventDefault();
    // The selection, or the dragged row alone when it is not selected.
    const dragged = selected.has(itemKey(items[index])) ? controls.selectedItems() : [items[index]];
    startRowDrag(event.dataTransfer, dragged);
    if (dragged.length > 1 && dragLabel.current) {
      dragLabel.current.textContent = t.dragCount(dragged.length);
      event.dataTransfer.setDragImage(dragLabel.current, 12, 12);
    }
  };
  // A row drag: the folder under it is a target unless the move dialog would refuse (refused targets show so, and say why on drop).
  const rowTarget = (event: DragEvent) => {
    const rows = draggedRows(event);
    const index = rows && rowDrops ? indexFrom(event.target) : -1;
    const folder = index >= 0 && items[index].type === 'folder' ? rowDrops?.inside(items[index]) : undefined;
    const refusal = folder && rows ? rowDrops?.refusal(folder, rows) : undefined;
    return { rows, index, folder: refusal === 'alreadyThere' ? undefined : folder, refused: refusal === 'intoItself' };
  };
  const acceptsDrops = Boolean(onDropOnFolder || onDropOnList);
  const onDragOver = (event: DragEvent<HTMLDivElement>) => {
    const row = rowTarget(event);
    if (row.rows) {
      if (!row.folder) return setDropIndex(null);
      event.preventDefault();
      event.dataTransfer.dropEffect = 'move';
      setDropIndex(row.index);
      setDropRefused(row.refused);
      return;
    }
    if (!acceptsDrops || !hasFiles(event)) return;
    const target = dropTargetOf(event);
    if (target < 0 && !onDropOnList) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
    setDropIndex(target);
    setDropRefused(false);
  };
  const onDragLeave = (event: DragEvent<HTMLDivElement>) => {
    if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDropIndex(null);
  };
  const onDrop = (event: DragEvent<HTMLDivElement>) => {
    setDropIndex(null);
    const row = rowTarget(event);
    if (row.rows) {
      endRowDrag();
      if (!row.folder) return;
      event.preventDefault();
      rowDrops?.drop(row.folder, row.rows);
      return;
    }
    if (!acceptsDrops || !hasFiles(event)) return;
    const target = dropTargetOf(event);
    // A drop the list does not take keeps its default, so that the page's drop zone takes it (issue 22).
    if (target < 0 && !onDropOnList) return;
    event.preventDefault();
    if (target >= 0) onDropOnFolder?.(items[target] as FolderItem, event.dataTransfer);
    else onDropOnList?.(event.dataTransfer);
  };

  const onFocus = (event: FocusEvent<HTMLDivElement>) => {
    // Tabbing in puts the cursor on the first item in view without selecting it (a click says where the cursor goes).
    if (cursor >= 0 || items.length === 0 || event.target !== event.currentTarget || !event.currentTarget.matches(':focus-visible')) return;
    const firstInView = virtualRows.find((row) => row.end > (scrollRef.current?.scrollTop ?? 0));
    controls.moveTo((firstInView?.index ?? 0) * perRow, { toggle: true });
  };

  const dropTone = (index: number): DropTone => (index === dropIndex ? (dropRefused ? 'refuse' : 'accept') : null);

  return (
    <ListFrame header={!grid && <ListHeader columns={columns} sort={sort} onSort={onSort} t={t} />}>
      <div
        ref={scrollRef}
        id={listId}
        role="listbox"
        aria-label={label}
        aria-multiselectable="true"
        aria-busy={setSize > items.length || undefined}
        tabIndex={0}
        aria-activedescendant={cursorRendered ? `${listId}-${cursor}` : undefined}
        onPointerDown={onPointerDown}
        onClick={onClick}
        onDoubleClick={onDoubleClick}
        onContextMenu={onRightClick}
        onDragStart={onDragStart}
        onDragEnd={() => endRowDrag()}
        onDragOver={onDragOver}
        onDragLeave={onDragLeave}
        onDrop={onDrop}
        onFocus={onFocus}
        className={`group relative min-h-0 flex-1 overflow-auto overscroll-contain outline-none select-none [scrollbar-gutter:stable] focus-visible:ring-2 focus-visible:ring-blue-600 focus-visible:ring-inset ${
          dropIndex === -1 ? 'bg-blue-50 ring-2 ring-blue-500 ring-inset dark:bg-blue-950' : ''
        }`}
      >
        <div role="none" style={{ height: virtualizer.getTotalSize(), position: 'relative', width: '100%' }}>
          {grid
            ? virtualRows.map((row) => {
                const start = row.index * perRow;
                const cards: Item[] = items.slice(start, start + perRow);
                const waiting = Math.min(perRow, setSize - start) - cards.length;
                return (
                  <div
                    key={row.index % slots}
                    role="none"
                    className="absolute inset-x-0 grid gap-2 px-2"
                    style={{ top: row.start, height: rowHeight - 8, gridTemplateColumns: `repeat(${perRow}, minmax(0, 1fr))` }}
                  >
                    {cards.map((item, offset) => {
                      const index = start + offset;
                      return (
                        <GridCard
                          key={offset}
                          item={item}
                          index={index}
                          id={`${listId}-${index}`}
                          setSize={setSize}
                          selected={selected.has(itemKey(item))}
                          active={index === cursor}
                          dropTarget={dropTone(index)}
                          draggable={rowDrops !== undefined}
                          thumbnailPrefix={thumbnailPrefix}
                          t={t}
                          locale={language}
                        />
                      );
                    })}
                    {waiting > 0 && Array.from({ length: waiting }, (_, offset) => <PlaceholderCard key={`waiting-${offset}`} />)}
                  </div>
                );
              })
            : virtualRows.map((row) => {
                const item = items[row.index];
                if (item === undefined) return <PlaceholderRow key={row.index % slots} top={row.start} />;
                return (
                  <ListRow
                    key={row.index % slots}
                    item={item}
                    index={row.index}
                    id={`${listId}-${row.index}`}
                    top={row.start}
                    setSize={setSize}
                    selected={selected.has(itemKey(item))}
                    active={row.index === cursor}
                    dropTarget={dropTone(row.index)}
                    draggable={rowDrops !== undefined}
                    thumbnailPrefix={thumbnailPrefix}
                    columns={columns}
                    t={t}
                    locale={language}
                  />
                );
              })}
        </div>
      </div>
      {/* The drag image of several rows: "3 items". Off screen; the browser draws it when the drag starts. */}
      <div ref={dragLabel} aria-hidden="true" className="fixed -top-96 left-0 rounded-md bg-blue-600 px-3 py-1.5 text-sm font-medium text-white" />
    </ListFrame>
  );
}

function ListHeader({
  columns,
  sort,
  onSort,
  t,
}: {
  readonly columns: readonly ColumnId[];
  readonly sort?: Sort;
  readonly onSort?: (order: SortKey) => void;
  readonly t: Messages;
}) {
  return (
    <HeaderBar>
      <span className="w-5 shrink-0" />
      <span className="w-6 shrink-0" />
      <HeaderCell className="min-w-0 flex-1" label={t.colName} sortKey="name" sort={sort} onSort={onSort} t={t} />
      {columns.map((column) => (
        <HeaderCell
          key={column}
          className={`shrink-0 ${COLUMNS[column].className}`}
          label={COLUMNS[column].title(t)}
          sortKey={COLUMNS[column].sort}
          sort={sort}
          onSort={onSort}
          t={t}
          alignEnd={column === 'size'}
        />
      ))}
    </HeaderBar>
  );
}

interface RowProps {
  readonly item: Item;
  readonly index: number;
  readonly id: string;
  readonly setSize: number;
  readonly selected: boolean;
  readonly active: boolean;
  readonly dropTarget: DropTone;
  readonly draggable: boolean;
  readonly thumbnailPrefix: string | undefined;
  readonly t: Messages;
  readonly locale: string;
}

function CheckMark({ selected }: { readonly selected: boolean }) {
  return (
    <span
      data-check=""
      aria-hidden="true"
      className={`flex size-5 shrink-0 items-center justify-center rounded border ${
        selected ? 'border-blue-600 bg-blue-600 text-white dark:border-blue-400 dark:bg-blue-400 dark:text-gray-950' : 'border-gray-400 dark:border-gray-500'
      }`}
    >
      {selected && <Icon name="check" className="size-3.5" strokeWidth={3} />}
    </span>
  );
}

type DropTone = 'accept' | 'refuse' | null;

/** What list rows and grid cards share: the option's state, and where a drag finds it. */
const optionAttributes = ({ id, index, setSize, selected, dropTarget, draggable }: RowProps) =>
  ({
    id,
    role: 'option',
    'aria-selected': selected,
    'aria-setsize': setSize,
    'aria-posinset': index + 1,
    'data-index': index,
    'data-drop': dropTarget ?? undefined,
    draggable: draggable || undefined,
  }) as const;

/** The name, said as a folder's to screen readers. */
const NameText = ({ item, t }: { readonly item: Item; readonly t: Messages }) => (
  <>
    <span className="sr-only">{item.type === 'folder' ? `${t.folderWord}: ` : ''}</span>
    {item.name}
  </>
);

function rowTone(selected: boolean, active: boolean, dropTarget: DropTone): string {
  const tone =
    dropTarget === 'accept'
      ? 'bg-blue-100 ring-2 ring-blue-500 ring-inset dark:bg-blue-900'
      : dropTarget === 'refuse'
        ? 'bg-red-50 ring-2 ring-red-500 ring-inset dark:bg-red-950'
        : selected
          ? 'bg-blue-100 dark:bg-blue-950'
          : 'hover:bg-gray-100 dark:hover:bg-gray-800';
  const cursor = active ? 'group-focus-visible:outline-2 group-focus-visible:-outline-offset-2 group-focus-visible:outline-blue-600' : '';
  return `${tone} ${cursor}`;
}

const ListRow = memo(function ListRow(props: RowProps & { readonly top: number; readonly columns: readonly ColumnId[] }) {
  const { item, top, selected, active, dropTarget, thumbnailPrefix, columns, t, locale } = props;
  const summary = underName(item, columns, t, locale);
  return (
    <div
      {...optionAttributes(props)}
      style={{ top, height: LIST_ROW_HEIGHT, contain: 'strict' }}
      className={`${ROW_CLASS} cursor-default ${rowTone(selected, active, dropTarget)}`}
    >
      <CheckMark selected={selected} />
      <Thumbnail item={item} prefix={thumbnailPrefix}>
        <ItemIcon item={item} />
      </Thumbnail>
      <span className="min-w-0 flex-1">
        <span className="flex min-w-0 items-center">
          <span className="truncate font-medium" title={item.name}>
            <NameText item={item} t={t} />
          </span>
          <ItemBadges item={item} t={t} />
        </span>
        {summary.length > 0 && (
          <span className="flex min-w-0 gap-x-2 overflow-hidden text-xs whitespace-nowrap text-gray-600 dark:text-gray-400">
            {summary.map((part, position) => (
              <span key={position} className={part.className}>
                {part.text}
              </span>
            ))}
          </span>
        )}
      </span>
      {columns.map((column) => (
        <span key={column} className={`shrink-0 truncate text-gray-700 dark:text-gray-300 ${COLUMNS[column].className}`}>
          {COLUMNS[column].value(item, t, locale)}
        </span>
      ))}
    </div>
  );
});

/** Where an item that has not arrived yet will be: grey, hidden from assistive technology. */
function PlaceholderRow({ top }: { readonly top: number }) {
  return (
    <div
      role="none"
      aria-hidden="true"
      style={{ top, height: LIST_ROW_HEIGHT, contain: 'strict' }}
      className="absolute inset-x-0 flex items-center gap-3 border-b border-gray-100 px-3 dark:border-gray-800"
    >
      <span className="size-5 shrink-0" />
      <span className="size-6 shrink-0 rounded bg-gray-200 dark:bg-gray-700" />
      <span className="h-3 w-1/3 rounded bg-gray-200 dark:bg-gray-700" />
    </div>
  );
}

function PlaceholderCard() {
  return <div role="none" aria-hidden="true" className="rounded-lg border border-gray-200 bg-gray-100 dark:border-gray-800 dark:bg-gray-800" />;
}

const GridCard = memo(function GridCard(props: RowProps) {
  const { item, selected, active, dropTarget, thumbnailPrefix, t, locale } = props;
  return (
    <div
      {...optionAttributes(props)}
      className={`relative flex min-w-0 cursor-default flex-col items-center justify-center gap-1 rounded-lg border border-gray-200 p-2 text-center text-sm dark:border-gray-800 ${rowTone(selected, active, dropTarget)}`}
    >
      <span className="absolute top-2 left-2">
        <CheckMark selected={selected} />
      </span>
      <Thumbnail item={item} prefix={thumbnailPrefix} large>
        <ItemIcon item={item} large />
      </Thumbnail>
      <span className="line-clamp-2 w-full font-medium break-words" title={item.name}>
        <NameText item={item} t={t} />
      </span>
      <span className="text-xs text-gray-600 dark:text-gray-400">{formatSize(item.size, locale)}</span>
    </div>
  );
});
