import type { ItemLock } from '../storage/db/repositories/encryption-repository';
import type { Reason, ReasonOf } from './reasons';

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

/** A call that was bound but refused. Thrown by operations, rendered once by the protocol layer: code, msg, reason, details. */
export class OpError extends Error {
  constructor(
    readonly code: Exclude<ResultCode, 0>,
    readonly reason: Reason,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'OpError';
  }
}

export const invalidArgument = (reason: ReasonOf<400>, message: string, details?: ErrorDetails) =>
  new OpError(ResultCode.InvalidArgument, reason, message, details);
export const unauthorized = (message = 'token missing, unknown or expired') =>
  new OpError(ResultCode.Unauthorized, 'token-expired', message);
export const forbidden = (reason: ReasonOf<403>, message: string) => new OpError(ResultCode.Forbidden, reason, message);
export const notFound = (reason: ReasonOf<404>, message: string) => new OpError(ResultCode.NotFound, reason, message);
export const conflict = (reason: ReasonOf<409>, message: string, details?: ErrorDetails) =>
  new OpError(ResultCode.Conflict, reason, message, details);
export const tooLarge = (reason: ReasonOf<413>, message: string) => new OpError(ResultCode.TooLarge, reason, message);
export const locked = (reason: ReasonOf<423>, message: string, details?: ErrorDetails) =>
  new OpError(ResultCode.Locked, reason, message, details);
export const tooManyAttempts = (reason: ReasonOf<429>, message: string, retryAfterSeconds: number) =>
  new OpError(ResultCode.TooManyAttempts, reason, message, { retryAfter: retryAfterSeconds });
/** The installation cannot serve this now or is not set up for it (e.g. share e-mails without FSS_PUBLIC_URL). */
export const unavailable = (reason: ReasonOf<503>, message: string) => new OpError(ResultCode.Unavailable, reason, message);
/**
 * The 423 of an item encryption locks (protocol.md §4.2), saying what the one refused may know: the
 * session gets id, tip and type; the owner sharing or linking it, id and tip; a share's visitor, the id.
 */
export function lockedRefusal(lock: ItemLock, message?: string, to: 'session' | 'owner' | 'visitor' = 'session'): OpError {
  const text = message ?? (lock.type === 'file' ? 'the file is encrypted: unlock it first' : 'the item is in an encrypted folder: unlock the folder first');
  const tip = lock.tip ?? '';
  const reason = to === 'session' ? 'encrypted-locked' : to === 'owner' ? 'encrypted-excluded' : 'encrypted-in-share';
  return locked(reason, text, to === 'visitor' ? { id: lock.id } : to === 'owner' ? { id: lock.id, tip } : { id: lock.id, tip, type: lock.type });
}

export const notImplemented = (operation: string) =>
  new OpError(ResultCode.NotImplemented, 'not-implemented', `${operation} is not implemented yet`);
