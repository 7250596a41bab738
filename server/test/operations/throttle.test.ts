import { describe, expect, test } from 'vitest';
import { addressCounter, loginCounters, purgeStaleCounters, recordFailure, secondsBlocked } from '../../src/operations/accounts/throttle';
import { openTestServices } from '../helpers/database';

const MINUTE = 60_000;

describe('throttle', () => {
  test('one address is blocked after 50 failures, whatever the accounts', async () => {
    const services = await openTestServices();
    for (let i = 0; i < 49; i++) {
      await recordFailure(services.db, loginCounters(`?user${i}`, '198.51.100.9'), services.now());
    }
    expect(await secondsBlocked(services.db, [addressCounter('198.51.100.9')], services.now())).toBe(0);
    await recordFailure(services.db, loginCounters('?user49', '198.51.100.9'), services.now());
    expect(await secondsBlocked(services.db, loginCounters('?anyone', '198.51.100.9'), services.now())).toBe(60);
    expect(await secondsBlocked(services.db, loginCounters('?anyone', '198.51.100.10'), services.now())).toBe(0);
  });

  test('one account is blocked after 20 failures spread over many addresses', async () => {
    const services = await openTestServices();
    for (let i = 0; i < 19; i++) {
      await recordFailure(services.db, loginCounters('1001', `198.51.100.${i}`), services.now());
    }
    expect(await secondsBlocked(services.db, loginCounters('1001', '203.0.113.1'), services.now())).toBe(0);
    await recordFailure(services.db, loginCounters('1001', '198.51.100.19'), services.now());
    expect(await secondsBlocked(services.db, loginCounters('1001', '203.0.113.1'), services.now())).toBe(60);
    expect(await secondsBlocked(services.db, loginCounters('1002', '203.0.113.1'), services.now())).toBe(0);
  });

  test('recordFailure answers how long the counters are now blocked', async () => {
    const services = await openTestServices();
    const counters = loginCounters('1001', '198.51.100.9');
    for (let i = 0; i < 4; i++) expect(await recordFailure(services.db, counters, services.now())).toBe(0);
    expect(await recordFailure(services.db, counters, services.now())).toBe(60);
  });

  test('failures spread wider than the 15-minute window never block', async () => {
    const services = await openTestServices();
    const counters = loginCounters('1001', '198.51.100.9');
    for (let i = 0; i < 12; i++) {
      await recordFailure(services.db, counters, services.now());
      services.clock.advance(4 * MINUTE);
    }
    expect(await secondsBlocked(services.db, counters, services.now())).toBe(0);
  });

  test('back-off doubles with each failure of a run and stops growing at one hour', async () => {
    const services = await openTestServices();
    const [pair] = loginCounters('1001', '198.51.100.9');
    const blocks: number[] = [];
    for (let i = 0; i < 12; i++) {
      const seconds = await recordFailure(services.db, [pair], services.now());
      if (seconds > 0) blocks.push(seconds);
      services.clock.advance(seconds * 1000);
    }
    expect(blocks).toEqual([60, 120, 240, 480, 960, 1920, 3600, 3600]);
  });

  test('a run ends 15 quiet minutes after its last block', async () => {
    const services = await openTestServices();
    const [pair] = loginCounters('1001', '198.51.100.9');
    for (let i = 0; i < 5; i++) await recordFailure(services.db, [pair], services.now());
    services.clock.advance(MINUTE + 15 * MINUTE);
    expect(await recordFailure(services.db, [pair], services.now())).toBe(0);
  });

  test('counters of ended runs are purged', async () => {
    const services = await openTestServices();
    // One failure counts on three counters: the (account, address) pair, the account, the address.
    await recordFailure(services.db, loginCounters('1001', '198.51.100.9'), services.now());
    services.clock.advance(10 * MINUTE);
    expect(await purgeStaleCounters(services.db, services.now())).toBe(0);
    services.clock.advance(10 * MINUTE);
    expect(await purgeStaleCounters(services.db, services.now())).toBe(3);
  });
});
