/**
 * The bound on password hashes in flight (docs/security.md, "Password hashes and the thread pool").
 *
 * Node runs scrypt on libuv's thread pool, the pool that also reads and writes files: four threads
 * unless UV_THREADPOOL_SIZE says otherwise. Unbounded, a burst of logins held every thread for
 * seconds, and every download waited behind it. Every scrypt of the service (Login, the account
 * commands, FileEncrypt, FolderEncrypt, Unlock, Decrypt) runs through one HashQueue: at most
 * `slots` at once (FSS_PASSWORD_HASH_SLOTS, 1 or 2 with the default pool), so that at least two
 * threads stay free for file I/O; up to `maxWaiting` more wait their turn, first come first served;
 * beyond that a hash is refused at once with the protocol's throttling refusal (429 with
 * retryAfter; Login answers it as `reason="throttled"`), which costs the server nothing.
 */
import type { Config } from '../../config';
import { tooManyAttempts } from '../errors';

/**
 * Hashes that may wait per slot. At about 0.2 s a hash, a burst of logins 5 times the slots is
 * served within about a second: with the default 2 slots, 10 at once (2 running, 8 waiting), the
 * last starting after 0.8 s. A longer queue would only make every login of a flood wait longer
 * (on a loaded host a hash takes a second or more). Waiting costs no thread, only a request held open.
 */
export const WAITING_PER_SLOT = 4;

/** What a refusal tells the client to wait: the whole queue is worked off by then. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

export class HashQueue {
  #running = 0;
  /** Hashes waiting for a slot, oldest first: each resumes when a running hash hands it its slot. */
  readonly #waiting: Array<() => void> = [];

  constructor(
    readonly slots: number,
    readonly maxWaiting: number,
  ) {
    if (!Number.isSafeInteger(slots) || slots < 1) throw new RangeError(`a hash queue needs at least one slot, got ${slots}`);
    if (!Number.isSafeInteger(maxWaiting) || maxWaiting < 0) throw new RangeError(`a hash queue's length must be 0 or more, got ${maxWaiting}`);
  }

  /** Hashes running now (at most `slots`). */
  get running(): number {
    return this.#running;
  }

  /** Hashes waiting for a slot now (at most `maxWaiting`). */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Runs `hash` in a slot, after the hashes queued before it. Throws OpError 429 (retryAfter) at
   * once, without running it, when every slot is taken and the queue is full. The slot is given
   * back however `hash` ends.
   */
  async run<T>(hash: () => Promise<T>): Promise<T> {
    if (this.#running < this.slots) {
      this.#running++;
    } else {
      if (this.#waiting.length >= this.maxWaiting) {
        throw tooManyAttempts('too many passwords are being checked at once; try again in a moment', BUSY_RETRY_AFTER_SECONDS);
      }
      // The slot is handed over, not freed and taken again: a newcomer cannot overtake the queue.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    try {
      return await hash();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}

/** The queue of a service with `config`: one per process in production (the thread pool is per process). */
export function passwordHashQueue(config: Pick<Config, 'passwordHashSlots'>): HashQueue {
  return new HashQueue(config.passwordHashSlots, WAITING_PER_SLOT * config.passwordHashSlots);
}
