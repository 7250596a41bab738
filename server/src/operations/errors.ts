import type { ItemLock } from '../storage/db/repositories/encryption-repository';

/** Result codes of refused calls, mirroring HTTP statuses; the one place they are defined. */
export const ResultCode = {
  Ok: 0,
  InvalidArgument: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  TooLarge: 413,
  Locked: 423,
  TooManyAttempts: 429,
  NotImplemented: 501,
  Unavailable: 503,
} as const;

export type ResultCode = (typeof ResultCode)[keyof typeof ResultCode];

/** Extra attributes a refusal carries, e.g. the id and tip of a locked item, or retryAfter. */
export type ErrorDetails = Readonly<Record<string, string | number>>;

/** A call that was bound but refused. Thrown by operations, rendered once by the protocol layer. */
export class OpError extends Error {
  constructor(
    readonly code: Exclude<ResultCode, 0>,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'OpError';
  }
}

export const invalidArgument = (message: string, details?: ErrorDetails) =>
  new OpError(ResultCode.InvalidArgument, message, details);
export const unauthorized = (message = 'token missing, unknown or expired') =>
  new OpError(ResultCode.Unauthorized, message);
export const forbidden = (message: string) => new OpError(ResultCode.Forbidden, message);
export const notFound = (message = 'not found') => new OpError(ResultCode.NotFound, message);
export const conflict = (message: string, details?: ErrorDetails) => new OpError(ResultCode.Conflict, message, details);
export const tooLarge = (message: string) => new OpError(ResultCode.TooLarge, message);
export const locked = (message: string, details?: ErrorDetails) => new OpError(ResultCode.Locked, message, details);
export const tooManyAttempts = (message: string, retryAfterSeconds: number) =>
  new OpError(ResultCode.TooManyAttempts, message, { retryAfter: retryAfterSeconds });
/** The installation is not set up for this (e.g. share e-mails without FSS_PUBLIC_URL): `reason` says what is missing. */
export const unavailable = (message: string, reason: string) => new OpError(ResultCode.Unavailable, message, { reason });
/**
 * The 423 of an item encryption locks (protocol.md §4.2), saying what the one refused may know: the
 * session gets id, tip and type; the owner sharing or linking it, id and tip; a share's visitor, the id.
 */
export function lockedRefusal(lock: ItemLock, message?: string, to: 'session' | 'owner' | 'visitor' = 'session'): OpError {
  const text = message ?? (lock.type === 'file' ? 'the file is encrypted: unlock it first' : 'the item is in an encrypted folder: unlock the folder first');
  const tip = lock.tip ?? '';
  return locked(text, to === 'visitor' ? { id: lock.id } : to === 'owner' ? { id: lock.id, tip } : { id: lock.id, tip, type: lock.type });
}

export const notImplemented = (operation: string) =>
  new OpError(ResultCode.NotImplemented, `${operation} is not implemented yet`);
