/**
 * The bound on password hashes in flight (operations/crypto/hash-queue.ts): slots, the queue
 * behind them, the refusal when it is full, and the slot given back however a hash ends. The
 * "hashes" here are promises the test settles itself, so every step is deterministic.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { BUSY_RETRY_AFTER_SECONDS, HashQueue, passwordHashQueue } from '../../src/operations/crypto/hash-queue';
import { OpError, ResultCode } from '../../src/operations/errors';

/** A hash the test finishes by hand; `started` says whether the queue has begun it. */
function manualHash() {
  let finish!: (value: string) => void;
  let fail!: (error: Error) => void;
  const hash = {
    started: false,
    /** The promise the work returned, once started. */
    promise: undefined as Promise<string> | undefined,
    finish: (value = 'done') => finish(value),
    fail: (error = new Error('scrypt failed')) => fail(error),
    work: () => {
      hash.started = true;
      hash.promise = new Promise<string>((resolve, reject) => {
        finish = resolve;
        fail = reject;
      });
      return hash.promise;
    },
  };
  return hash;
}

/** Lets every settled promise run its continuations. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('HashQueue', () => {
  it('runs at most `slots` hashes at once; the others wait', async () => {
    const queue = new HashQueue(2, 8);
    const hashes = [manualHash(), manualHash(), manualHash()];
    const results = hashes.map((hash) => queue.run(hash.work));
    await settle();
    expect(hashes.map((hash) => hash.started)).toEqual([true, true, false]);
    expect([queue.running, queue.waiting]).toEqual([2, 1]);

    hashes[0].finish('first');
    await settle();
    expect(hashes[2].started).toBe(true);
    expect([queue.running, queue.waiting]).toEqual([2, 0]);
    hashes[1].finish('second');
    hashes[2].finish('third');
    expect(await Promise.all(results)).toEqual(['first', 'second', 'third']);
    expect([queue.running, queue.waiting]).toEqual([0, 0]);
  });

  it('starts waiting hashes in the order they came', async () => {
    const queue = new HashQueue(1, 8);
    const hashes = Array.from({ length: 4 }, manualHash);
    const order: number[] = [];
    const results = hashes.map((hash, i) => queue.run(() => (order.push(i), hash.work())));
    for (const hash of hashes) {
      await settle();
      hash.finish();
    }
    await Promise.all(results);
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it('refuses a hash at once with 429 and retryAfter when every slot is taken and the queue is full; it never runs', async () => {
    const queue = new HashQueue(1, 2);
    const running = [manualHash(), manualHash(), manualHash()];
    const accepted = running.map((hash) => queue.run(hash.work));
    const refused = manualHash();

    const error = await queue.run(refused.work).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpError);
    expect((error as OpError).code).toBe(ResultCode.TooManyAttempts);
    expect((error as OpError).details).toEqual({ retryAfter: BUSY_RETRY_AFTER_SECONDS });
    expect(BUSY_RETRY_AFTER_SECONDS).toBeGreaterThanOrEqual(1);
    expect(refused.started).toBe(false);
    expect([queue.running, queue.waiting]).toEqual([1, 2]);

    for (const hash of running) {
      await settle();
      hash.finish();
    }
    await Promise.all(accepted);
  });

  it('takes hashes again once the queue has room', async () => {
    const queue = new HashQueue(1, 0);
    const first = manualHash();
    const done = queue.run(first.work);
    await expect(queue.run(manualHash().work)).rejects.toBeInstanceOf(OpError);
    first.finish();
    await done;
    expect(await queue.run(async () => 'later')).toBe('later');
  });

  it('gives the slot back when a hash fails, and passes the failure on', async () => {
    const queue = new HashQueue(1, 1);
    const failing = manualHash();
    const next = manualHash();
    const failed = queue.run(failing.work);
    const after = queue.run(next.work);
    await settle();
    failing.fail(new Error('memory limit exceeded'));
    await expect(failed).rejects.toThrow('memory limit exceeded');
    await settle();
    expect(next.started).toBe(true);
    next.finish('fine');
    expect(await after).toBe('fine');
    expect([queue.running, queue.waiting]).toEqual([0, 0]);
  });

  it('gives the slot back when a hash throws before returning its promise', async () => {
    const queue = new HashQueue(1, 0);
    await expect(
      queue.run(() => {
        throw new Error('invalid parameters');
      }),
    ).rejects.toThrow('invalid parameters');
    expect(queue.running).toBe(0);
    expect(await queue.run(async () => 'next')).toBe('next');
  });

  it('a freed slot goes to the oldest waiting hash, not to one that arrives just then', async () => {
    const queue = new HashQueue(1, 1);
    const first = manualHash();
    const waiting = manualHash();
    const newcomer = manualHash();
    const runs = [queue.run(first.work), queue.run(waiting.work)];
    await settle();
    // The newcomer arrives right after the first hash gave its slot back, before the waiting one resumed.
    let late!: Promise<string>;
    void first.promise!.then(() => (late = queue.run(newcomer.work)));
    first.finish();
    await settle();
    expect([waiting.started, newcomer.started]).toEqual([true, false]);
    expect([queue.running, queue.waiting]).toEqual([1, 1]);
    waiting.finish();
    await settle();
    newcomer.finish();
    await Promise.all([...runs, late]);
  });

  it('needs at least one slot and a queue length of 0 or more', () => {
    expect(() => new HashQueue(0, 4)).toThrow(RangeError);
    expect(() => new HashQueue(1.5, 4)).toThrow(RangeError);
    expect(() => new HashQueue(1, -1)).toThrow(RangeError);
  });
});

describe('the service\'s queue (FSS_PASSWORD_HASH_SLOTS)', () => {
  it('has 2 slots by default, and a queue of 4 per slot', () => {
    const queue = passwordHashQueue(loadConfig({}));
    expect([queue.slots, queue.maxWaiting]).toEqual([2, 8]);
    expect(passwordHashQueue(loadConfig({ FSS_PASSWORD_HASH_SLOTS: '1' })).maxWaiting).toBe(4);
  });

  it('keeps two threads of the pool for file I/O: more slots than the pool less two is a setting error', () => {
    expect(() => loadConfig({ FSS_PASSWORD_HASH_SLOTS: '3' })).toThrow(/FSS_PASSWORD_HASH_SLOTS must be between 1 and 2/);
    expect(() => loadConfig({ FSS_PASSWORD_HASH_SLOTS: '0' })).toThrow(/FSS_PASSWORD_HASH_SLOTS/);
    expect(loadConfig({ FSS_PASSWORD_HASH_SLOTS: '6', UV_THREADPOOL_SIZE: '8' }).passwordHashSlots).toBe(6);
    expect(() => loadConfig({ FSS_PASSWORD_HASH_SLOTS: '7', UV_THREADPOOL_SIZE: '8' })).toThrow(/between 1 and 6/);
    // A pool of 2 or fewer threads leaves no room: one slot is still allowed, the least that works.
    expect(loadConfig({ FSS_PASSWORD_HASH_SLOTS: '1', UV_THREADPOOL_SIZE: '2' }).passwordHashSlots).toBe(1);
  });
});
