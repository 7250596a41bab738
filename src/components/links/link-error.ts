import { isApiError } from '../../api/errors';
import type { Messages } from '../../i18n';
import { describeError } from '../error-text';

/**
 * Why a file got no link, in a sentence. An encrypted file (423) says that links need it
 * decrypted (unlocking for the session is not enough: the service refuses to serve an encrypted
 * file to strangers), with its password hint; anything else as describeError puts it.
 */
export function linkErrorText(error: unknown, t: Messages, name: string): string {
  const subject = t.linksFiles(1, name);
  if (isApiError(error, 'Locked')) {
    const tip = typeof error.details.tip === 'string' && error.details.tip ? t.passwordHint(error.details.tip) : '';
    return `${t.errLockedTitle(subject)}. ${t.linksLocked}${tip}`;
  }
  const { title, message } = describeError(error, t, subject);
  return `${title}. ${message}`;
}
