/** Calls made while the database or the store cannot be reached: refused with 503 and Retry-After (storage/outages.ts), not incidents. */
import type { Config } from '../config';
import { OUTAGE_RETRY_AFTER_SECONDS, outagesOf } from '../storage/outages';
import { OpError, ResultCode } from './errors';

export { OUTAGE_RETRY_AFTER_SECONDS };

/** The refusal of a call whose `error` is part of a dependency outage (noted, so it logs once), or null. */
export function outageRefusal(config: Config, error: unknown): OpError | null {
  if (!outagesOf(config).failed(error)) return null;
  return new OpError(ResultCode.Unavailable, 'service-unavailable', 'the service is temporarily unavailable; try again shortly', {
    retryAfter: OUTAGE_RETRY_AFTER_SECONDS,
  });
}

/** Whether a background round's `error` is part of a dependency outage: the tracker logs that once, so the round need not. */
export function partOfOutage(config: Config, error: unknown): boolean {
  return outagesOf(config).failed(error) !== null;
}
