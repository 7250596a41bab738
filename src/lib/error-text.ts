import { isApiError } from '../api/errors';
import { formatDuration } from './format';

export interface ErrorText {
  readonly title: string;
  readonly message: string;
}

/**
 * What to tell the user about a failed call. Decided on the error's code, never its text; the
 * service's own message is shown where it says something the user can act on.
 */
export function describeError(error: unknown, subject = 'this'): ErrorText {
  if (!isApiError(error)) {
    return { title: 'Something went wrong', message: error instanceof Error ? error.message : String(error) };
  }
  switch (error.code) {
    case 'Network':
      return { title: 'Cannot reach the service', message: 'Check the connection and try again.' };
    case 'NotImplemented':
      return { title: 'Not available yet', message: `The service cannot do this yet (${error.message}).` };
    case 'NotFound':
      return { title: 'Not found', message: `${capitalize(subject)} does not exist, or it is not yours.` };
    case 'Locked': {
      const tip = typeof error.details.tip === 'string' && error.details.tip ? ` Password hint: ${error.details.tip}` : '';
      return { title: `${capitalize(subject)} is encrypted`, message: `It must be unlocked with its password first.${tip}` };
    }
    case 'Unauthorized':
      return { title: 'Your session has ended', message: 'Log in again to continue.' };
    case 'TooManyAttempts':
      return {
        title: 'Too many attempts',
        message: error.retryAfter ? `Try again in ${formatDuration(error.retryAfter)}.` : error.message,
      };
    case 'Protocol':
      return { title: 'The service could not handle the request', message: error.message };
    default:
      return { title: 'The service refused the request', message: error.message };
  }
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
