/**
 * tus' upload lock as a database row shared by every instance (docs/design.md §11): with MemoryLocker, two PATCHes
 * of one upload on two instances would write at once; a waiter asks the holder to let go, so a new connection ends the old.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/server';
import { createLogger } from '../../log';
import {
  claimUploadLock,
  deleteExpiredUploadLocks,
  releaseUploadLock,
  renewUploadLocks,
  requestUploadLockRelease,
  uploadLocksToRelease,
} from '../../storage/db/repositories/upload-locks-repository';
import type { Services } from '../context';

export interface UploadLockTimings {
  /** Lease without renewal: what a request waits at most after its holder died. */
  readonly leaseMs: number;
  readonly renewEveryMs: number;
  /** How often the holding instance looks for other instances' requests to let go. */
  readonly watchEveryMs: number;
  /** How long a tus request waits for a lock (then ERR_LOCK_TIMEOUT, 500). */
  readonly acquireTimeoutMs: number;
  /** The first, and the longest, pause between attempts. */
  readonly firstRetryMs: number;
  readonly maxRetryMs: number;
}

export const DEFAULT_UPLOAD_LOCK_TIMINGS: UploadLockTimings = {
  leaseMs: 15_000,
  renewEveryMs: 5_000,
  watchEveryMs: 250,
  // Longer than a lease, so that a lock left by an instance that died is taken over in time.
  acquireTimeoutMs: 30_000,
  firstRetryMs: 10,
  maxRetryMs: 250,
};

/** tus' RequestRelease; `atOnce` (shutdown) asks to stop reading now rather than after LOCK_DRAIN_MS. */
export type ReleaseRequest = (atOnce?: boolean) => ReturnType<RequestRelease>;

interface Holding {
  readonly holder: string;
  readonly requestRelease: ReleaseRequest;
  /** When taken (this process's clock): a renewal that began earlier cannot have seen it. */
  readonly since: number;
  /** 0 not asked, 1 asked to let go, 2 asked to let go at once. */
  asked: 0 | 1 | 2;
}

export class UploadLocker implements Locker {
  /** `host:pid:random`, as the rows name it. */
  readonly instance = `${os.hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  readonly timings: UploadLockTimings;
  private readonly holdings = new Map<string, Holding>();
  /** This instance's requests waiting for a lock, woken when it is let go of here. */
  private readonly waiters = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private lastRenewal = 0;
  /** Shutting down: every holder is asked to let go at once, as soon as it holds. */
  private draining = false;

  constructor(
    private readonly services: Pick<Services, 'db' | 'now'>,
    timings: Partial<UploadLockTimings> = {},
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.timings = { ...DEFAULT_UPLOAD_LOCK_TIMINGS, ...timings };
  }

  newLock(name: string): Lock {
    return new UploadLock(this, name);
  }

  /** Takes lock `name`, asking its holder to let go meanwhile; rejects with ABORTED or ERR_LOCK_TIMEOUT. */
  async acquire(name: string, signal: AbortSignal | undefined, requestRelease: ReleaseRequest, timeoutMs = this.timings.acquireTimeoutMs): Promise<string> {
    const { db } = this.services;
    const deadline = Date.now() + timeoutMs;
    let pause = this.timings.firstRetryMs;
    for (;;) {
      if (signal?.aborted) throw ERRORS.ABORTED;
      const holder = randomBytes(12).toString('hex');
      const now = this.services.now();
      const claimed = await claimUploadLock(db, {
        name,
        holder,
        instance: this.instance,
        now,
        expiresAt: new Date(now.getTime() + this.timings.leaseMs),
      });
      if (claimed) {
        // A holding of ours still listed lost its lease (taken over, since ended): make sure its request stops.
        const stale = this.holdings.get(name);
        if (stale) this.askToRelease(stale);
        if (signal?.aborted) {
          await this.release(name, holder);
          throw ERRORS.ABORTED;
        }
        const holding: Holding = { holder, requestRelease, since: Date.now(), asked: 0 };
        this.holdings.set(name, holding);
        this.startWatching();
        if (this.draining) this.askToRelease(holding);
        return holder;
      }
      const local = this.holdings.get(name);
      if (local) this.askToRelease(local);
      else await requestUploadLockRelease(db, name);
      const left = deadline - Date.now();
      if (left <= 0) throw ERRORS.ERR_LOCK_TIMEOUT;
      await this.pause(name, Math.min(pause, left), signal);
      pause = Math.min(pause * 2, this.timings.maxRetryMs);
    }
  }

  /** Lets go of lock `name` if `holder` still holds it, and wakes this instance's waiters. */
  async release(name: string, holder: string): Promise<void> {
    if (this.holdings.get(name)?.holder === holder) this.holdings.delete(name);
    if (this.holdings.size === 0) this.stopWatching();
    try {
      await releaseUploadLock(this.services.db, name, holder);
    } catch (error) {
      // The lease runs out instead.
      this.onError(error);
    } finally {
      for (const wake of this.waiters.get(name) ?? []) wake();
    }
  }

  /** Shutdown: each request holding a lock here ends now with what it has written, and lets go; so does each new one. */
  drain(): void {
    this.draining = true;
    for (const holding of this.holdings.values()) this.askToRelease(holding);
  }

  /** Stops the periodic work (the locks still held then expire with their leases). */
  close(): void {
    this.stopWatching();
  }

  private askToRelease(holding: Holding, atOnce = this.draining): void {
    const asked = atOnce ? 2 : 1;
    if (holding.asked >= asked) return;
    holding.asked = asked;
    void Promise.resolve()
      .then(() => holding.requestRelease(atOnce))
      .catch((error: unknown) => this.onError(error));
  }

  private pause(name: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      let waiting = this.waiters.get(name);
      if (!waiting) this.waiters.set(name, (waiting = new Set()));
      const set = waiting;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        set.delete(done);
        if (set.size === 0 && this.waiters.get(name) === set) this.waiters.delete(name);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private startWatching(): void {
    if (this.timer) return;
    // The lock just taken has a fresh lease: the first renewal is due a period from now.
    this.lastRenewal = Date.now();
    this.timer = setInterval(() => void this.tick(), this.timings.watchEveryMs);
    this.timer.unref();
  }

  private stopWatching(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.holdings.size === 0) return;
    this.ticking = true;
    const { db } = this.services;
    try {
      const started = Date.now();
      if (started - this.lastRenewal >= this.timings.renewEveryMs) {
        const now = this.services.now();
        const kept = await renewUploadLocks(db, this.instance, new Date(now.getTime() + this.timings.leaseMs));
        this.lastRenewal = started;
        const still = new Set(kept.map((row) => `${row.name}\n${row.holder}`));
        for (const [name, holding] of this.holdings) {
          // Taken over by another instance: this request must stop before it writes after them.
          if (holding.since < started && !still.has(`${name}\n${holding.holder}`)) this.askToRelease(holding);
        }
      }
      for (const row of await uploadLocksToRelease(db, this.instance)) {
        const holding = this.holdings.get(row.name);
        if (holding?.holder === row.holder) this.askToRelease(holding);
      }
    } catch (error) {
      this.onError(error);
    } finally {
      this.ticking = false;
    }
  }
}

class UploadLock implements Lock {
  private holder: string | null = null;

  constructor(
    private readonly locker: UploadLocker,
    private readonly name: string,
  ) {}

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    this.holder = await this.locker.acquire(this.name, signal, requestRelease);
  }

  async unlock(): Promise<void> {
    const holder = this.holder;
    if (holder === null) throw new Error('Releasing an unlocked lock!');
    this.holder = null;
    await this.locker.release(this.name, holder);
  }
}

const lockers = new WeakMap<Services, UploadLocker>();

/** The upload locker of these services (one per instance: buildApp's services). */
export function uploadLockerOf(services: Services): UploadLocker {
  let locker = lockers.get(services);
  if (!locker) {
    const log = createLogger(services.config.log);
    locker = new UploadLocker(services, {}, (error) => log.error('upload lock', { error: error instanceof Error ? error.message : String(error) }));
    lockers.set(services, locker);
  }
  return locker;
}

/** Runs `work` holding lock `name` (an upload id, or `<id>/completion`); work under it is never asked to stop. */
export async function withUploadLock<T>(services: Services, name: string, work: () => Promise<T>, timeoutMs?: number): Promise<T> {
  const locker = uploadLockerOf(services);
  let holder: string;
  try {
    holder = await locker.acquire(name, undefined, () => {}, timeoutMs);
  } catch (error) {
    if (error === ERRORS.ERR_LOCK_TIMEOUT) throw new Error(`upload lock ${name} was not free within ${timeoutMs ?? locker.timings.acquireTimeoutMs} ms`);
    throw error;
  }
  try {
    return await work();
  } finally {
    await locker.release(name, holder);
  }
}

/** Housekeeping: deletes locks whose lease ran out (free already): keeps the table small. */
export async function purgeExpiredUploadLocks(services: Services): Promise<number> {
  return deleteExpiredUploadLocks(services.db, services.now());
}
