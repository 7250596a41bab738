import { isApiError } from '../api/errors';
import type { Messages } from '../i18n';
import { formatDuration } from '../lib/format';

export interface ErrorText {
  readonly title: string;
  readonly message: string;
}

/** Decided on the error's code, never its text; the service's message is shown where the user can act on it (a name taken, …). */
export function describeError(error: unknown, t: Messages, subject: string = t.subjectThis): ErrorText {
  if (!isApiError(error)) {
    return { title: t.errUnknownTitle, message: error instanceof Error ? error.message : String(error) };
  }
  switch (error.code) {
    case 'Network':
      return { title: t.errNetworkTitle, message: t.errNetwork };
    case 'NotImplemented':
      return { title: t.errNotImplementedTitle, message: t.errNotImplemented(error.message) };
    case 'NotFound':
      return { title: t.errNotFoundTitle, message: `${t.errNotFound(subject)} (${error.message})` };
    case 'Locked': {
      const tip = typeof error.details.tip === 'string' && error.details.tip ? t.passwordHint(error.details.tip) : '';
      return { title: t.errLockedTitle(subject), message: `${t.errLocked}${tip}` };
    }
    case 'Unauthorized':
      return { title: t.errUnauthorizedTitle, message: t.errUnauthorized };
    case 'TooManyAttempts':
      return {
        title: t.errTooManyTitle,
        message: error.retryAfter ? t.tryAgainIn(formatDuration(error.retryAfter, durationUnits(t))) : error.message,
      };
    case 'Protocol':
      return { title: t.errProtocolTitle, message: error.message };
    default:
      return { title: t.errRefusedTitle, message: error.message };
  }
}

export function durationUnits(t: Messages) {
  return { hour: t.hours, minute: t.minutes, second: t.seconds, join: t.durationJoin };
}
