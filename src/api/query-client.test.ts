import { describe, expect, it } from 'vitest';
import { ApiError } from './errors';
import { isPassingOutage, OUTAGE_RETRIES, retryDelay, shouldRetry } from './query-client';

const outage = new ApiError('Unavailable', 'the service is temporarily unavailable; try again shortly', { reason: 'service-unavailable', retryAfter: 7 });

describe('the retry policy of reads', () => {
  it('tries a read refused for a passing outage again, a few times', () => {
    expect(isPassingOutage(outage)).toBe(true);
    for (let failures = 0; failures < OUTAGE_RETRIES; failures++) expect(shouldRetry(failures, outage)).toBe(true);
    expect(shouldRetry(OUTAGE_RETRIES, outage)).toBe(false);
  });

  it('waits the Retry-After the service gave, or 5 s when an HTTP 503 gave none', () => {
    expect(retryDelay(0, outage)).toBe(7_000);
    expect(retryDelay(2, outage)).toBe(7_000);
    expect(retryDelay(0, new ApiError('Protocol', 'The service answered HTTP 503.', {}, 503))).toBe(5_000);
  });

  it('never retries other refusals, a 503 for another reason among them', () => {
    const mailOff = new ApiError('Unavailable', 'share e-mails are off', { reason: 'no-public-url' });
    for (const error of [mailOff, new ApiError('Forbidden', 'not yours'), new ApiError('TooManyAttempts', 'slow down', { retryAfter: 30 }), new ApiError('Protocol', 'HTTP 500', {}, 500)]) {
      expect(isPassingOutage(error)).toBe(false);
      expect(shouldRetry(0, error)).toBe(false);
    }
  });

  it('still retries a service it cannot reach twice', () => {
    const network = new ApiError('Network', 'Cannot reach the service.');
    expect([0, 1, 2].map((failures) => shouldRetry(failures, network))).toEqual([true, true, false]);
  });
});
