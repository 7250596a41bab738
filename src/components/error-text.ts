import { isApiError, type ApiError } from '../api/errors';
import type { Messages } from '../i18n';
import { formatDuration } from '../lib/format';

export interface ErrorText {
  readonly title: string;
  readonly message: string;
}

/** The text of a refusal's code, when its reason is one this app does not know (a newer service). */
function codeText(error: ApiError, t: Messages): string {
  const texts: Partial<Record<ApiError['code'], string>> = {
    InvalidArgument: t.errInvalidArgument,
    Forbidden: t.errForbidden,
    Conflict: t.errConflict,
    TooLarge: t.errTooLarge,
    Unavailable: t.errUnavailable,
  };
  return texts[error.code] ?? t.errRefused;
}

/**
 * Decided on the error's code and reason, never its text: a refusal is told in the user's language by its
 * reason (i18n/reasons.ts), else by its code; the service's English `msg` is never shown.
 */
export function describeError(error: unknown, t: Messages, subject: string = t.subjectThis): ErrorText {
  if (!isApiError(error)) {
    return { title: t.errUnknownTitle, message: error instanceof Error ? error.message : String(error) };
  }
  const { reason } = error;
  switch (error.code) {
    case 'Network':
      return { title: t.errNetworkTitle, message: t.errNetwork };
    case 'NotImplemented':
      return { title: t.errNotImplementedTitle, message: t.refusalText('not-implemented', '') };
    case 'NotFound':
      return { title: t.errNotFoundTitle, message: t.refusalText(reason, t.errNotFound(subject)) };
    case 'Locked': {
      if (reason && reason !== 'encrypted-locked') return { title: t.errLockedTitle(subject), message: t.refusalText(reason, '') };
      const tip = typeof error.details.tip === 'string' && error.details.tip ? t.passwordHint(error.details.tip) : '';
      return { title: t.errLockedTitle(subject), message: `${t.errLocked}${tip}` };
    }
    case 'Unauthorized':
      return { title: t.errUnauthorizedTitle, message: t.errUnauthorized };
    case 'TooManyAttempts': {
      const wait = error.retryAfter ? t.tryAgainIn(durationText(error.retryAfter, t)) : '';
      return { title: t.errTooManyTitle, message: `${t.refusalText(reason, '')} ${wait}`.trim() || t.errTooManyTitle };
    }
    case 'Protocol':
      return { title: t.errProtocolTitle, message: error.message };
    default:
      return { title: t.errRefusedTitle, message: t.refusalText(reason, codeText(error, t)) };
  }
}

/** "2 minutes 5 seconds" in the user's language. */
export const durationText = (seconds: number, t: Messages) =>
  formatDuration(seconds, { hour: t.hours, minute: t.minutes, second: t.seconds, join: t.durationJoin });
