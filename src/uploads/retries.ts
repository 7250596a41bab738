/** Waiting before another attempt after a broken connection, with growing delays that the browser's return online cuts short. */
import type { Entry } from './entry';
import { isRetryable } from './failures';

/** Waits before each new attempt after a broken connection; when they run out the file fails (Retry starts again). */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 30_000, 30_000, 60_000, 60_000];

export const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

export type Retries = ReturnType<typeof createRetries>;

export function createRetries(options: {
  readonly delaysMs: readonly number[];
  readonly now: () => number;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly changed: (entry: Entry, urgent: boolean) => void;
}) {
  const { delaysMs, now, sleep, changed } = options;
  const wakers = new Set<() => void>();
  return {
    /** Whether `error`, after `failures` failed attempts, deserves another one. */
    worthRetrying: (error: unknown, failures: number) => isRetryable(error) && failures < delaysMs.length,
    /** Waits the delay after `failures` failures (shown as the entry's retryAt), or until wakeAll. */
    async wait(entry: Entry, failures: number, signal: AbortSignal) {
      const delay = delaysMs[failures];
      entry.retryAt = now() + delay;
      entry.samples = [];
      changed(entry, true);
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      wakers.add(wake);
      try {
        await Promise.race([sleep(delay, signal), woken]);
      } finally {
        wakers.delete(wake);
      }
      signal.throwIfAborted();
      entry.retryAt = undefined;
      changed(entry, true);
    },
    /** Ends every wait now (the browser is back online). */
    wakeAll() {
      for (const wake of [...wakers]) wake();
    },
  };
}
