import type { Item } from '../../api/results';
import { useI18n, type Messages } from '../../i18n';
import { formatCount } from '../../lib/format';
import { limitReached } from '../../lib/extraction-code';

/** "1 of 2" with a limit, "3, no limit" without. */
export function downloadsText(t: Messages, share: Pick<Item, 'downValue' | 'downloads'>): string {
  const downloads = share.downloads ?? 0;
  const limit = share.downValue ?? 0;
  return limit > 0 ? t.sharingDownloadsOf(downloads, limit) : t.sharingDownloadsNoLimit(downloads);
}

/** A share's code, limit and downloads, as a description list. */
export function ShareFacts({ share, withLimit = false }: { readonly share: Item; readonly withLimit?: boolean }) {
  const { t, language } = useI18n();
  const limit = share.downValue ?? 0;
  const facts: { term: string; value: string; code?: boolean; reached?: boolean }[] = [
    { term: t.sharingCodeLegend, value: share.downpwd || t.sharingNoCode, code: Boolean(share.downpwd) },
    ...(withLimit ? [{ term: t.sharingLimit, value: limit > 0 ? formatCount(limit, language) : t.sharingNoLimit }] : []),
    { term: t.sharingDownloads, value: downloadsText(t, share), reached: limitReached(share) },
  ];
  return (
    <dl className="flex flex-wrap gap-x-4 gap-y-1 text-sm">
      {facts.map(({ term, value, code, reached }) => (
        <div key={term} className="flex min-w-0 gap-1.5">
          <dt className="text-gray-700 dark:text-gray-300">{term}:</dt>
          <dd className={`min-w-0 font-medium break-all ${code ? 'font-mono' : ''}`}>
            {value}
            {reached && (
              <span className="ml-1.5 rounded bg-amber-100 px-1.5 py-0.5 text-xs font-medium text-amber-900 dark:bg-amber-900 dark:text-amber-100">
                {t.sharingLimitReached}
              </span>
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}
