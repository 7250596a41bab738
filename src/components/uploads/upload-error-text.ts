/** An upload's failure in the user's language: by the refusal's reason (describeError) or the engine's own code, never the service's English. */
import type { Messages } from '../../i18n';
import type { UploadMessages } from '../../i18n/uploads';
import { UploadFailure } from '../../uploads/failures';
import type { UploadError } from '../../uploads/types';
import { describeError } from '../error-text';

export function uploadErrorText(error: UploadError | undefined, u: UploadMessages, t: Messages): string {
  if (!error) return u.stateError;
  if (error.code === 'Changed') return u.errChanged;
  if (error.code === 'Network') return u.errNetwork;
  if (error.code === 'Unauthorized') return u.errUnauthorized;
  const { cause } = error;
  const text = cause instanceof UploadFailure && cause.problem ? t.nameProblem(cause.problem) : describeError(cause ?? new Error(error.message), t).message;
  return `${u.stateError}: ${text}`;
}
