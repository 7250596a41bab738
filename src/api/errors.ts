/** Errors of the typed client: components decide on `code`, never on message text. */
import { RefusalReasons, ResultCodes, type RefusalReason, type ResultCodeName } from './generated/operations';

/** A ResultCode name (the service refused), 'LoginRefused', 'Protocol' (unbindable or unreadable answer), 'Network', or 'Unknown' (a newer service's code). */
export type ApiErrorCode = ResultCodeName | 'LoginRefused' | 'Protocol' | 'Network' | 'Unknown';

export type ApiErrorDetails = Readonly<Record<string, string | number>>;

// Detail attributes that are numbers on the wire (ids, seconds); the rest stay text (a tip may be "1234").
const NUMERIC_DETAILS = new Set(['id', 'fid', 'dirid', 'dir', 'retryAfter', 'status']);

export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly details: ApiErrorDetails = {},
    /** The numeric result code (or HTTP status for 'Protocol'), when there is one. */
    readonly status?: number,
  ) {
    super(message);
  }

  /** Seconds to wait before trying again, when the service said so (throttled logins, 429). */
  get retryAfter(): number | undefined {
    const value = this.details.retryAfter;
    return typeof value === 'number' ? value : undefined;
  }

  /** Why the service refused (docs/protocol.md §4.2), when it said so with a reason this client knows. */
  get reason(): RefusalReason | undefined {
    const value = this.details.reason;
    return this.status !== undefined && RefusalReasons.includes(value as RefusalReason) ? (value as RefusalReason) : undefined;
  }
}

export function isApiError(error: unknown, code?: ApiErrorCode): error is ApiError {
  return error instanceof ApiError && (code === undefined || error.code === code);
}

export function resultCodeName(code: number): ResultCodeName | 'Unknown' {
  return (ResultCodes as Record<number, ResultCodeName>)[code] ?? 'Unknown';
}

/** Attributes of an answer element as error details: known numeric ones become numbers. */
export function detailsFrom(attributes: Readonly<Record<string, unknown>>, skip: readonly string[]): ApiErrorDetails {
  const details: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (skip.includes(name) || typeof value !== 'string' || name.startsWith('#') || name === 'xmlns') continue;
    details[name] = NUMERIC_DETAILS.has(name) && /^-?\d+$/.test(value) ? Number(value) : value;
  }
  return details;
}
