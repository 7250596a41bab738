import { describe, expect, it } from 'vitest';
import { deliveryState, pollInterval, POLL_QUEUED_MS, POLL_RETRYING_MS, summarizeDeliveries } from './email-deliveries';

const queued = { status: 'queued' };
const retrying = { status: 'queued', error: 'connect ECONNREFUSED 127.0.0.1:25' };
const sent = { status: 'sent' };
const failed = { status: 'failed', error: '550 No such user' };

describe('e-mail deliveries', () => {
  it('a queued message with an error is being retried; sent and failed are final', () => {
    expect(deliveryState(queued)).toBe('queued');
    expect(deliveryState(retrying)).toBe('retrying');
    expect(deliveryState(sent)).toBe('sent');
    expect(deliveryState(failed)).toBe('failed');
    expect(deliveryState({ status: 'something new' })).toBe('queued');
  });

  it('the history is asked for again while anything is on its way, and no more once all are final', () => {
    expect(pollInterval(undefined)).toBe(false);
    expect(pollInterval([])).toBe(false);
    expect(pollInterval([sent, failed])).toBe(false);
    expect(pollInterval([sent, queued])).toBe(POLL_QUEUED_MS);
    expect(pollInterval([retrying, sent])).toBe(POLL_RETRYING_MS);
    expect(pollInterval([retrying, queued])).toBe(POLL_QUEUED_MS);
  });

  it('counts sent, waiting and failed messages', () => {
    expect(summarizeDeliveries([sent, sent, queued, retrying, failed])).toEqual({ sent: 2, waiting: 2, failed: 1 });
  });
});
