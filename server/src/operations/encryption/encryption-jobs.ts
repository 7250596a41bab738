/**
 * Background encryption and decryption of many files (docs/encryption.md §4): a job's work is a query, so a job resumed
 * or taken over goes on with what is left; it ends under the account's row lock, so no file added late is left behind.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely } from 'kysely';
import { createLogger, type Logger } from '../../log';
import {
  addToJobTotals,
  claimJob,
  countDecryptableFilesOfRegion,
  decryptableFilesOfRegion,
  deleteExpiredUnlocks,
  deleteFinishedJobs,
  deleteKeyIfUnused,
  deleteUnusedKeys,
  findOpenJob,
  finishJob,
  insertJob,
  latestJobOfFolder,
  plainFilesOfKey,
  recordJobProgress,
  releaseJob,
  renewLease,
  type FileWork,
  type JobRecord,
} from '../../storage/db/repositories/encryption-repository';
import { lockAccountTree } from '../../storage/db/repositories/items-repository';
import type { Database, EncryptionJobKind } from '../../storage/db/schema';
import type { Services } from '../context';
import { scheduleRounds, type BackgroundRounds } from '../background-rounds';
import { seal, unseal } from '../crypto/sealing';
import { decryptFile, encryptFile, sweepWorkFiles } from './encrypted-content';

/** A lease without renewal (default of FSS_JOB_LEASE_SECONDS); renewed every third of it while a file is worked on. */
export const JOB_LEASE_MS = 60_000;
const BATCH = 100;
const JOB_KEY_PURPOSE = 'fss/encryption-job-key/v1';

/** Folders this small are encrypted or decrypted within the call; bigger ones in the background. */
export const INLINE_JOB_LIMITS = { files: 20, bytes: 32 * 1024 * 1024 } as const;

export function sealJobKey(secret: Buffer, keyId: number, dataKey: Buffer): string {
  return seal(secret, JOB_KEY_PURPOSE, dataKey, `key:${keyId}`);
}

function openJobKey(secret: Buffer, job: JobRecord): Buffer | null {
  return job.sealedKey === null ? null : unseal(secret, JOB_KEY_PURPOSE, job.sealedKey, `key:${job.keyId}`);
}

/** A job to make: the key it works with (its data key sealed into the job), and the folder it is about. */
interface KeyJob {
  readonly accountId: number;
  readonly keyId: number;
  readonly folderId: number;
  readonly dataKey: Buffer;
}

/** How many files a job has to do, and their bytes. */
type Work = { readonly files: number; readonly bytes: number };

/** Makes sure an open encrypt job of the key exists, adding `work` to it; in the work's transaction, under the account's row lock. */
export async function ensureEncryptJob(tx: Kysely<Database>, services: Services, job: KeyJob & Work): Promise<number> {
  const open = await findOpenJob(tx, 'encrypt', job.keyId);
  if (open) {
    await addToJobTotals(tx, open.id, job.files, job.bytes);
    return open.id;
  }
  return insertKeyJob(tx, services, 'encrypt', job, job);
}

/** A decrypt job for the region of `keyId` at `folderId` (already unmarked), in the caller's transaction. */
export async function createDecryptJob(tx: Kysely<Database>, services: Services, job: KeyJob): Promise<{ id: number; files: number; bytes: number }> {
  const work = await countDecryptableFilesOfRegion(tx, job.accountId, job.folderId, job.keyId);
  return { id: await insertKeyJob(tx, services, 'decrypt', job, work), ...work };
}

function insertKeyJob(tx: Kysely<Database>, services: Services, kind: EncryptionJobKind, job: KeyJob, work: Work): Promise<number> {
  const { accountId, keyId, folderId } = job;
  const sealedKey = sealJobKey(services.secret, keyId, job.dataKey);
  return insertJob(tx, { accountId, kind, keyId, folderId, sealedKey, totalFiles: work.files, totalBytes: work.bytes, createdAt: services.now() });
}

export function isSmallJob(work: Work): boolean {
  return work.files <= INLINE_JOB_LIMITS.files && work.bytes <= INLINE_JOB_LIMITS.bytes;
}

export interface JobProgress {
  readonly jobId: number;
  readonly kind: EncryptionJobKind;
  readonly state: 'waiting' | 'running' | 'finished';
  readonly totalFiles: number;
  readonly doneFiles: number;
  readonly failedFiles: number;
  readonly totalBytes: number;
  readonly doneBytes: number;
  readonly lastError: string | null;
}

/** The progress of the newest encryption or decryption job of one of the account's folders; null when none. */
export async function encryptionProgress(services: Services, accountId: number, folderId: number): Promise<JobProgress | null> {
  const job = await latestJobOfFolder(services.db, accountId, folderId);
  if (!job) return null;
  const state = job.finishedAt ? 'finished' : job.leaseUntil.getTime() > services.now().getTime() ? 'running' : 'waiting';
  const { id: jobId, kind, totalFiles, doneFiles, failedFiles, totalBytes, doneBytes, lastError } = job;
  return { jobId, kind, state, totalFiles, doneFiles, failedFiles, totalBytes, doneBytes, lastError };
}

export interface RunOptions {
  readonly jobId?: number;
  /** Stop (giving the lease back) after this many files: for tests of resumption. */
  readonly maxFiles?: number;
  /** Stop between two files (giving the lease back) once aborted: an instance shutting down. */
  readonly signal?: AbortSignal;
  readonly log?: Logger;
}

export interface RunReport {
  readonly jobsFinished: number;
  readonly files: number;
}

/** Works on open jobs whose lease is free until none is left (or the options say stop); safe on every instance at once. */
export async function runEncryptionJobs(services: Services, options: RunOptions = {}): Promise<RunReport> {
  const log = options.log ?? createLogger(services.config.log);
  // Names the instance, as the e-mail queue's holder does: an operator can tell who holds a job.
  const owner = `${os.hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  let jobsFinished = 0;
  let files = 0;
  for (;;) {
    if (options.signal?.aborted || (options.maxFiles !== undefined && files >= options.maxFiles)) break;
    const job = await claimJob(services.db, { owner, now: services.now(), leaseUntil: leaseEnd(services), jobId: options.jobId });
    if (!job) break;
    const outcome = await workOn(services, log, owner, job, {
      maxFiles: options.maxFiles === undefined ? undefined : options.maxFiles - files,
      signal: options.signal,
    });
    files += outcome.files;
    if (outcome.finished) jobsFinished++;
    if (!outcome.finished || options.jobId !== undefined) break;
  }
  return { jobsFinished, files };
}

const leaseEnd = (services: Services) => new Date(services.now().getTime() + services.config.jobLeaseMs);

async function workOn(
  services: Services,
  log: Logger,
  owner: string,
  job: JobRecord,
  limits: { readonly maxFiles?: number; readonly signal?: AbortSignal },
): Promise<{ finished: boolean; files: number }> {
  const { db } = services;
  const dataKey = openJobKey(services.secret, job);
  if (!dataKey) {
    // The server secret changed since: nobody can finish it (an Unlock of the key makes a new job).
    const error = 'the job key cannot be opened (was the server secret changed?)';
    log.error('encryption job failed', { job: job.id, error });
    await finishJob(db, job.id, owner, services.now(), error);
    return { finished: true, files: 0 };
  }

  const failed = new Set<number>();
  const nextWork = (afterId: number, limit: number, from: Kysely<Database> = db): Promise<FileWork[]> =>
    job.kind === 'encrypt'
      ? plainFilesOfKey(from, job.keyId, afterId, limit)
      : decryptableFilesOfRegion(from, job.accountId, job.folderId, job.keyId, afterId, limit);
  let files = 0;

  // Passes in id order, again while a pass did something (a file moved in with a lower id); then the job ends under the account lock.
  for (;;) {
    let didSomething = false;
    for (let afterId = 0; ; ) {
      const batch = await nextWork(afterId, BATCH);
      if (batch.length === 0) break;
      afterId = batch[batch.length - 1].id;
      for (const work of batch) {
        if (failed.has(work.id)) continue;
        if (limits.signal?.aborted || (limits.maxFiles !== undefined && files >= limits.maxFiles)) {
          await releaseJob(db, job.id, owner);
          return { finished: false, files };
        }
        if (!(await renewLease(db, job.id, owner, leaseEnd(services)))) return { finished: false, files }; // taken over
        const error = await withLeaseKept(services, job.id, owner, () => processFile(services, job, work, dataKey));
        if (error === null) {
          files++;
          didSomething = true;
        } else {
          failed.add(work.id);
          log.error('encryption job: a file failed', { job: job.id, file: work.id, error });
          await recordJobProgress(db, job.id, { files: 0, bytes: 0, failed: 1, error });
        }
      }
    }
    if (didSomething) continue;
    const end = await db.transaction().execute(async (tx) => {
      await lockAccountTree(tx, job.accountId);
      const left = (await nextWork(0, failed.size + 1, tx)).filter((work) => !failed.has(work.id));
      if (left.length > 0) return 'more' as const;
      return (await finishJob(tx, job.id, owner, services.now())) ? ('finished' as const) : ('lost' as const);
    });
    if (end === 'more') continue;
    if (end === 'lost') return { finished: false, files };
    // A decrypted key (or one whose files all went) is no longer needed.
    await deleteKeyIfUnused(db, job.keyId);
    log.info('encryption job finished', { job: job.id, kind: job.kind, files, failed: failed.size });
    return { finished: true, files };
  }
}

/** Encrypts or decrypts one file for the job; null when done (or nothing to do), else the error. */
async function processFile(services: Services, job: JobRecord, work: FileWork, dataKey: Buffer): Promise<string | null> {
  // Counted in the switching transaction: the next pass looks only for files still to switch, so a count
  // left for after the commit would be lost if the process died in between.
  const progress = { files: 1, bytes: work.size, failed: 0 };
  const onSwitched = (tx: Kysely<Database>) => recordJobProgress(tx, job.id, progress);
  try {
    const outcome =
      job.kind === 'encrypt'
        ? await encryptFile(services, work.id, { keyId: job.keyId, dataKey, folderKeyId: job.keyId, onSwitched })
        : await decryptFile(services, work.id, { keyId: job.keyId, dataKey, onSwitched });
    // Switched meanwhile by something else, or no longer the job's: done with it all the same.
    if (outcome !== 'done') await recordJobProgress(services.db, job.id, progress);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Runs `work`, renewing the job's lease every third of its length meanwhile (a large file). */
async function withLeaseKept<T>(services: Services, jobId: number, owner: string, work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => {
    void renewLease(services.db, jobId, owner, leaseEnd(services)).catch(() => {});
  }, services.config.jobLeaseMs / 3);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

// ---- Running in the background -------------------------------------------------------------------

const kicks = new WeakMap<Services, () => void>();

/** Asks this process's runner (if one is scheduled for these services) to look for work now. */
export function kickEncryptionJobs(services: Services): void {
  kicks.get(services)?.();
}

/** Runs jobs in the background: at once (resuming after a restart), every `intervalMs`, and when kicked. */
export function scheduleEncryptionJobs(services: Services, log: Logger, intervalMs = 5_000): BackgroundRounds {
  const rounds = scheduleRounds(services, log, 'encryption jobs', intervalMs, async (signal) => void (await runEncryptionJobs(services, { signal, log })));
  kicks.set(services, rounds.kick);
  return {
    kick: rounds.kick,
    async stop() {
      kicks.delete(services);
      await rounds.stop();
    },
  };
}

const FINISHED_JOB_RETENTION_MS = 7 * 24 * 3600_000;

/** Housekeeping: expired unlocks, unused keys, old finished jobs and work files a crash left behind; idempotent deletes. */
export async function purgeEncryptionLeftovers(services: Services): Promise<void> {
  const now = services.now();
  await deleteExpiredUnlocks(services.db, now);
  while ((await deleteUnusedKeys(services.db, 500)) === 500);
  await deleteFinishedJobs(services.db, new Date(now.getTime() - FINISHED_JOB_RETENTION_MS));
  await sweepWorkFiles(services);
}
