import { useRetryingOutage } from '../api/query-client';
import { useI18n } from '../i18n';
import { dismissNotice, useNotices } from '../lib/notices';
import { Icon } from './ui/icons';

/** Errors as alerts that stay until dismissed; the rest polite and going by themselves. */
export function Notices() {
  const { t } = useI18n();
  const notices = useNotices();
  const retrying = useRetryingOutage();
  return (
    <section
      aria-label={t.notifications}
      className="pointer-events-none fixed inset-x-2 top-2 z-50 flex flex-col items-stretch gap-2 sm:inset-x-auto sm:top-auto sm:bottom-4 sm:left-4 sm:w-96"
    >
      <div role="status" className="flex flex-col gap-2">
        {retrying && <p className="pointer-events-auto rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 shadow-lg dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100">{t.serviceRetrying}</p>}
        {notices
          .filter((notice) => notice.kind === 'info')
          .map((notice) => (
            <NoticeCard key={notice.id} id={notice.id} text={notice.text} tone="info" dismissLabel={t.dismiss} />
          ))}
      </div>
      <div role="alert" className="flex flex-col gap-2">
        {notices
          .filter((notice) => notice.kind === 'error')
          .map((notice) => (
            <NoticeCard key={notice.id} id={notice.id} text={notice.text} detail={notice.detail} tone="error" dismissLabel={t.dismiss} />
          ))}
      </div>
    </section>
  );
}

function NoticeCard({
  id,
  text,
  detail,
  tone,
  dismissLabel,
}: {
  readonly id: number;
  readonly text: string;
  readonly detail?: string;
  readonly tone: 'info' | 'error';
  readonly dismissLabel: string;
}) {
  return (
    <div
      className={`pointer-events-auto flex items-start gap-3 rounded-md border p-3 text-sm shadow-lg ${
        tone === 'error'
          ? 'border-red-300 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100'
          : 'border-gray-200 bg-white text-gray-900 dark:border-gray-700 dark:bg-gray-900 dark:text-gray-100'
      }`}
    >
      {tone === 'error' && <Icon name="warning" className="mt-0.5 size-4" />}
      <p className="min-w-0 flex-1 break-words">
        {text}
        {detail && <span className="block">{detail}</span>}
      </p>
      <button
        type="button"
        onClick={() => dismissNotice(id)}
        className="rounded p-0.5 hover:bg-black/10 focus-visible:outline-2 focus-visible:outline-blue-600 dark:hover:bg-white/10"
      >
        <Icon name="close" className="size-4" />
        <span className="sr-only">{dismissLabel}</span>
      </button>
    </div>
  );
}
