/** How the engine tells failures apart: worth another attempt, gone from the server, or the file changed. */
import { isApiError } from '../api/errors';
import type { NameProblem } from '../api/name-check';
import type { UploadError, UploadSource } from './types';

/** A failure of the engine's own (not from the service). */
export class UploadFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** A name the service would refuse: why, for the user's language. */
    readonly problem?: NameProblem,
  ) {
    super(message);
  }
}

export const fileChanged = () => new UploadFailure('Changed', 'The file changed while it was being uploaded. Choose it again.');

/** Worth another attempt: the service was unreachable or failed, not a refusal. */
export function isRetryable(error: unknown): boolean {
  if (!isApiError(error)) return false;
  if (error.code === 'Network') return true;
  const status = error.status ?? 0;
  return status >= 500 || status === 408 || status === 423 || status === 429;
}

/** The upload no longer exists on the server (expired, housekept, or another account's). */
export const isGone = (error: unknown) => isApiError(error) && (error.status === 404 || error.status === 410);

/** Whether the file can still be read at `offset` (browsers refuse to read a file changed since it was picked). */
export async function readable(source: UploadSource, offset: number): Promise<boolean> {
  if (source.size === 0) return true;
  const at = Math.min(offset, source.size - 1);
  try {
    await source.slice(at, at + 1).arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

export function errorOf(error: unknown): UploadError {
  if (isApiError(error) || error instanceof UploadFailure) return { code: error.code, message: error.message, cause: error };
  return { code: 'Unknown', message: error instanceof Error ? error.message : String(error), cause: error };
}
