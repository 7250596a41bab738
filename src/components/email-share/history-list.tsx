/** An item's messages, newest first; the summary above is a polite live region, so "2 sent" is heard when it changes. */
import { useId, useState } from 'react';
import type { UseQueryResult } from '@tanstack/react-query';
import type { EmailRecipient, EmailShareInfo } from '../../api/results';
import { useI18n, type Messages } from '../../i18n';
import { deliveryState, summarizeDeliveries, type DeliveryState } from '../../lib/email-deliveries';
import { formatTime } from '../../lib/format';
import { ErrorPanel } from '../error-panel';
import { Button, Spinner } from '../ui/button';
import { Icon, type IconName } from '../ui/icons';

/** A long history shows its newest messages first, the rest on request. */
const SHOWN_AT_FIRST = 50;

const BADGES: Readonly<Record<DeliveryState, { readonly icon: IconName; readonly className: string }>> = {
  queued: { icon: 'clock', className: 'bg-gray-100 text-gray-800 dark:bg-gray-800 dark:text-gray-100' },
  retrying: { icon: 'restore', className: 'bg-amber-50 text-amber-900 dark:bg-amber-950 dark:text-amber-100' },
  sent: { icon: 'check', className: 'bg-green-50 text-green-900 dark:bg-green-950 dark:text-green-100' },
  failed: { icon: 'warning', className: 'bg-red-50 text-red-900 dark:bg-red-950 dark:text-red-100' },
};

function stateLabel(t: Messages, state: DeliveryState): string {
  return { queued: t.emailStatusQueued, retrying: t.emailStatusRetrying, sent: t.emailStatusSent, failed: t.emailStatusFailed }[state];
}

export function HistoryList({
  info,
  subject,
  what,
}: {
  readonly info: UseQueryResult<EmailShareInfo>;
  /** "this folder" / "this file", for error messages. */
  readonly subject: string;
  readonly what: string;
}) {
  const { t, language } = useI18n();
  const emails = info.data?.emails;
  const headingId = useId();
  const [showAll, setShowAll] = useState(false);
  const summary = emails ? summarizeDeliveries(emails) : null;
  const newestFirst = emails ? [...emails].reverse() : [];
  const shown = showAll ? newestFirst : newestFirst.slice(0, SHOWN_AT_FIRST);

  return (
    <section aria-labelledby={headingId} className="border-t border-gray-200 pt-4 dark:border-gray-700">
      <div className="flex flex-wrap items-baseline justify-between gap-x-3 gap-y-1">
        <h3 id={headingId} className="text-base font-semibold">
          {t.emailHistoryHeading}
        </h3>
        <p role="status" className="text-sm text-gray-700 dark:text-gray-300">
          {summary && emails && emails.length > 0 ? t.emailHistorySummary(summary.sent, summary.waiting, summary.failed) : ''}
        </p>
      </div>
      {info.error && !emails ? (
        <div className="mt-2">
          <ErrorPanel error={info.error} subject={subject} onRetry={() => void info.refetch()} retrying={info.isFetching} />
        </div>
      ) : info.isPending && !emails ? (
        <p className="mt-2 flex items-center gap-2 text-sm text-gray-700 dark:text-gray-300">
          <Spinner />
          {t.loading}
        </p>
      ) : !emails || emails.length === 0 ? (
        <p className="mt-2 text-sm text-gray-700 dark:text-gray-300">{t.emailHistoryEmpty(what)}</p>
      ) : (
        <>
          <ul aria-labelledby={headingId} className="mt-1 divide-y divide-gray-200 dark:divide-gray-700">
            {shown.map((email, index) => (
              <HistoryRow key={`${emails.length - index}`} email={email} t={t} language={language} />
            ))}
          </ul>
          {!showAll && newestFirst.length > SHOWN_AT_FIRST && (
            <Button variant="ghost" compact className="mt-2" onClick={() => setShowAll(true)}>
              {t.emailHistoryShowAll(newestFirst.length)}
            </Button>
          )}
        </>
      )}
    </section>
  );
}

function HistoryRow({ email, t, language }: { readonly email: EmailRecipient; readonly t: Messages; readonly language: string }) {
  const state = deliveryState(email);
  const badge = BADGES[state];
  const time = formatTime(email.time, language);
  return (
    <li className="flex flex-wrap items-start justify-between gap-x-3 gap-y-1 py-2">
      <div className="min-w-0 flex-1">
        <p className="text-sm font-medium break-all">{email.to}</p>
        {time && (
          <p className="text-xs text-gray-700 dark:text-gray-300">
            <time dateTime={email.time}>{state === 'sent' ? t.emailSentAt(time) : t.emailQueuedAt(time)}</time>
          </p>
        )}
        {email.error && (
          <p className={`text-xs break-words ${state === 'failed' ? 'text-red-800 dark:text-red-300' : 'text-amber-900 dark:text-amber-200'}`}>
            {state === 'failed' ? t.emailFailedReason(email.error) : t.emailLastError(email.error)}
          </p>
        )}
      </div>
      <span className={`inline-flex shrink-0 items-center gap-1 rounded-full px-2 py-0.5 text-xs font-medium ${badge.className}`}>
        <Icon name={badge.icon} className="size-3.5" />
        {stateLabel(t, state)}
      </span>
    </li>
  );
}
