/** One card per shared item, virtualized (an account may share any number); cards differ in height, so each is measured. */
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useId, useRef } from 'react';
import { Link } from 'react-router';
import type { Item } from '../../api/results';
import { useI18n } from '../../i18n';
import { itemKey, parentPath } from '../../lib/items';
import { folderPath } from '../file-browser/breadcrumbs';
import { ItemIcon } from '../file-list/item-icon';
import { Button } from '../ui/button';
import { CopyLinkButtons } from './copy-link-buttons';
import { ShareFacts } from './share-facts';

const ESTIMATED_CARD_HEIGHT = 150;

export function SharesList({
  items,
  label,
  onEdit,
  onStop,
}: {
  readonly items: readonly Item[];
  readonly label: string;
  readonly onEdit: (item: Item) => void;
  readonly onStop: (item: Item) => void;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ESTIMATED_CARD_HEIGHT,
    getItemKey: (index) => itemKey(items[index]),
    overscan: 4,
  });

  return (
    <div
      ref={scrollRef}
      className="min-h-0 flex-1 overflow-auto overscroll-contain rounded-md border border-gray-200 bg-white [scrollbar-gutter:stable] dark:border-gray-800 dark:bg-gray-900"
    >
      <ul aria-label={label} className="relative w-full" style={{ height: virtualizer.getTotalSize() }}>
        {virtualizer.getVirtualItems().map((row) => (
          <li
            key={row.key}
            ref={virtualizer.measureElement}
            data-index={row.index}
            aria-setsize={items.length}
            aria-posinset={row.index + 1}
            className="absolute inset-x-0 top-0"
            style={{ transform: `translateY(${row.start}px)` }}
          >
            <ShareCard item={items[row.index]} onEdit={onEdit} onStop={onStop} />
          </li>
        ))}
      </ul>
    </div>
  );
}

const ShareCard = memo(function ShareCard({
  item,
  onEdit,
  onStop,
}: {
  readonly item: Item;
  readonly onEdit: (item: Item) => void;
  readonly onStop: (item: Item) => void;
}) {
  const { t } = useI18n();
  const nameId = useId();
  const where = item.path ? parentPath(item.path) : undefined;
  // A folder opens; a file is shown selected in its folder.
  const target = item.type === 'folder' ? folderPath(item.id) : folderPath(item.dir);
  const state = item.type === 'folder' ? { name: item.name } : { select: itemKey(item) };

  return (
    <article aria-labelledby={nameId} className="flex gap-3 border-b border-gray-100 p-3 dark:border-gray-800">
      {item.image ? (
        <img
          src={item.image}
          alt={t.sharingCover}
          loading="lazy"
          className="size-14 shrink-0 rounded border border-gray-200 bg-gray-100 object-cover sm:size-16 dark:border-gray-700 dark:bg-gray-800"
        />
      ) : (
        <span className="flex size-14 shrink-0 items-center justify-center rounded bg-gray-50 sm:size-16 dark:bg-gray-800">
          <ItemIcon item={item} />
        </span>
      )}
      <div className="min-w-0 flex-1 space-y-1.5">
        <div>
          <h2 id={nameId} className="flex min-w-0 flex-wrap items-center gap-x-2 text-base font-medium">
            <Link
              to={target}
              state={state}
              className="min-w-0 truncate rounded text-blue-800 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 dark:text-blue-200"
              title={item.name}
            >
              <span className="sr-only">{item.type === 'folder' ? `${t.folderWord}: ` : `${t.fileWord}: `}</span>
              {item.name}
            </Link>
            {item.encrypted && (
              <span className="rounded bg-gray-100 px-1.5 py-0.5 text-xs font-normal text-gray-700 dark:bg-gray-800 dark:text-gray-300">
                {t.encrypted}
              </span>
            )}
          </h2>
          {where !== undefined && (
            <p className="truncate text-xs text-gray-700 dark:text-gray-300" title={where}>
              {where === '/' ? t.sharingPageInRoot : t.inFolder(where)}
            </p>
          )}
        </div>
        <ShareFacts share={item} withLimit />
        {item.description && <p className="line-clamp-2 text-sm break-words whitespace-pre-line text-gray-800 dark:text-gray-200">{item.description}</p>}
        <div className="flex flex-wrap items-center gap-2 pt-0.5">
          <CopyLinkButtons url={item.url ?? ''} code={item.downpwd ?? ''} announce="notice" describedBy={nameId} compactOnPhone />
          <Button icon="pencil" variant="secondary" compact onClick={() => onEdit(item)} aria-describedby={nameId} title={t.sharingEdit}>
            <span className="sr-only md:not-sr-only">{t.sharingEdit}</span>
          </Button>
          <Button icon="shareStop" variant="secondary" compact onClick={() => onStop(item)} aria-describedby={nameId} title={t.sharingStop}>
            <span className="sr-only md:not-sr-only">{t.sharingStop}</span>
          </Button>
        </div>
      </div>
    </article>
  );
});
