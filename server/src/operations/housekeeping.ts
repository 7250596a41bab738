/**
 * Periodic work that keeps the stores tidy: expired sessions and stale throttle counters now;
 * later issues add the recycle-bin sweep, expired uploads and unreferenced content. Every task is
 * an idempotent delete, so several instances may run it at the same time without harm.
 */
import type { Logger } from '../log';
import type { Services } from './context';
import { purgeExpiredSessions } from './sessions';

const tasks: ReadonlyArray<readonly [string, (services: Services) => Promise<unknown>]> = [['sessions', purgeExpiredSessions]];

export async function runHousekeeping(services: Services, log: Logger): Promise<void> {
  for (const [name, task] of tasks) {
    try {
      await task(services);
    } catch (error) {
      log.error('housekeeping failed', { task: name, error: error instanceof Error ? error.message : String(error) });
    }
  }
}

/** Runs housekeeping now and then every `intervalMs`; returns a function that stops it. */
export function scheduleHousekeeping(services: Services, log: Logger, intervalMs = 10 * 60_000): () => void {
  let running: Promise<void> | null = null;
  const run = () => {
    running ??= runHousekeeping(services, log).finally(() => (running = null));
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  run();
  return () => clearInterval(timer);
}
