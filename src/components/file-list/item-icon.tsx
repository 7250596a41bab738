import { memo } from 'react';
import type { Item } from '../../api/results';
import { useI18n, type Messages } from '../../i18n';
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

/** The type glyph is decorative (the row says what the item is); the lock is named; the grid shows an encryption job's progress. */
export const ItemIcon = memo(function ItemIcon({ item, large = false }: { readonly item: Item; readonly large?: boolean }) {
  const glyph = <TypeGlyph item={item} large={large} />;
  const progress = jobProgress(item);
  const showProgress = large && progress !== undefined;
  if (!item.encrypted && !showProgress) return glyph;
  return (
    <span className="relative inline-flex shrink-0">
      {glyph}
      {item.encrypted && <LockMark large={large} />}
      {showProgress && <ProgressPill item={item} progress={progress} />}
    </span>
  );
});

const LOCK_SHACKLE = 'M8.5 11V8a3.5 3.5 0 0 1 7 0v3';

function LockMark({ large }: { readonly large: boolean }) {
  const { t } = useI18n();
  return (
    <svg
      role="img"
      aria-label={t.encrypted}
      focusable="false"
      viewBox="0 0 24 24"
      className={`absolute ${large ? '-right-1.5 -bottom-1 size-6' : '-right-1.5 -bottom-1 size-4'} rounded-full bg-white text-gray-900 ring-1 ring-gray-300 dark:bg-gray-950 dark:text-gray-100 dark:ring-gray-600`}
      data-testid="lock-mark"
    >
      <title>{t.encrypted}</title>
      <rect x="6" y="11" width="12" height="9" rx="1.5" fill="currentColor" />
      <path d={LOCK_SHACKLE} fill="none" stroke="currentColor" strokeWidth="2.5" strokeLinecap="round" />
    </svg>
  );
}

/** A background encryption job's percentage on a folder, while it runs (docs/encryption.md §4). */
export function jobProgress(item: Item): number | undefined {
  return item.progress !== undefined && item.progress < 100 ? Math.max(0, Math.floor(item.progress)) : undefined;
}

/** In words: an encrypted folder with a job is being encrypted; one no longer encrypted, decrypted. */
const jobText = (item: Item, progress: number, t: Messages) => (item.encrypted ? t.encryptingProgress(progress) : t.decryptingProgress(progress));

function ProgressPill({ item, progress }: { readonly item: Item; readonly progress: number }) {
  const { t } = useI18n();
  return (
    <span className="absolute -bottom-1 -left-2 rounded bg-blue-700 px-1 text-[11px] leading-4 font-semibold text-white dark:bg-blue-300 dark:text-gray-950">
      <span className="sr-only">{jobText(item, progress, t)}</span>
      <span aria-hidden="true">{progress}%</span>
    </span>
  );
}

function TypeGlyph({ item, large }: { readonly item: Item; readonly large: boolean }) {
  const size = large ? 'size-12' : 'size-6';
  if (item.type === 'folder') {
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
}

/** A running encryption job, shared, linked (the lock on the icon says encrypted). */
export function ItemBadges({ item, t }: { readonly item: Item; readonly t: Messages }) {
  const progress = jobProgress(item);
  const job = progress === undefined ? false : jobText(item, progress, t);
  const badges = [job, item.shared && t.shared, item.linked && t.linked].filter(
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
