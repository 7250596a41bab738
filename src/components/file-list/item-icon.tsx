import { memo } from 'react';
import type { Item } from '../../api/results';
import type { Messages } from '../../i18n';
import { fileType, type FileType } from '../../lib/file-types';

const FILE_OUTLINE = 'M6 2.75h8.25L19.25 7.75v13.5H6z M14 2.75V8h5.25';

const typeStyle: Readonly<Record<FileType, { readonly color: string; readonly mark?: string; readonly label?: string }>> = {
  image: { color: 'text-emerald-600 dark:text-emerald-400', mark: 'M8.5 18l3-4 2 2.5 1.5-2 2 3.5zM10 11.5a1.25 1.25 0 1 0 0-.01' },
  video: { color: 'text-purple-600 dark:text-purple-400', mark: 'M10.5 12v6l5-3z' },
  audio: { color: 'text-pink-600 dark:text-pink-400', mark: 'M11 18.5a1.5 1.5 0 1 1-1.5-1.5H11V11l5-1v6.5a1.5 1.5 0 1 1-1.5-1.5H16' },
  pdf: { color: 'text-red-600 dark:text-red-400', label: 'PDF' },
  archive: { color: 'text-amber-700 dark:text-amber-400', mark: 'M11 4v2h2v2h-2v2h2v2h-2v2' },
  code: { color: 'text-sky-600 dark:text-sky-400', mark: 'M10.5 12.5 8.5 15l2 2.5M14.5 12.5l2 2.5-2 2.5' },
  text: { color: 'text-gray-500 dark:text-gray-400', mark: 'M9 12h7M9 15h7M9 18h5' },
  document: { color: 'text-blue-600 dark:text-blue-400', label: 'W' },
  spreadsheet: { color: 'text-green-700 dark:text-green-400', label: 'X' },
  presentation: { color: 'text-orange-600 dark:text-orange-400', label: 'P' },
  other: { color: 'text-gray-500 dark:text-gray-400' },
};

/** A folder, or a file with a glyph for its type. Decorative: the row says what the item is in words. */
export const ItemIcon = memo(function ItemIcon({ item, large = false }: { readonly item: Item; readonly large?: boolean }) {
  const size = large ? 'size-12' : 'size-6';
  if (item.kind === 'folder') {
    return (
      <svg aria-hidden="true" focusable="false" viewBox="0 0 24 24" className={`${size} shrink-0 text-amber-500 dark:text-amber-400`}>
        <path fill="currentColor" d="M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z" />
      </svg>
    );
  }
  const style = typeStyle[fileType(item.ext)];
  return (
    <svg aria-hidden="true" focusable="false" viewBox="0 0 24 24" className={`${size} shrink-0 ${style.color}`}>
      <path d={FILE_OUTLINE} fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinejoin="round" />
      {style.mark && <path d={style.mark} fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinecap="round" strokeLinejoin="round" />}
      {style.label && (
        <text x="12.6" y="17.5" textAnchor="middle" fontSize={style.label.length > 1 ? 5.2 : 7} fontWeight="700" fill="currentColor" fontFamily="system-ui, sans-serif">
          {style.label}
        </text>
      )}
    </svg>
  );
});

/** Small words after a name: encrypted, shared, linked. */
export function ItemBadges({ item, t }: { readonly item: Item; readonly t: Messages }) {
  const badges = [item.encrypted && t.encrypted, item.shared && t.shared, item.linked && t.linked].filter(
    (badge): badge is string => Boolean(badge),
  );
  if (badges.length === 0) return null;
  return (
    <span className="ml-2 inline-flex gap-1 align-middle">
      {badges.map((badge) => (
        <span key={badge} className="rounded bg-gray-100 px-1.5 py-0.5 text-xs text-gray-700 dark:bg-gray-800 dark:text-gray-300">
          {badge}
        </span>
      ))}
    </span>
  );
}
