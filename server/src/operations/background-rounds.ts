/** Background work run in rounds: at start-up, every `intervalMs` and when kicked; one round at a time. */
import type { Logger } from '../log';
import type { Services } from './context';
import { partOfOutage } from './outages';

export interface BackgroundRounds {
  /** Runs a round now, or once more after the one under way. */
  kick(): void;
  /** Starts no more rounds and resolves once the one under way has ended (the database must stay open until then). */
  stop(): Promise<void>;
}

/** A failed round is logged as `{name} failed`, unless it is part of a dependency outage (which logs itself once). */
export function scheduleRounds(services: Services, log: Logger, name: string, intervalMs: number, round: (signal: AbortSignal) => Promise<void>): BackgroundRounds {
  const controller = new AbortController();
  let running: Promise<void> | null = null;
  let again = false;
  const run = () => {
    if (controller.signal.aborted) return;
    if (running) {
      again = true;
      return;
    }
    running = round(controller.signal)
      .catch((error: unknown) => {
        if (!partOfOutage(services.config, error)) log.error(`${name} failed`, { error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          run();
        }
      });
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  run();
  return {
    kick: run,
    async stop() {
      controller.abort();
      clearInterval(timer);
      while (running) await running;
    },
  };
}
