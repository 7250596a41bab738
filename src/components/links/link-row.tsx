/** One linked file: columns on wide lists, three lines and icon buttons on phones. */
import { memo } from 'react';
import type { FileItem } from '../../api/results';
import type { Messages } from '../../i18n';
import { formatSize, formatTime } from '../../lib/format';
import { ContainingFolderLink } from '../file-browser/breadcrumbs';
import { ROW_CLASS } from '../file-list/header-cell';
import { ItemIcon } from '../file-list/item-icon';
import { Icon, type IconName } from '../ui/icons';
import { LinkOpenAnchor, iconButtonClass } from './link-open-anchor';

export interface LinkRowLayout {
  /** Three lines instead of columns. */
  readonly narrow: boolean;
  readonly time: boolean;
  readonly rowHeight: number;
}

const LAYOUTS = {
  narrow: { narrow: true, time: false, rowHeight: 80 },
  wide: { narrow: false, time: false, rowHeight: 60 },
  widest: { narrow: false, time: true, rowHeight: 60 },
} as const satisfies Record<string, LinkRowLayout>;

/** The layout for a list this wide (one object per layout, so that memoized rows keep it). */
export function layoutFor(width: number): LinkRowLayout {
  if (width < 760) return LAYOUTS.narrow;
  return width < 1060 ? LAYOUTS.wide : LAYOUTS.widest;
}

export interface LinkRowProps {
  readonly item: FileItem;
  readonly index: number;
  readonly setSize: number;
  readonly top: number;
  readonly layout: LinkRowLayout;
  readonly onCopy: (item: FileItem) => void;
  readonly onRemove: (item: FileItem, index: number) => void;
  readonly t: Messages;
  readonly locale: string;
}

/** The row's buttons are icons (a phone has room for three), named for the file they act on. */
function IconButton({ icon, label, onClick, danger = false }: { readonly icon: IconName; readonly label: string; readonly onClick: () => void; readonly danger?: boolean }) {
  return (
    <button
      type="button"
      title={label}
      aria-label={label}
      onClick={onClick}
      className={`${iconButtonClass} ${danger ? 'text-red-700 dark:text-red-300' : 'text-gray-900 dark:text-gray-100'}`}
    >
      <Icon name={icon} className="size-4" />
    </button>
  );
}

export const LinkRow = memo(function LinkRow({ item, index, setSize, top, layout, onCopy, onRemove, t, locale }: LinkRowProps) {
  const url = item.url ?? '';
  const hits = t.linksHits(item.hits ?? 0);
  const size = formatSize(item.size, locale);
  const folder = (
    <ContainingFolderLink
      item={item}
      titled
      className="truncate rounded text-blue-800 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-blue-200"
    />
  );

  return (
    <li
      aria-setsize={setSize}
      aria-posinset={index + 1}
      data-index={index}
      style={{ top, height: layout.rowHeight }}
      className={`${ROW_CLASS} hover:bg-gray-50 dark:hover:bg-gray-800/60`}
    >
      <ItemIcon item={item} />
      <div className="min-w-0 flex-1">
        <p className="truncate font-medium" title={item.name}>
          {item.name}
        </p>
        <p className="truncate font-mono text-xs text-gray-600 dark:text-gray-400" title={url}>
          <span className="sr-only">{t.linksColLink}: </span>
          {url}
        </p>
        {layout.narrow && (
          <p className="flex min-w-0 gap-x-2 text-xs whitespace-nowrap text-gray-600 dark:text-gray-400">
            <span className="shrink-0">{size}</span>
            <span className="shrink-0">{hits}</span>
            <span className="flex min-w-0">{folder}</span>
          </p>
        )}
      </div>
      {!layout.narrow && (
        <>
          <span className="flex w-48 shrink-0 text-gray-700 dark:text-gray-300">{folder}</span>
          <span className="w-20 shrink-0 text-right text-gray-700 tabular-nums dark:text-gray-300">{size}</span>
          {layout.time && <span className="w-44 shrink-0 truncate text-gray-700 dark:text-gray-300">{formatTime(item.time, locale)}</span>}
          <span className="w-28 shrink-0 text-right text-gray-700 tabular-nums dark:text-gray-300">{hits}</span>
        </>
      )}
      <div className="flex w-[6.25rem] shrink-0 items-center justify-end gap-1">
        <IconButton icon="copyText" label={t.linksCopyFor(item.name)} onClick={() => onCopy(item)} />
        <LinkOpenAnchor url={url} label={t.linksOpen} name={t.linksOpenFor(item.name)} iconOnly />
        <IconButton icon="directUnlink" label={t.linksRemoveFor(item.name)} danger onClick={() => onRemove(item, index)} />
      </div>
    </li>
  );
});
