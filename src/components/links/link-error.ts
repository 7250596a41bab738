import { isApiError } from '../../api/errors';
import type { Messages } from '../../i18n';
import { describeError } from '../error-text';

/** An encrypted file (423) needs decrypting, not just unlocking: the service never serves encrypted files to strangers. */
export function linkErrorText(error: unknown, t: Messages, name: string): string {
  const subject = t.linksFiles(1, name);
  if (isApiError(error, 'Locked')) {
    const tip = typeof error.details.tip === 'string' && error.details.tip ? t.passwordHint(error.details.tip) : '';
    return `${t.errLockedTitle(subject)}. ${t.linksLocked}${tip}`;
  }
  const { title, message } = describeError(error, t, subject);
  return `${title}. ${message}`;
}
