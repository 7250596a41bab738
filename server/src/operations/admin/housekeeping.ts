/** Periodic tidying of the stores; every task is idempotent, so several instances may run it at once. */
import type { Logger } from '../../log';
import { refreshPlannerStatistics } from '../../storage/db/engine/dialect';
import type { Services } from '../context';
import { partOfOutage } from '../outages';
import { scheduleRounds } from '../background-rounds';
import { removeUnreferencedContent } from '../content/content-removal';
import { purgeEncryptionLeftovers } from '../encryption/encryption-jobs';
import { purgeExpiredBinItems } from '../tree/recycle-bin';
import { purgeExpiredSessions } from '../accounts/sessions';
import { purgeExpiredUploadLocks } from '../content/upload-locks';
import { purgeExpiredUploads } from '../content/uploads';

// Expired uploads go before content removal, so that content they alone held goes in the same run.
const tasks: ReadonlyArray<readonly [string, (services: Services) => Promise<unknown>]> = [
  ['sessions', purgeExpiredSessions],
  ['uploads', purgeExpiredUploads],
  ['upload locks', purgeExpiredUploadLocks],
  // The bin's expired entries before content removal too, so that their content goes in the same run.
  ['recycle-bin', purgeExpiredBinItems],
  ['encryption', purgeEncryptionLeftovers],
  ['content', removeUnreferencedContent],
  ['planner statistics', (services) => refreshPlannerStatistics(services.db)],
];

export async function runHousekeeping(services: Services, log: Logger, stopping: () => boolean = () => false): Promise<void> {
  for (const [name, task] of tasks) {
    if (stopping()) return;
    try {
      await task(services);
    } catch (error) {
      if (!partOfOutage(services.config, error)) log.error('housekeeping failed', { task: name, error: error instanceof Error ? error.message : String(error) });
    }
  }
}

/** Runs housekeeping now and then every `intervalMs`; a round stops between tasks once stopped. */
export function scheduleHousekeeping(services: Services, log: Logger, intervalMs = 10 * 60_000): () => Promise<void> {
  return scheduleRounds(services, log, 'housekeeping', intervalMs, (signal) => runHousekeeping(services, log, () => signal.aborted)).stop;
}
