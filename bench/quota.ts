/**
 * Section 10: what the quota check costs FileAdd (issue 22). FileAdd's check is one statement,
 * reserveQuota (server/src/storage/db/repositories/items-repository.ts): it adds the file's size to
 * the account's used bytes only where the sum stays within the quota, in FileAdd's transaction.
 * Timing FileAdd with and without a full quota measures nothing (both run the check); so:
 * - FileAdd as clients call it: `calls` instant uploads (FileAdd by the hash of content the account
 *   has) into a new folder, one after another, time to the last byte at the client: p50, p99;
 * - the check alone, in-process, on the run's database with the service stopped, through the
 *   service's own SQLite driver and repository functions: `calls` reserveQuota of the bench
 *   account inside one transaction that is rolled back (nothing changes), each call timed: p50,
 *   p99. Beside it the same row's write without the check (lockAccountTree, which FileAdd runs
 *   before it anyway), and the check a tus upload's creation runs (findAccount + reservedBytes).
 */
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely } from 'kysely';
import { CachingSqliteDialect } from '../server/src/storage/db/engine/sqlite-driver';
import { SQLITE_FILE_NAME } from '../server/src/storage/db/engine/database';
import type { Database } from '../server/src/storage/db/schema';
import { findAccount } from '../server/src/storage/db/repositories/accounts-repository';
import { lockAccountTree, reserveQuota } from '../server/src/storage/db/repositories/items-repository';
import { reservedBytes } from '../server/src/storage/db/repositories/uploads-repository';
import { attribute, callOk, callSigned, login, operation, signedRequest } from './calls';
import { fileAdd, upload } from './content';
import { PASSWORD, BENCH_ACCOUNT } from './populate';
import { startService } from './service';
import { log, percentile, round } from './util';

export interface QuotaOptions {
  readonly dataDir: string;
  readonly runDir: string;
  readonly calls: number;
}

export interface Timings {
  readonly calls: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
}

export interface QuotaResult {
  readonly fileAdd: Timings;
  /** FileAdd's check: reserveQuota. */
  readonly check: Timings;
  /** The same row's write without the check (lockAccountTree). */
  readonly rowWrite: Timings;
  /**
   * What the check adds to the row's write: check minus write, paired call by call (they alternate). Judged by its
   * mean, the time a FileAdd pays on average: a p99 of 20 µs statements measures the machine's pauses, not SQLite.
   */
  readonly added: Timings;
  /** A tus creation's check: the account's row and its uploads' reserved bytes. */
  readonly uploadCheck: Timings;
}

const FILE_BYTES = 64 * 1024;
/** Untimed calls first: the figures are of a running service and warm statements. */
const WARMUP = 20;

function timings(ms: number[]): Timings {
  const sorted = [...ms].sort((a, b) => a - b);
  return { calls: ms.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), meanMs: ms.reduce((sum, x) => sum + x, 0) / ms.length };
}

async function timeEach(calls: number, work: () => Promise<unknown>): Promise<Timings> {
  return timings((await timeAlternating(calls, [work]))[0]);
}

/** Each of `works` once per round, in turn, so that a pause of the machine or of this process falls on a pair alike. */
async function timeAlternating(calls: number, works: ReadonlyArray<() => Promise<unknown>>): Promise<number[][]> {
  for (let i = 0; i < WARMUP; i++) for (const work of works) await work();
  const ms = works.map((): number[] => []);
  for (let i = 0; i < calls; i++) {
    for (const [index, work] of works.entries()) {
      const started = performance.now();
      await work();
      ms[index].push(performance.now() - started);
    }
  }
  return ms;
}

class Rollback extends Error {}

/** The checks alone, on the database in `dataDir` (no service running), rolled back. */
async function timeChecks(dataDir: string, accountId: number, calls: number): Promise<Pick<QuotaResult, 'check' | 'rowWrite' | 'added' | 'uploadCheck'>> {
  const sqlite = new SQLite(path.join(dataDir, SQLITE_FILE_NAME), { fileMustExist: true });
  // As the service opens it (storage/db/engine/database.ts).
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  const db = new Kysely<Database>({ dialect: new CachingSqliteDialect(sqlite) });
  let result: Pick<QuotaResult, 'check' | 'rowWrite' | 'added' | 'uploadCheck'> | undefined;
  try {
    await db.transaction().execute(async (tx) => {
      const [checkMs, rowWriteMs] = await timeAlternating(calls, [
        async () => {
          if (!(await reserveQuota(tx, accountId, FILE_BYTES))) throw new Error('reserveQuota refused: the bench account is full');
        },
        () => lockAccountTree(tx, accountId),
      ]);
      const [check, rowWrite, added] = [timings(checkMs), timings(rowWriteMs), timings(checkMs.map((ms, i) => ms - rowWriteMs[i]))];
      const uploadCheck = await timeEach(calls, async () => {
        const account = await findAccount(tx, { id: accountId });
        return account && account.quotaBytes - account.usedBytes - (await reservedBytes(tx, accountId, new Date()));
      });
      result = { check, rowWrite, added, uploadCheck };
      throw new Rollback();
    });
  } catch (error) {
    if (!(error instanceof Rollback)) throw error;
  } finally {
    await db.destroy();
  }
  return result!;
}

export async function measureQuota(options: QuotaOptions): Promise<QuotaResult> {
  const service = await startService({ dataDir: options.dataDir, logFile: path.join(options.runDir, 'logs', 'quota-service.log') });
  let accountId: number;
  let fileAddTimes: Timings;
  try {
    const session = await login(service.url, BENCH_ACCOUNT, PASSWORD);
    accountId = session.uid;
    const folderXml = await callSigned(service.url, session, 'FileService', 'FolderAdd', { dirid: 0, name: `Quota ${Date.now()}` });
    const folder = Number(attribute(folderXml.slice(folderXml.indexOf('<folder')), 'id'));
    const sent = await upload(service, session, FILE_BYTES, 'first.bin', folder);
    await fileAdd(service, session, folder, 'first.bin', FILE_BYTES, sent.sha256);
    const FileAdd = operation('FileService', 'FileAdd');
    let n = 0;
    // Instant uploads: the content is the account's already; each call is a new file of its own name.
    fileAddTimes = await timeEach(options.calls, () =>
      callOk(service.url, signedRequest('post', FileAdd, session, { name: `copy ${n++}.bin`, ext: 'bin', size: String(FILE_BYTES), dirid: String(folder), hash: sent.sha256 })),
    );
  } finally {
    await service.stop();
  }
  const checks = await timeChecks(options.dataDir, accountId, options.calls);
  const ms = (t: Timings) => `p50 ${round(t.p50Ms, 3)} ms, p99 ${round(t.p99Ms, 3)} ms`;
  log(`quota: FileAdd ${ms(fileAddTimes)}; its check (reserveQuota) ${ms(checks.check)}; the row's write alone ${ms(checks.rowWrite)}; what the check adds ${ms(checks.added)}; a tus creation's check ${ms(checks.uploadCheck)}`);
  return { fileAdd: fileAddTimes, ...checks };
}
