// "Share by e-mail" for one item: recipients, Send, and the history of its messages, polled while any is on its way.
// Sending shares the item if needed (an open share); the dialog says so before anything is sent.
import { useMemo, useRef, useState, type FormEvent } from 'react';
import { useEmailShareInfo, useSendEmailShare } from '../../api/email-shares';
import { isApiError } from '../../api/errors';
import type { Item } from '../../api/results';
import { useI18n, type Messages } from '../../i18n';
import { MAX_EMAIL_RECIPIENTS } from '../../lib/email-addresses';
import { durationText } from '../error-text';
import { DialogAlert, InlineError } from '../error-panel';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { HistoryList } from './history-list';
import { RecipientsField, useRecipients } from './recipients-field';

/** What Send will do with the item's share, said before anything is sent. */
function shareExplanation(t: Messages, item: Item, what: string, knowsCode: boolean): string {
  if (item.encrypted) return t.emailShareEncrypted(what);
  if (!item.shared) return t.emailShareCreatesShare(what);
  if (knowsCode && item.downpwd) return `${t.emailShareExisting(what)} ${t.emailShareWithCode}`;
  return t.emailShareExisting(what);
}

/** The sending limit (429) with when it lifts, and 503 (FSS_PUBLIC_URL not set), in the user's words; other refusals as describeError says. */
function SendError({ error, subject }: { readonly error: unknown; readonly subject: string }) {
  const { t } = useI18n();
  if (isApiError(error, 'TooManyAttempts')) {
    const wait = error.retryAfter ? t.tryAgainIn(durationText(error.retryAfter, t)) : '';
    // Which limit (hourly, daily), by the refusal's reason: the service's English msg is never shown.
    const which = t.refusalText(error.reason, '');
    return (
      <DialogAlert>
        {t.emailLimitReached} {wait} {which && <span className="text-red-800 dark:text-red-200">({which})</span>}
      </DialogAlert>
    );
  }
  if (isApiError(error, 'Unavailable')) return <DialogAlert>{t.emailSharingOff}</DialogAlert>;
  return <InlineError error={error} subject={subject} />;
}

export function EmailShareDialog({ item, onClose }: { readonly item: Item; readonly onClose: () => void }) {
  const { t } = useI18n();
  const target = useMemo(() => ({ type: item.type, id: item.id }), [item.type, item.id]);
  const info = useEmailShareInfo(target);
  const send = useSendEmailShare(target);
  const recipients = useRecipients(MAX_EMAIL_RECIPIENTS, t);
  const input = useRef<HTMLInputElement>(null);
  /** How many recipients the last Send queued, for the confirmation. */
  const [queued, setQueued] = useState<number | null>(null);

  const what = item.type === 'folder' ? t.emailWhatFolder : t.emailWhatFile;
  const subject = item.type === 'folder' ? t.subjectFolder : t.emailSubjectFile;
  // The history's item is fresh and carries the share's attributes; the listing's may be neither.
  const current = info.data?.item ?? item;
  const encrypted = current.encrypted;

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (send.isPending) return;
    setQueued(null);
    const to = recipients.take();
    if (!to) {
      input.current?.focus();
      return;
    }
    send.mutate(to, {
      onSuccess: () => {
        recipients.clear();
        setQueued(to.length);
        input.current?.focus();
      },
    });
  };

  return (
    <Dialog
      wide
      title={t.emailShareTitle(item.name)}
      description={<p>{shareExplanation(t, current, what, info.data !== undefined)}</p>}
      onClose={onClose}
    >
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        <RecipientsField recipients={recipients} disabled={send.isPending} inputRef={input} />
        {send.isError && <SendError error={send.error} subject={subject} />}
        <p role="status" className={queued === null ? 'sr-only' : 'text-sm text-green-900 dark:text-green-200'}>
          {queued === null ? '' : t.emailQueued(queued)}
        </p>
        <DialogActions onCancel={onClose} cancelLabel={t.close}>
          <Button type="submit" busy={send.isPending} busyLabel={t.emailSending} disabled={encrypted}>
            {t.emailSend}
          </Button>
        </DialogActions>
      </form>
      <HistoryList info={info} subject={subject} what={what} />
    </Dialog>
  );
}
