/**
 * `fss migrate`: moves an embedded installation into PostgreSQL and S3 (docs/design.md §8), reading the source only;
 * an interrupted run continues where it stopped, and a blob that fails verification is copied again by the next;
 * derived images (thumbnails) are copied after the blobs, unverified: a lost one is remade.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Config } from '../../config';
import type { ContentStore } from '../../storage/content/content-store';
import { LocalDiskStore } from '../../storage/content/local-disk-store';
import { contentStoreFor } from '../../storage/content/stores';
import { sha256OfStream } from '../../storage/content/running-hashes';
import { closeDatabase, migrateToLatest, openDatabaseUnmigrated, openSqliteReadOnly, SQLITE_FILE_NAME } from '../../storage/db/engine/database';
import {
  appliedMigrations,
  beginRun,
  blobKeysNow,
  blobPages,
  blobTotals,
  columnDifferences,
  compareRows,
  copyTables,
  countTables,
  digestTables,
  finishRun,
  foldersDeeperThan,
  type NamedBlob,
  readMarkers,
  schemaState,
  sealedExtractionCodes,
  sqliteDataVersion,
  type TableCount,
  type TableDigest,
} from '../../storage/db/engine/installation-copy';
import type { Database } from '../../storage/db/schema';
import { readSecretFile } from '../../storage/secret';
import { openExtractionCode } from '../sharing/shares';

export type MigrationMode = 'migrate' | 'dry-run' | 'verify-only';

export interface MigrationOptions {
  readonly sourceDataDir: string;
  /** Where it goes: the settings of the environment (FSS_DATABASE_URL, FSS_S3_*, FSS_SECRET). */
  readonly target: Config;
  readonly mode: MigrationMode;
  readonly jobs?: number;
  readonly print: (line: string) => void;
  readonly now?: () => Date;
  /** For tests: called after each blob copied (a throw interrupts the run there). */
  readonly afterBlobCopied?: (copied: number) => void | Promise<void>;
}

export interface MigrationReport {
  /** Everything copied (or, with verify-only, found) and verified. */
  readonly ok: boolean;
  readonly problems: readonly string[];
}

/** A refusal before anything was written; the message says why and what to do. */
export class MigrationRefused extends Error {}

const DEFAULT_JOBS = 4;
const PAGE = 500;
const PROGRESS_EVERY_MS = 2_000;
/** How many sealed values the secret is tried on. */
const SEALED_SAMPLES = 20;

export async function migrateInstallation(options: MigrationOptions): Promise<MigrationReport> {
  const { target, mode, print } = options;
  const now = options.now ?? (() => new Date());
  const jobs = Math.max(1, options.jobs ?? DEFAULT_JOBS);
  const sourceDir = path.resolve(options.sourceDataDir);

  if (target.databaseUrl === undefined) {
    throw new MigrationRefused(
      'the target must be a PostgreSQL database: set FSS_DATABASE_URL (and FSS_S3_BUCKET and the other FSS_S3_* settings for the content) to where the installation moves',
    );
  }
  if (target.secret === undefined) {
    throw new MigrationRefused(
      `set FSS_SECRET to the secret the installation ran with (FSS_SECRET="$(cat ${path.join(sourceDir, 'secret.key')})" when it kept it in its data folder): ` +
        'extraction codes, download and cover-image URLs depend on it, and every instance on the target needs it',
    );
  }
  const secret = target.secret;
  try {
    await fs.access(path.join(sourceDir, SQLITE_FILE_NAME));
  } catch {
    throw new MigrationRefused(`${sourceDir} holds no embedded installation (no ${SQLITE_FILE_NAME})`);
  }

  const source = openSqliteReadOnly(sourceDir);
  const targetDb = await openDatabaseUnmigrated(target);
  const workDirs: string[] = [];
  try {
    // ---- 1. Checks, before anything is written ----------------------------------------------
    const dataVersion = await sqliteDataVersion(source);
    const sourceSchema = await schemaState(source);
    if (sourceSchema.unknown.length > 0) {
      throw new MigrationRefused(`the installation's database was made by a newer version of fss (${sourceSchema.unknown.join(', ')}): run this command of that version`);
    }
    if (sourceSchema.missing.length > 0) {
      throw new MigrationRefused(
        `the installation's database lacks this version's migrations ${sourceSchema.missing.join(', ')}: ` +
          `bring it up to date first (run "fss user list" with FSS_DATA_DIR=${sourceDir} and nothing else set), then run fss migrate again`,
      );
    }
    const sourceId = await sourceIdentity(source);
    const sourceStore = new LocalDiskStore(path.join(sourceDir, 'content'));
    const targetStore = contentStoreFor(target);
    const contentInPlace = targetStore instanceof LocalDiskStore && (await samePath(targetStore.root, sourceStore.root));

    print(`fss migrate${mode === 'migrate' ? '' : ` --${mode}`}`);
    print(`  from: the embedded installation in ${sourceDir} (${sourceId})`);
    print(`  to:   PostgreSQL ${describeDatabase(target.databaseUrl)}; content ${describeContent(target, contentInPlace)}`);
    print(
      mode === 'verify-only'
        ? "  The installation's service must be stopped; the target's may run (what it writes meanwhile shows as changed after the move)."
        : "  Both services must be stopped while this runs: the installation's, and any on the target.",
    );
    await checkSecret(source, sourceDir, secret, print);

    const targetSchema = await schemaState(targetDb).catch((error: unknown) => {
      throw new MigrationRefused(`the target database does not answer: ${error instanceof Error ? error.message : String(error)}`);
    });
    // One listing request: whether the store answers at all (bucket, credentials), and holds anything.
    const targetStoreEmpty = await isEmptyStore(targetStore).catch((error: unknown) => {
      throw new MigrationRefused(`the target content store does not answer: ${error instanceof Error ? error.message : String(error)}`);
    });
    if (targetSchema.unknown.length > 0) {
      throw new MigrationRefused(`the target database was migrated by a newer version of fss (${targetSchema.unknown.join(', ')})`);
    }
    const markers = await readMarkers(targetDb);
    const other = markers.find((marker) => marker.sourceId !== sourceId);
    if (other) {
      throw new MigrationRefused(
        `the target database holds a migration of another installation (${other.sourceId}, from ${other.sourceDir}): ` +
          'move each installation into a database (and bucket prefix) of its own',
      );
    }
    const marker = markers.find((m) => m.sourceId === sourceId) ?? null;
    const secretCheck = secretCheckValue(secret);
    const targetCounts = targetSchema.empty ? [] : await countTables(targetDb);
    const targetRows = targetCounts.reduce((sum, count) => sum + count.rows + count.left, 0);

    if (marker) {
      if (marker.secretCheck !== secretCheck) {
        throw new MigrationRefused('FSS_SECRET is not the secret the earlier run of this migration was made with: use that one');
      }
      if (marker.copied) {
        // verify-only reports what differs from the installation instead.
        const changed = mode === 'verify-only' ? [] : await changedSinceCopy(targetDb, marker.copied);
        if (changed.length > 0) {
          throw new MigrationRefused(
            `the target has changed since this migration copied the installation (${marker.rowsCopiedAt!.toISOString()}): ${changed.join(', ')}. ` +
              'Has the service run on it? Running the migration again would throw those changes away. If the target is in use, the move is done; ' +
              'to start the move over, empty the target (drop and create the database, and use an empty bucket prefix)',
          );
        }
      } else if (targetRows > 0) {
        throw new MigrationRefused(`the target database holds rows that no run of this migration copied (${describeCounts(targetCounts)})`);
      }
      print(`target: holds this migration's run of ${marker.startedAt.toISOString()} (${marker.finishedAt ? 'finished' : 'unfinished'})`);
    } else {
      if (mode === 'verify-only') throw new MigrationRefused('the target holds no migration of this installation: there is nothing to verify');
      if (targetRows > 0) {
        throw new MigrationRefused(`the target database already holds data (${describeCounts(targetCounts)}): migrate into an empty database`);
      }
      if (!contentInPlace && !targetStoreEmpty) {
        throw new MigrationRefused('the target content store already holds content: use an empty bucket prefix (FSS_S3_PREFIX) or bucket');
      }
      print(`target: empty${targetSchema.empty ? ' (no schema yet)' : ''}`);
    }
    if (mode === 'verify-only' && targetSchema.missing.length > 0) {
      throw new MigrationRefused(`the target's schema lacks migrations ${targetSchema.missing.join(', ')}: run fss migrate (without --verify-only)`);
    }

    const sourceCounts = await countTables(source);
    const totals = await blobTotals(source);
    await noteDeepFolders(source, target.limits.maxFolderDepth, print);
    if (mode === 'dry-run') {
      print('Would copy:');
      printCounts(sourceCounts, print);
      print(
        `  content: ${totals.content} blob(s), ${formatBytes(totals.contentBytes)}, and ${totals.images} cover image(s)` +
          (contentInPlace ? ' (stay where they are)' : ' (those the target holds already, with the right size, are skipped)'),
      );
      if (targetSchema.missing.length > 0) print(`  and migrate the target's schema first (${targetSchema.missing.length} migration(s))`);
      print('dry run: nothing was written');
      return { ok: true, problems: [] };
    }

    const problems: string[] = [];
    const started = now();
    if (mode === 'migrate') {
      // ---- 2. Schema and rows -----------------------------------------------------------------
      const migrated = await migrateToLatest(targetDb);
      if (migrated.length > 0) print(`schema: ${migrated.length} migration(s) applied to the target`);
      await refuseColumnDifferences(source, targetDb);
      await beginRun(targetDb, { sourceId, sourceDir, secretCheck, at: started });
      print('rows: copying every table in one transaction (a run interrupted here leaves the target as it was)');
      const tableWidth = Math.max(...sourceCounts.map((count) => count.table.length));
      let lastRowsLine = 0;
      await copyTables(source, targetDb, { sourceId, at: started }, {
        onRows: (table, copied, rows) => {
          if (Date.now() - lastRowsLine < PROGRESS_EVERY_MS || copied === rows) return;
          lastRowsLine = Date.now();
          print(`  ${table.padEnd(tableWidth)}  ${copied}/${rows}…`);
        },
        onTableDone: (table, digest) => print(`  ${table.padEnd(tableWidth)}  ${digest.rows}`),
      });
      for (const count of sourceCounts) {
        if (count.left > 0) print(`  not copied: ${count.left} ${count.leftWhat ?? `row(s) of ${count.table}`}${count.leftWhy ? `: ${count.leftWhy}` : ''}`);
      }

      // ---- 3. Blobs ---------------------------------------------------------------------------
      if (contentInPlace) {
        print('content: stays where it is (the target uses the same folder)');
      } else {
        const workDir = await makeWorkDir(sourceDir);
        workDirs.push(workDir);
        const copied = await copyBlobs(targetDb, sourceStore, targetStore, { jobs, workDir, totals, print, afterBlobCopied: options.afterBlobCopied });
        problems.push(...copied.problems);
        print(`derived images (thumbnails): ${await copyDerivedImages(sourceStore, targetStore, jobs)} copied`);
        const swept = await targetStore.sweepPartialWrites(started);
        if (swept > 0) print(`  removed ${swept} unfinished write(s) of an interrupted run`);
      }
    } else {
      await refuseColumnDifferences(source, targetDb);
    }

    // ---- 4. Verification ------------------------------------------------------------------------
    // After a finished move the service may have run on the target: what it changed is told apart, not blamed.
    const moved = mode === 'verify-only' && marker?.finishedAt && marker.copied ? marker.copied : null;
    const rows = await verifyRows(source, targetDb, moved, print);
    problems.push(...rows.problems);
    const blobs = await verifyBlobs(source, targetDb, sourceStore, targetStore, { jobs, totals, print, repair: mode === 'migrate' && !contentInPlace });
    problems.push(...blobs.problems);

    // ---- 5. The source must not have changed meanwhile --------------------------------------------
    if ((await sqliteDataVersion(source)) !== dataVersion) {
      problems.push(`the installation's database in ${sourceDir} was written to while this ran: stop its service, and run fss migrate again`);
    }

    const seconds = ((now().getTime() - started.getTime()) / 1000).toFixed(1);
    if (problems.length > 0) {
      print(`${problems.length} problem(s):`);
      for (const problem of problems) print(`  ${problem}`);
      print(mode === 'migrate' ? `migration NOT complete (${seconds} s): fix the above and run fss migrate again; it continues where it stopped` : 'verification FAILED');
      return { ok: false, problems };
    }
    if (mode === 'migrate') {
      await finishRun(targetDb, sourceId, now());
      print(`done in ${seconds} s: every row and every blob copied and verified.`);
      print('Start the service with the same FSS_DATABASE_URL, FSS_S3_* and FSS_SECRET as this command had.');
      print(`The installation in ${sourceDir} was not changed: keep it until the new one has proven itself.`);
    } else if (rows.notVerified + blobs.notVerified === 0) {
      print('verified: every row and every blob of the installation is in the target.');
    } else {
      print('verified: every row and blob of the installation that the target still holds as moved is as it was moved.');
      print(
        `Not verified: ${rows.notVerified} row(s) and ${blobs.notVerified} blob(s) the service added, changed or removed after the move ` +
          '(its own changes cannot be told from damage by comparing with the installation); fss fsck on the target checks its rows against its store.',
      );
    }
    return { ok: true, problems: [] };
  } finally {
    for (const dir of workDirs) await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
    await closeDatabase(source);
    await closeDatabase(targetDb);
  }
}

// ---- Checks -----------------------------------------------------------------------------------------

/**
 * Folders deeper than the target's limit are copied as they are (a move never reshapes a tree), and the
 * operator is told, since the service refuses to nest anything deeper there.
 */
async function noteDeepFolders(source: Kysely<Database>, maxDepth: number, print: (line: string) => void): Promise<void> {
  const deep = await foldersDeeperThan(source, maxDepth);
  if (!deep.deepest) return;
  print(
    `note: ${deep.count} folder(s) lie deeper than the limit of ${maxDepth} levels (FSS_MAX_FOLDER_DEPTH), the deepest ${deep.deepest.depth} levels deep ` +
      `(folder ${deep.deepest.id} of account ${deep.deepest.account}): they are copied as they are; the service will not nest anything deeper than the limit`,
  );
}

/** What the installation is, wherever it lies now: when its database was created (the first migration's time). */
async function sourceIdentity(source: Kysely<Database>): Promise<string> {
  const applied = await appliedMigrations(source);
  const first = [...applied.entries()].sort(([a], [b]) => a.localeCompare(b))[0];
  if (!first) throw new MigrationRefused('the installation\'s database has no schema');
  return `embedded installation created ${first[1]}`;
}

/** FSS_SECRET must be the secret the installation ran with: its secret.key, and what it sealed must open. */
async function checkSecret(source: Kysely<Database>, sourceDir: string, secret: Buffer, print: (line: string) => void): Promise<void> {
  const own = await readSecretFile(sourceDir);
  if (own && !own.equals(secret)) {
    throw new MigrationRefused(
      `FSS_SECRET is not the secret of the installation (${path.join(sourceDir, 'secret.key')}): ` +
        'extraction codes, download and cover-image URLs would stop working. Set FSS_SECRET to that file\'s content',
    );
  }
  const sealed = await sealedExtractionCodes(source, SEALED_SAMPLES);
  const unopened = sealed.filter((value) => openExtractionCode(secret, value) === null).length;
  if (unopened > 0) {
    throw new MigrationRefused(`FSS_SECRET does not open ${unopened} of ${sealed.length} extraction code(s) the installation sealed: it is not the secret the installation ran with`);
  }
  if (own) print(`secret: FSS_SECRET is the installation's secret.key`);
  else if (sealed.length > 0) print(`secret: FSS_SECRET opens the installation's sealed extraction codes`);
  else print('secret: nothing to check FSS_SECRET against (no secret.key, no sealed value): make sure it is the secret the installation ran with');
}

/** A check value of the secret (HMAC under it of a fixed text): equal secrets, equal values. */
function secretCheckValue(secret: Buffer): string {
  return createHmac('sha256', secret).update('fss migrate: secret check').digest('hex');
}

async function changedSinceCopy(db: Kysely<Database>, copied: ReadonlyMap<string, TableDigest>): Promise<string[]> {
  const now = await digestTables(db);
  const changed: string[] = [];
  for (const [table, digest] of now) {
    const then = copied.get(table);
    if (!then || then.digest !== digest.digest) changed.push(`${table} (${then?.rows ?? 0} rows copied, ${digest.rows} now${then && then.rows === digest.rows ? ', changed' : ''})`);
  }
  return changed;
}

async function refuseColumnDifferences(source: Kysely<Database>, target: Kysely<Database>): Promise<void> {
  const differences = await columnDifferences(source, target);
  if (differences.length > 0) throw new MigrationRefused(`the source's and the target's tables differ: ${differences.join('; ')}`);
}

async function isEmptyStore(store: ContentStore): Promise<boolean> {
  for await (const key of store.listKeys()) {
    void key;
    return false;
  }
  return true;
}

async function samePath(a: string, b: string): Promise<boolean> {
  const real = (p: string) => fs.realpath(p).catch(() => path.resolve(p));
  return (await real(a)) === (await real(b));
}

// ---- Blobs ------------------------------------------------------------------------------------------

/** A blob of the installation, and (with a target) whether the target's row still names it: the service may have removed or replaced it. */
type MovedBlob = NamedBlob & { readonly inTarget?: 'as-moved' | 'gone' | 'replaced' };

/** The installation's blobs (content rows, then cover images), each with what the target's rows say of it now. */
export async function* blobsOf(source: Kysely<Database>, target?: Kysely<Database>): AsyncGenerator<MovedBlob> {
  for await (const page of blobPages(source, PAGE)) {
    const now = target && (await blobKeysNow(target, page));
    for (const blob of page) {
      const key = now?.get(blob.id);
      yield now ? { ...blob, inTarget: key === undefined ? 'gone' : key === blob.key ? 'as-moved' : 'replaced' } : blob;
    }
  }
}

export const describeBlob = (blob: NamedBlob) => `${blob.kind === 'content' ? `content ${blob.id}` : `the cover image of share ${blob.id}`} (${blob.key})`;

/** The SHA-256 a blob's bytes must have, when the rows tell: a cover image's key is made from it (`ab/cd/<sha256>-<16 hex>`). */
export const knownSha256 = (blob: NamedBlob) => (blob.kind === 'image' ? blob.key.slice(6, 70) : blob.encrypted ? undefined : blob.sha256);

/** Derived images, under the same keys (not verified: one lost is only made again on first use). */
async function copyDerivedImages(from: LocalDiskStore, to: ContentStore, jobs: number): Promise<number> {
  let copied = 0;
  await forEachConcurrently(from.listDerivedKeys(), jobs, async (key) => {
    if (await to.stat(key)) return;
    await to.putDerived(key, Buffer.concat(await (await from.read(key)).toArray()));
    copied++;
  });
  return copied;
}

/** Runs `work` on every item, `jobs` at a time; the first failure stops the rest and is thrown. */
export async function forEachConcurrently<T>(items: AsyncIterable<T>, jobs: number, work: (item: T) => Promise<void>): Promise<void> {
  const iterator = items[Symbol.asyncIterator]();
  let failed = false;
  const worker = async () => {
    while (!failed) {
      const next = await iterator.next();
      if (next.done) return;
      try {
        await work(next.value);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  // Every worker ends before this returns, so that nothing runs on after a failure.
  const results = await Promise.allSettled(Array.from({ length: jobs }, worker));
  const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure) throw failure.reason;
}

/** Prints `describe()` at most every 2 s while work goes on (tick), and once at the end (done). */
export function progressPrinter(print: (line: string) => void, describe: () => string): { tick(): void; done(): void } {
  let last = Date.now();
  return {
    tick() {
      if (Date.now() - last < PROGRESS_EVERY_MS) return;
      last = Date.now();
      print(`  ${describe()}…`);
    },
    done: () => print(`  ${describe()}`),
  };
}

/** What copyBlobs and verifyBlobs both take: how many at a time, the blobs' totals, and where lines go. */
interface BlobPass {
  readonly jobs: number;
  readonly totals: { readonly content: number; readonly contentBytes: number; readonly images: number };
  readonly print: (line: string) => void;
}

async function copyBlobs(
  db: Kysely<Database>,
  from: LocalDiskStore,
  to: ContentStore,
  options: BlobPass & { readonly workDir: string; readonly afterBlobCopied?: (copied: number) => void | Promise<void> },
): Promise<{ problems: string[] }> {
  const { totals, print } = options;
  const problems: string[] = [];
  const total = totals.content + totals.images;
  let seen = 0;
  let copied = 0;
  let present = 0;
  let bytesCopied = 0;
  print(`content: copying ${total} blob(s) (${formatBytes(totals.contentBytes)} of content), ${options.jobs} at a time`);
  const progress = progressPrinter(print, () => `${seen}/${total} blob(s): ${copied} copied (${formatBytes(bytesCopied)}), ${present} already there`);
  await forEachConcurrently(blobsOf(db), options.jobs, async (blob) => {
    const inSource = await from.stat(blob.key);
    const size = blob.kind === 'content' ? blob.size : inSource?.size;
    const inTarget = await to.stat(blob.key);
    if (size !== undefined && inTarget?.size === size) {
      present++;
    } else if (!inSource) {
      problems.push(`${describeBlob(blob)}: missing in the installation's content folder`);
    } else if (inSource.size !== size) {
      problems.push(`${describeBlob(blob)}: the installation's bytes are ${inSource.size}, not ${size}`);
    } else {
      // A key is only ever written once, whole: what it holds with another size is no copy of it.
      if (inTarget) await to.delete(blob.key);
      await putCopy(from, to, blob.key, options.workDir);
      copied++;
      bytesCopied += inSource.size;
      await options.afterBlobCopied?.(copied);
    }
    seen++;
    progress.tick();
  });
  progress.done();
  return { problems };
}

/** Work folders of runs that were killed are removed once this old. */
const STALE_WORK_DIR_MS = 3600_000;

/**
 * Where blobs are handed to the target store: a folder of this run in `<source>/tmp/` (same file system,
 * so they can be linked), else the system's temporary folder; removes what killed runs left.
 */
async function makeWorkDir(sourceDir: string): Promise<string> {
  const parent = path.join(sourceDir, 'tmp');
  const name = `migrate-${randomBytes(6).toString('hex')}`;
  try {
    await fs.mkdir(parent, { recursive: true, mode: 0o700 });
    for (const entry of await fs.readdir(parent)) {
      if (!entry.startsWith('migrate-')) continue;
      const stats = await fs.stat(path.join(parent, entry)).catch(() => null);
      if (stats && Date.now() - stats.mtimeMs > STALE_WORK_DIR_MS) await fs.rm(path.join(parent, entry), { recursive: true, force: true });
    }
    await fs.mkdir(path.join(parent, name), { mode: 0o700 });
    return path.join(parent, name);
  } catch {
    return fs.mkdtemp(path.join(os.tmpdir(), 'fss-migrate-'));
  }
}

/** Puts the source's file of `key` under the same key in `to`: putFile consumes it, so it gets a hard link (else a copy). */
async function putCopy(from: LocalDiskStore, to: ContentStore, key: string, workDir: string): Promise<void> {
  const work = path.join(workDir, randomBytes(8).toString('hex'));
  try {
    try {
      await fs.link(from.fileOf(key), work);
    } catch {
      await fs.copyFile(from.fileOf(key), work);
    }
    await to.putFile(key, work);
  } finally {
    await fs.rm(work, { force: true });
  }
}

const sha256Of = async (stream: Readable): Promise<string> => (await sha256OfStream(stream)).sha256;

async function verifyBlobs(
  source: Kysely<Database>,
  target: Kysely<Database>,
  from: LocalDiskStore,
  to: ContentStore,
  /** repair: delete a target blob that fails while the source's is right, so that a re-run copies it. */
  options: BlobPass & { readonly repair: boolean },
): Promise<{ problems: string[]; notVerified: number }> {
  const { print } = options;
  const problems: string[] = [];
  const total = options.totals.content + options.totals.images;
  let checked = 0;
  let gone = 0;
  let replaced = 0;
  print(`verify: reading the installation's ${total} blob(s) back from the target`);
  const progress = progressPrinter(print, () => `${checked}/${total} blob(s) checked, ${problems.length} problem(s)`);
  await forEachConcurrently(blobsOf(source, target), options.jobs, async (blob) => {
    checked++;
    if (blob.inTarget === 'gone') gone++;
    if (blob.inTarget === 'replaced') replaced++;
    if (blob.inTarget !== 'as-moved') return;
    const problem = await checkBlob(blob, from, to);
    progress.tick();
    if (!problem) return;
    let line = `${describeBlob(blob)}: ${problem.text}`;
    if (problem.sourceIsRight && options.repair) {
      await to.delete(blob.key);
      line += ' (deleted from the target: the next run copies it again)';
    } else if (!problem.sourceIsRight) {
      line += ' (the installation\'s own bytes are wrong or missing: fss fsck on it tells more)';
    }
    problems.push(line);
  });
  progress.done();
  const inTarget = await blobTotals(target);
  const added = inTarget.content + inTarget.images - (total - gone - replaced);
  if (gone + replaced + added > 0) {
    print(`  not verified: ${gone} removed and ${replaced} replaced after the move (their rows are gone or name other blobs); ${added} added after the move`);
  }
  return { problems, notVerified: gone + replaced + Math.max(0, added) };
}

async function checkBlob(blob: NamedBlob, from: LocalDiskStore, to: ContentStore): Promise<{ text: string; sourceIsRight: boolean } | null> {
  const stat = await to.stat(blob.key);
  // What the bytes must hash to: known from the row or the key, or else the source's bytes.
  const expected = async (): Promise<string | null> => knownSha256(blob) ?? ((await from.stat(blob.key)) ? sha256Of(await from.read(blob.key)) : null);
  const sourceIsRight = async (): Promise<boolean> => {
    const inSource = await from.stat(blob.key);
    if (!inSource || (blob.kind === 'content' && inSource.size !== blob.size)) return false;
    const want = await expected();
    return want !== null && (await sha256Of(await from.read(blob.key))) === want;
  };
  if (!stat) return { text: 'missing in the target', sourceIsRight: await sourceIsRight() };
  if (blob.kind === 'content' && stat.size !== blob.size) {
    return { text: `the target holds ${stat.size} bytes, not ${blob.size}`, sourceIsRight: await sourceIsRight() };
  }
  const want = await expected();
  if (want === null) return { text: 'cannot be checked: missing in the installation\'s content folder', sourceIsRight: false };
  const got = await sha256Of(await to.read(blob.key));
  if (got !== want) return { text: `the target's bytes hash to ${got}, not ${want}`, sourceIsRight: await sourceIsRight() };
  return null;
}

// ---- Rows -------------------------------------------------------------------------------------------

/**
 * Rows and digest of every table, on both sides. After a finished move (`moved`), when the service may have run on the
 * target: a table the installation changed after the copy is a problem; one only the target changed is compared row by
 * row, and what the service added, changed or removed is reported as not verified.
 */
async function verifyRows(
  source: Kysely<Database>,
  target: Kysely<Database>,
  moved: ReadonlyMap<string, TableDigest> | null,
  print: (line: string) => void,
): Promise<{ problems: string[]; notVerified: number }> {
  print(moved ? 'verify: rows of every table, against the installation and against what the move copied' : 'verify: rows and digest of every table, on both sides');
  const [ours, theirs] = [await digestTables(source), await digestTables(target)];
  const problems: string[] = [];
  let verified = 0;
  let notVerified = 0;
  for (const [table, digest] of ours) {
    const copy = theirs.get(table)!;
    const then = moved?.get(table);
    if (copy.digest === digest.digest) {
      verified += digest.rows;
    } else if (!moved) {
      if (copy.rows !== digest.rows) problems.push(`table ${table}: ${digest.rows} row(s) in the installation, ${copy.rows} in the target`);
      else problems.push(`table ${table}: the same ${digest.rows} row(s) in number, but not the same rows`);
    } else if (!then || then.digest !== digest.digest) {
      problems.push(`table ${table}: the installation's rows differ from those the move copied (${then?.rows ?? 0} copied, ${digest.rows} now): was it used after the move?`);
    } else {
      const rows = await compareRows(source, target, table);
      verified += rows.same;
      notVerified += rows.changed + rows.removed + rows.added;
      print(`  ${table}: ${rows.same} row(s) as moved; after the move ${rows.changed} changed, ${rows.removed} removed, ${rows.added} added (not verified)`);
    }
  }
  if (!moved) print(`  ${ours.size} tables, ${[...ours.values()].reduce((sum, digest) => sum + digest.rows, 0)} rows: ${problems.length === 0 ? 'equal' : `${problems.length} differ`}`);
  else print(`  ${ours.size} tables: ${verified} row(s) as moved${problems.length > 0 ? `, ${problems.length} table(s) differ` : ''}`);
  return { problems, notVerified };
}

// ---- Output -----------------------------------------------------------------------------------------

function printCounts(counts: readonly TableCount[], print: (line: string) => void): void {
  const width = Math.max(...counts.map((count) => count.table.length));
  for (const count of counts) {
    print(`  ${count.table.padEnd(width)}  ${count.rows}${count.left > 0 ? ` (not: ${count.left} ${count.leftWhat ?? 'more'}${count.leftWhy ? `: ${count.leftWhy}` : ''})` : ''}`);
  }
}

function describeCounts(counts: readonly TableCount[]): string {
  return counts
    .filter((count) => count.rows + count.left > 0)
    .map((count) => `${count.rows + count.left} ${count.table}`)
    .join(', ');
}

/** The database URL without its password. */
function describeDatabase(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.href;
  } catch {
    return '(the FSS_DATABASE_URL database)';
  }
}

function describeContent(config: Config, inPlace: boolean): string {
  if (config.s3) return `in S3, bucket ${config.s3.bucket}${config.s3.prefix ? `, prefix ${config.s3.prefix}` : ''}${config.s3.endpoint ? ` at ${config.s3.endpoint}` : ''}`;
  return inPlace ? `stays in ${path.join(config.dataDir, 'content')}` : `on the local disk in ${path.join(config.dataDir, 'content')} (FSS_S3_BUCKET is not set)`;
}

export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
