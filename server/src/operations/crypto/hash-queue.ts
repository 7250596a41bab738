/**
 * The bound on password hashes in flight (docs/security.md): scrypt shares libuv's pool with file I/O, so `slots` run,
 * `maxWaiting` wait, and beyond that a hash is refused at once with 429, costing the server nothing.
 */
import type { Config } from '../../config';
import { tooManyAttempts } from '../errors';

/**
 * Hashes that may wait per slot: at ~0.2 s a hash, a burst 5 times the slots is served within a second;
 * a longer queue would only make every login of a flood wait longer.
 */
export const WAITING_PER_SLOT = 4;

/** What a refusal tells the client to wait: the whole queue is worked off by then. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

export class HashQueue {
  #running = 0;
  /** Oldest first: each resumes when a running hash hands it its slot. */
  readonly #waiting: Array<() => void> = [];

  constructor(
    readonly slots: number,
    readonly maxWaiting: number,
  ) {
    if (!Number.isSafeInteger(slots) || slots < 1) throw new RangeError(`a hash queue needs at least one slot, got ${slots}`);
    if (!Number.isSafeInteger(maxWaiting) || maxWaiting < 0) throw new RangeError(`a hash queue's length must be 0 or more, got ${maxWaiting}`);
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `hash` in a slot after those queued before it; 429 at once when the queue is full. */
  async run<T>(hash: () => Promise<T>): Promise<T> {
    if (this.#running < this.slots) {
      this.#running++;
    } else {
      if (this.#waiting.length >= this.maxWaiting) {
        throw tooManyAttempts('server-busy', 'too many passwords are being checked at once; try again in a moment', BUSY_RETRY_AFTER_SECONDS);
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
