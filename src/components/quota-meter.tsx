import { useAccountInfo } from '../api/account';
import { useI18n } from '../i18n';
import { formatSize } from '../lib/format';

/** The account's storage in the header: a bar and "1.2 GB of 10 GB used"; amber past 90 %, red when full. */
export function QuotaMeter() {
  const { t, language } = useI18n();
  const info = useAccountInfo().data;
  if (!info || info.quota <= 0) return null;
  const percent = Math.min(100, Math.round((info.used / info.quota) * 100));
  const text = t.quotaUsed(formatSize(info.used, language), formatSize(info.quota, language));
  const bar = percent >= 100 ? 'bg-red-600' : percent >= 90 ? 'bg-amber-500' : 'bg-blue-600 dark:bg-blue-400';
  return (
    <div className="hidden w-36 shrink-0 sm:block" title={text} data-testid="quota-meter">
      <div
        role="meter"
        aria-label={t.quotaLabel}
        aria-valuemin={0}
        aria-valuemax={info.quota}
        aria-valuenow={Math.min(info.used, info.quota)}
        aria-valuetext={text}
        className="h-1.5 w-full overflow-hidden rounded-full bg-gray-200 dark:bg-gray-700"
      >
        <div className={`h-full rounded-full ${bar}`} style={{ width: `${percent}%` }} />
      </div>
      <p className="mt-0.5 truncate text-xs text-gray-700 dark:text-gray-300">{text}</p>
    </div>
  );
}
