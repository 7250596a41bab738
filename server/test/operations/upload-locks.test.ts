/**
 * The upload lock in the database (operations/content/upload-locks.ts), on SQLite and on PostgreSQL: two
 * UploadLockers on one database stand for two instances (each has an instance id of its own and
 * talks to the other only through the table); one locker with two locks stands for two requests of
 * one instance. The services' clock stands still, so leases run out only when a test moves it.
 */
import { ERRORS } from '@tus/server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { claimUploadLock } from '../../src/storage/db/repositories/upload-locks-repository';
import { purgeExpiredUploadLocks, UploadLocker, withUploadLock, type UploadLockTimings } from '../../src/operations/content/upload-locks';
import { openTestServices, type TestServices } from '../helpers/database';

const fast: Partial<UploadLockTimings> = { leaseMs: 1_000, renewEveryMs: 50, watchEveryMs: 20, acquireTimeoutMs: 3_000, firstRetryMs: 5, maxRetryMs: 20 };

function locker(services: TestServices, timings: Partial<UploadLockTimings> = {}): UploadLocker {
  const errors: unknown[] = [];
  const made = new UploadLocker(services, { ...fast, ...timings }, (error) => errors.push(error));
  onTestFinished(() => {
    made.close();
    expect(errors).toEqual([]);
  });
  return made;
}

const never = new AbortController().signal;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function rows(services: TestServices) {
  return services.db.selectFrom('upload_locks').selectAll().orderBy('name').execute();
}

/** A promise's state without waiting for it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await sleep(0);
  return done;
}

describe('the upload lock in the database', () => {
  it('is a row naming its holder and instance while held, and is gone once let go', async () => {
    const services = await openTestServices();
    const a = locker(services);
    const lock = a.newLock('u1');
    await lock.lock(never, () => {});
    expect(await rows(services)).toEqual([
      expect.objectContaining({ name: 'u1', instance: a.instance, release_requested: 0, expires_at: services.now().getTime() + 1_000 }),
    ]);
    await lock.unlock();
    expect(await rows(services)).toEqual([]);
    await expect(lock.unlock()).rejects.toThrow('Releasing an unlocked lock!');
  });

  it('across instances: the waiter asks the holder to let go (release_requested), and gets the lock when it does', async () => {
    const services = await openTestServices();
    const a = locker(services);
    const b = locker(services);
    const held = a.newLock('u1');
    let asked = 0;
    await held.lock(never, () => {
      asked++;
    });

    const order: string[] = [];
    const waiting = b
      .newLock('u1')
      .lock(never, () => {})
      .then(() => order.push('b acquired'));
    // A sees the request on its next look (every 20 ms here) and calls its requestRelease once.
    await expect.poll(() => asked, { timeout: 2_000 }).toBe(1);
    expect((await rows(services))[0]).toMatchObject({ instance: a.instance, release_requested: 1 });
    expect(await settled(waiting)).toBe(false);

    order.push('a lets go');
    await held.unlock();
    await waiting;
    expect(order).toEqual(['a lets go', 'b acquired']);
    expect(await rows(services)).toEqual([expect.objectContaining({ name: 'u1', instance: b.instance, release_requested: 0 })]);
    await sleep(100);
    expect(asked).toBe(1);
  });

  it('within one instance: the holder is asked at once, and the waiter wakes as soon as it lets go', async () => {
    const services = await openTestServices();
    // Slow polling: only the in-process path can make this quick.
    const a = locker(services, { watchEveryMs: 5_000, firstRetryMs: 2_000, maxRetryMs: 2_000 });
    const first = a.newLock('u1');
    let asked = false;
    await first.lock(never, () => {
      asked = true;
    });
    const second = a.newLock('u1');
    const started = Date.now();
    const waiting = second.lock(never, () => {});
    await expect.poll(() => asked, { timeout: 1_000, interval: 5 }).toBe(true);
    // No row was flagged: the request was passed on in memory.
    expect((await rows(services))[0].release_requested).toBe(0);
    await first.unlock();
    await waiting;
    expect(Date.now() - started).toBeLessThan(1_500);
    await second.unlock();
  });

  it('locks on different uploads do not wait for each other', async () => {
    const services = await openTestServices();
    const a = locker(services);
    const b = locker(services);
    const one = a.newLock('u1');
    const two = b.newLock('u2');
    await one.lock(never, () => expect.fail('nobody wants u1'));
    await two.lock(never, () => expect.fail('nobody wants u2'));
    expect((await rows(services)).map((row) => row.name)).toEqual(['u1', 'u2']);
    await Promise.all([one.unlock(), two.unlock()]);
  });

  it('of several instances trying a free lock at once, exactly one gets it', async () => {
    const services = await openTestServices();
    const now = services.now();
    const expiresAt = new Date(now.getTime() + 1_000);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => claimUploadLock(services.db, { name: 'u1', holder: `h${i}`, instance: `i${i}`, now, expiresAt })),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    const winner = outcomes.indexOf(true);
    expect(await rows(services)).toEqual([expect.objectContaining({ holder: `h${winner}`, instance: `i${winner}` })]);
  });

  it('a lock whose lease ran out (its instance died) is taken over without waiting', async () => {
    const services = await openTestServices();
    // The dead instance: it never renews.
    const dead = locker(services, { renewEveryMs: 3_600_000 });
    await dead.newLock('u1').lock(never, () => {});
    dead.close();
    const b = locker(services);
    const lock = b.newLock('u1');
    const taking = lock.lock(never, () => {});
    expect(await settled(taking)).toBe(false);
    services.clock.advance(1_000);
    await taking;
    expect((await rows(services))[0]).toMatchObject({ instance: b.instance, expires_at: services.now().getTime() + 1_000 });
    await lock.unlock();
  });

  it('the holder renews its leases while it holds them', async () => {
    const services = await openTestServices();
    const a = locker(services);
    const lock = a.newLock('u1');
    await lock.lock(never, () => {});
    services.clock.advance(600);
    // Renewed every 50 ms: the lease now ends a full lease after the moved clock.
    await expect.poll(async () => (await rows(services))[0].expires_at, { timeout: 2_000 }).toBe(services.now().getTime() + 1_000);
    services.clock.advance(600);
    const b = locker(services, { acquireTimeoutMs: 200 });
    await expect(b.newLock('u1').lock(never, () => {})).rejects.toBe(ERRORS.ERR_LOCK_TIMEOUT);
    await lock.unlock();
  });

  it('a holder whose lock was taken over (cut off from the database past its lease) is told to stop', async () => {
    const services = await openTestServices();
    const a = locker(services);
    let asked = false;
    const lock = a.newLock('u1');
    await lock.lock(never, () => {
      asked = true;
    });
    // What a takeover by another instance leaves in the row.
    await services.db.updateTable('upload_locks').set({ holder: 'other', instance: 'other instance' }).where('name', '=', 'u1').execute();
    await expect.poll(() => asked, { timeout: 2_000 }).toBe(true);
    // Letting go afterwards leaves the new holder's row alone.
    await lock.unlock();
    expect(await rows(services)).toEqual([expect.objectContaining({ holder: 'other' })]);
  });

  it('a waiter gives up after its timeout with ERR_LOCK_TIMEOUT, or at once when its request is aborted', async () => {
    const services = await openTestServices();
    const a = locker(services);
    const lock = a.newLock('u1');
    // A holder that does not let go (e.g. a completion, which finishes what it does).
    await lock.lock(never, () => {});
    const b = locker(services, { acquireTimeoutMs: 150 });
    await expect(b.newLock('u1').lock(never, () => {})).rejects.toBe(ERRORS.ERR_LOCK_TIMEOUT);

    const request = new AbortController();
    const c = locker(services, { acquireTimeoutMs: 60_000, maxRetryMs: 60_000 });
    const waiting = c.newLock('u1').lock(request.signal, () => {});
    await sleep(50);
    request.abort();
    await expect(waiting).rejects.toBe(ERRORS.ABORTED);
    expect((await rows(services))[0]).toMatchObject({ instance: a.instance });
    await lock.unlock();
    expect(await rows(services)).toEqual([]);
  });

  it('withUploadLock runs work under the lock, one at a time, and lets go even when the work fails', async () => {
    const services = await openTestServices();
    const events: string[] = [];
    const work = (name: string) => async () => {
      events.push(`${name} start`);
      await sleep(30);
      events.push(`${name} end`);
      return name;
    };
    expect(await Promise.all([withUploadLock(services, 'u1/completion', work('x')), withUploadLock(services, 'u1/completion', work('y'))])).toEqual(['x', 'y']);
    // One at a time, whichever gets the lock first: each work ends before the other starts.
    const first = events[0].split(' ')[0];
    const second = first === 'x' ? 'y' : 'x';
    expect(events).toEqual([`${first} start`, `${first} end`, `${second} start`, `${second} end`]);
    await expect(withUploadLock(services, 'u1', () => Promise.reject(new Error('disk full')))).rejects.toThrow('disk full');
    expect(await rows(services)).toEqual([]);
  });

  it('housekeeping deletes locks whose lease ran out, and only those', async () => {
    const services = await openTestServices();
    const now = services.now().getTime();
    await services.db
      .insertInto('upload_locks')
      .values([
        { name: 'dead', holder: 'h1', instance: 'gone', acquired_at: now - 60_000, expires_at: now - 1 },
        { name: 'live', holder: 'h2', instance: 'here', acquired_at: now, expires_at: now + 15_000 },
      ])
      .execute();
    expect(await purgeExpiredUploadLocks(services)).toBe(1);
    expect((await rows(services)).map((row) => row.name)).toEqual(['live']);
  });

  it('on shutdown (drain) asks each request holding a lock here to let go at once, and each that takes one afterwards', async () => {
    const services = await openTestServices();
    const a = locker(services);
    const asked: Array<[string, boolean | undefined]> = [];
    await a.newLock('u1').lock(never, (atOnce?: boolean) => void asked.push(['u1', atOnce]));
    await sleep(50);
    expect(asked).toEqual([]);

    a.drain();
    await expect.poll(() => asked).toEqual([['u1', true]]);
    await a.newLock('u2').lock(never, (atOnce?: boolean) => void asked.push(['u2', atOnce]));
    await expect.poll(() => asked).toEqual([
      ['u1', true],
      ['u2', true],
    ]);
  });
});
