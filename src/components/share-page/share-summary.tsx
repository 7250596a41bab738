import { useState, type ReactNode } from 'react';
import type { Item } from '../../api/results';
import { useI18n } from '../../i18n';
import { formatSize, formatTime } from '../../lib/format';
import { ItemIcon } from '../file-list/item-icon';

/** Downloads left of a share with a limit; undefined for a share without one. */
export function downloadsLeft(item: Item): number | undefined {
  const limit = item.downValue ?? 0;
  return limit > 0 ? Math.max(0, limit - (item.downloads ?? 0)) : undefined;
}

/** A share whose downloads are used up: `downloads` has reached `downValue` (0 = no limit). */
export function limitReached(item: Item): boolean {
  return downloadsLeft(item) === 0;
}

/** What is shared: a file as a card with its download button (`children`), a folder as a header above its listing. */
export function ShareSummary({ item, children }: { readonly item: Item; readonly children?: ReactNode }) {
  const { t, language } = useI18n();
  const [coverFailed, setCoverFailed] = useState(false);
  const cover = item.image && !coverFailed ? item.image : undefined;
  const left = downloadsLeft(item);
  const file = item.type === 'file';

  const facts = [
    file ? t.sharePageSharedFile : t.sharePageSharedFolder,
    formatSize(item.size, language),
    item.time ? t.sharePageModified(formatTime(item.time, language)) : '',
  ].filter(Boolean);
  // A file's cover spans the card above its name; a folder's is a thumbnail in place of its icon.
  const coverImage = (className: string) => <img src={cover} alt={t.sharePageCoverAlt(item.name)} onError={() => setCoverFailed(true)} className={className} />;

  return (
    <section
      aria-labelledby="share-title"
      className={file ? 'mx-auto w-full max-w-xl overflow-hidden rounded-lg border border-gray-200 bg-white dark:border-gray-800 dark:bg-gray-900' : 'w-full'}
    >
      {cover && file && coverImage('max-h-80 w-full bg-gray-100 object-contain dark:bg-gray-800')}
      <div className={file ? 'space-y-3 p-4 sm:p-6' : 'space-y-2'}>
        <div className="flex items-start gap-3">
          {cover && !file ? coverImage('size-16 shrink-0 rounded-md bg-gray-100 object-cover dark:bg-gray-800') : <ItemIcon item={item} large />}
          <div className="min-w-0 flex-1">
            <h1 id="share-title" tabIndex={-1} className="text-xl font-semibold break-words outline-none sm:text-2xl">
              {item.name}
            </h1>
            <p className="mt-0.5 flex flex-wrap gap-x-2 text-sm text-gray-700 dark:text-gray-300">
              {facts.map((fact, index) => (
                // The dot goes with the fact after it, so that a line never ends with one.
                <span key={index} className="inline-flex gap-2">
                  {index > 0 && <span aria-hidden="true">·</span>}
                  <span>{fact}</span>
                </span>
              ))}
            </p>
            {left !== undefined && (
              <p className="mt-0.5 text-sm text-gray-700 dark:text-gray-300" data-testid="downloads-left">
                {t.sharePageDownloadsLeft(left, item.downValue ?? 0)}
              </p>
            )}
          </div>
        </div>
        {item.description && <p className="text-sm break-words whitespace-pre-line text-gray-800 dark:text-gray-200">{item.description}</p>}
        {children}
      </div>
    </section>
  );
}
