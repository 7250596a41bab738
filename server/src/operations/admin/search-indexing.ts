/**
 * The background step that puts copied files' names into FileSearch's indexes (0015_deferred_search_index). Until
 * then search finds them by a scan of the account's files awaiting it, so its answers are exact at every moment.
 * The flag is in the database: files a crash left unindexed are indexed after the restart.
 */
import type { Logger } from '../../log';
import { scheduleRounds } from '../background-rounds';
import { indexPendingFiles } from '../../storage/db/repositories/search-repository';
import type { Services } from '../context';

/** A batch's time goal: one batch is one transaction, which holds the event loop from its start to its commit. */
const BATCH_TARGET_MS = 8;
const FIRST_BATCH = 100;
const MIN_BATCH = 10;
const MAX_BATCH = 2_000;

export interface IndexingFigures {
  readonly files: number;
  readonly batches: number;
  /** The longest batch, in ms of wall time: the longest the event loop was held (waits for a CPU included). */
  readonly longestMs: number;
  /** The most CPU time one batch took, in ms (at most its wall time: see indexPendingNames). */
  readonly longestCpuMs: number;
}

/**
 * Indexes every file awaiting it, batch by batch, giving the event loop back between batches; each batch's size
 * follows the time the last one took, so that a batch stays near BATCH_TARGET_MS on a slow or busy machine.
 */
export async function indexPendingNames(services: Services, signal?: AbortSignal): Promise<IndexingFigures> {
  let size = FIRST_BATCH;
  let files = 0;
  let batches = 0;
  let longestMs = 0;
  let longestCpuMs = 0;
  while (!signal?.aborted) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const done = await indexPendingFiles(services.db, size);
    const ms = performance.now() - started;
    // The main thread's time is at most both: wall time counts waits for a CPU on a busy machine, and the
    // process's CPU time counts other threads (the WAL checkpoints). Node 20 has no CPU time per thread.
    const { user, system } = process.cpuUsage(cpu);
    const cpuMs = Math.min(ms, (user + system) / 1000);
    if (done === 0) break;
    files += done;
    batches++;
    longestMs = Math.max(longestMs, ms);
    longestCpuMs = Math.max(longestCpuMs, cpuMs);
    if (done < size) break;
    size = Math.round(Math.min(MAX_BATCH, size * 2, Math.max(MIN_BATCH, (size * BATCH_TARGET_MS) / Math.max(cpuMs, 1))));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return { files, batches, longestMs, longestCpuMs };
}

export interface SearchIndexer {
  /** Looks for files to index now (after a Copy). */
  nudge(): void;
  /** Stops after the batch under way (the database must stay open until then). */
  stop(): Promise<void>;
}

/** Runs the step at start-up, when nudged, and every `intervalMs` (files another process copied). */
export function scheduleSearchIndexing(services: Services, log: Logger, intervalMs = 60_000): SearchIndexer {
  const rounds = scheduleRounds(services, log, 'search indexing', intervalMs, async (signal) => {
    const figures = await indexPendingNames(services, signal);
    if (figures.files > 0) log.info('search indexing', { ...figures, longestMs: Math.round(figures.longestMs), longestCpuMs: Math.round(figures.longestCpuMs) });
  });
  // After the turn that nudged (a Copy's answer), not within it.
  return { nudge: () => setImmediate(rounds.kick), stop: rounds.stop };
}
