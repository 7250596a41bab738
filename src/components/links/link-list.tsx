/** A virtualized plain list, not a listbox: rows hold buttons, which options may not. The focused row stays rendered, so Tab never loses its place. */
import { defaultRangeExtractor, useVirtualizer, type Range } from '@tanstack/react-virtual';
import { useCallback, useEffect, useRef, useState, type FocusEvent } from 'react';
import type { Sort, SortKey } from '../../api/files';
import type { FileItem } from '../../api/results';
import { useI18n, type Messages } from '../../i18n';
import { HeaderBar, HeaderCell, ListFrame } from '../file-list/header-cell';
import { useElementSize } from '../file-list/use-element-size';
import { LinkRow, layoutFor, type LinkRowLayout } from './link-row';

export interface LinkListProps {
  readonly items: readonly FileItem[];
  readonly sort: Sort;
  readonly onSort: (order: SortKey) => void;
  readonly onCopy: (item: FileItem) => void;
  readonly onRemove: (item: FileItem, index: number) => void;
  /** After a removal: the row to put focus in once the list has changed (the next one takes its place). */
  readonly focusIndex?: number | null;
  readonly onFocusPlaced?: () => void;
}

function indexFrom(target: EventTarget | null): number | null {
  const element = target instanceof Element ? target.closest<HTMLElement>('[data-index]') : null;
  return element ? Number(element.dataset.index) : null;
}

export function LinkList({ items, sort, onSort, onCopy, onRemove, focusIndex = null, onFocusPlaced }: LinkListProps) {
  const { t, language } = useI18n();
  const scrollRef = useRef<HTMLDivElement>(null);
  const [focused, setFocused] = useState<number | null>(null);

  const layout = layoutFor(useElementSize(scrollRef).width);
  const rangeExtractor = useCallback(
    (range: Range) => {
      const indexes = defaultRangeExtractor(range);
      if (focused === null || focused >= range.count || indexes.includes(focused)) return indexes;
      return [...indexes, focused].sort((a, b) => a - b);
    },
    [focused],
  );
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => layout.rowHeight,
    overscan: 6,
    rangeExtractor,
  });
  useEffect(() => {
    virtualizer.measure();
  }, [virtualizer, layout.rowHeight]);

  // Focus after a removal: the row that took the removed one's place, else the one before.
  useEffect(() => {
    if (focusIndex === null) return;
    if (items.length > 0) {
      const index = Math.min(focusIndex, items.length - 1);
      virtualizer.scrollToIndex(index, { align: 'auto' });
      requestAnimationFrame(() => scrollRef.current?.querySelector<HTMLElement>(`[data-index="${index}"] button`)?.focus());
    }
    onFocusPlaced?.();
  }, [focusIndex, items, virtualizer, onFocusPlaced]);

  const onFocus = (event: FocusEvent<HTMLUListElement>) => setFocused(indexFrom(event.target));
  const onBlur = (event: FocusEvent<HTMLUListElement>) => {
    if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setFocused(null);
  };

  return (
    <ListFrame header={!layout.narrow && <ListHeader layout={layout} sort={sort} onSort={onSort} t={t} />}>
      <div ref={scrollRef} className="relative min-h-0 flex-1 overflow-auto overscroll-contain [scrollbar-gutter:stable]">
        <ul
          aria-label={t.linksListLabel}
          onFocus={onFocus}
          onBlur={onBlur}
          style={{ height: virtualizer.getTotalSize(), position: 'relative', width: '100%' }}
        >
          {virtualizer.getVirtualItems().map((row) => {
            const item = items[row.index];
            return (
              <LinkRow
                key={item.id}
                item={item}
                index={row.index}
                setSize={items.length}
                top={row.start}
                layout={layout}
                onCopy={onCopy}
                onRemove={onRemove}
                t={t}
                locale={language}
              />
            );
          })}
        </ul>
      </div>
    </ListFrame>
  );
}

function ListHeader({
  layout,
  sort,
  onSort,
  t,
}: {
  readonly layout: LinkRowLayout;
  readonly sort: Sort;
  readonly onSort: (order: SortKey) => void;
  readonly t: Messages;
}) {
  return (
    <HeaderBar>
      <span className="w-6 shrink-0" />
      <HeaderCell className="flex min-w-0 flex-1" label={t.colName} sortKey="name" sort={sort} onSort={onSort} t={t} />
      <span className="w-48 shrink-0 py-1">{t.colLocation}</span>
      <HeaderCell className="flex w-20 shrink-0 justify-end" label={t.colSize} sortKey="size" sort={sort} onSort={onSort} t={t} />
      {layout.time && <HeaderCell className="flex w-44 shrink-0" label={t.colModified} sortKey="time" sort={sort} onSort={onSort} t={t} />}
      <span className="w-28 shrink-0 py-1 text-right">{t.linksColDownloads}</span>
      <span className="w-[6.25rem] shrink-0" />
    </HeaderBar>
  );
}
