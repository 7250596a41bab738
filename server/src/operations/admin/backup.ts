/**
 * `fss backup` and `fss restore` of the embedded default (README, "Backup and restore"). A backup is a data folder:
 * fss.sqlite (a snapshot taken while the service runs), content/ with every blob that snapshot names, secret.key,
 * and backup.json, written last, which marks it complete. Blobs never change and go only after the commit that
 * removed their last row, so the snapshot's blobs are there to copy, save those whose rows a commit removed after
 * the snapshot: then the snapshot is taken again and what it adds is copied (a few rounds at most).
 * Unfinished uploads and derived images (thumbnails, made again on use) are left out.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../../config';
import type { ContentStore } from '../../storage/content/content-store';
import { syncDirectory, syncFile } from '../../storage/content/file-sync';
import { LocalDiskStore } from '../../storage/content/local-disk-store';
import { contentStoreFor } from '../../storage/content/stores';
import { closeDatabase, openSqliteReadOnly, SQLITE_FILE_NAME } from '../../storage/db/engine/database';
import type { NamedBlob } from '../../storage/db/engine/installation-copy';
import { snapshotSqlite } from '../../storage/db/engine/sqlite-snapshot';
import { blobsOf, describeBlob, forEachConcurrently, formatBytes, knownSha256, progressPrinter } from './migrate-installation';

/** A refusal before anything was written; the message says why and what to do. */
export class BackupRefused extends Error {}

export const BACKUP_MARKER = 'backup.json';
const SECRET_FILE = 'secret.key';
const WORK_DIR = '.tmp';
const MAX_ROUNDS = 5;
const JOBS = 4;

export interface BackupSummary {
  readonly files: number;
  readonly blobs: number;
  readonly bytes: number;
  readonly seconds: number;
  /** Blobs the installation's database names but its store lacks or holds damaged (fss fsck on it tells more). */
  readonly problems: readonly string[];
}

export async function backupInstallation(config: Config, dir: string, print: (line: string) => void): Promise<BackupSummary> {
  const started = Date.now();
  if (config.databaseUrl !== undefined) {
    throw new BackupRefused('fss backup copies the embedded default (SQLite); with PostgreSQL, follow README "Backup and restore" (pg_dump, then the bucket)');
  }
  if (!(await exists(path.join(config.dataDir, SQLITE_FILE_NAME)))) throw new BackupRefused(`${config.dataDir} holds no installation (no ${SQLITE_FILE_NAME}): check FSS_DATA_DIR`);
  const target = path.resolve(dir);
  if ((await fs.readdir(target).catch(() => [])).length > 0) throw new BackupRefused(`${target} is not empty: back up into a new or empty folder`);
  // 0700: the backup holds password hashes, every file and the server secret.
  await fs.mkdir(target, { recursive: true, mode: 0o700 });
  await fs.chmod(target, 0o700);
  const work = path.join(target, WORK_DIR);
  await fs.mkdir(work, { mode: 0o700 });

  const source = contentStoreFor(config);
  const copies = new LocalDiskStore(path.join(target, 'content'));
  let files = 0;
  let missing = new Set<string>();
  const problems: string[] = [];
  let named = new Set<string>();
  for (let round = 1; ; round++) {
    const snapshot = path.join(work, `${SQLITE_FILE_NAME}.${round}`);
    const summary = snapshotSqlite(config.dataDir, snapshot);
    await fs.chmod(snapshot, 0o600);
    await fs.rename(snapshot, path.join(target, SQLITE_FILE_NAME));
    files = summary.files;
    if (round === 1) {
      print(`database: copied (${files} file(s)${summary.unfinishedUploads ? `; ${summary.unfinishedUploads} unfinished upload(s) left out, their clients start them again` : ''})`);
    }
    const db = openSqliteReadOnly(target);
    const nowMissing = new Set<string>();
    named = new Set();
    let copied = 0;
    const progress = progressPrinter(print, () => `content: ${copied} blob(s) copied`);
    try {
      await forEachConcurrently(blobsOf(db), JOBS, async (blob) => {
        named.add(blob.key);
        if (await copies.stat(blob.key)) return; // copied in an earlier round: a key is written once, whole
        const problem = await copyBlob(source, copies, blob, work);
        if (problem === 'missing') nowMissing.add(blob.key);
        else if (problem) problems.push(problem);
        copied++;
        progress.tick();
      });
    } finally {
      await closeDatabase(db);
    }
    // A key missing twice running is not a removal that raced the snapshot: the installation lacks it.
    const raced = [...nowMissing].filter((key) => !missing.has(key));
    missing = nowMissing;
    if (raced.length === 0 || round === MAX_ROUNDS) break;
    print(`content: ${raced.length} blob(s) were removed after the database was copied; copying the database again`);
  }
  for (const key of missing) problems.push(`${key}: named by the database, missing in the content store`);
  // Blobs of earlier rounds whose rows the last snapshot no longer has: fss fsck would call them orphans.
  let blobs = 0;
  let bytes = 0;
  for await (const key of copies.listKeys()) {
    if (!named.has(key)) {
      await copies.delete(key);
      continue;
    }
    blobs++;
    bytes += (await copies.stat(key))?.size ?? 0;
  }

  const secret = path.join(config.dataDir, SECRET_FILE);
  const hasSecret = await exists(secret);
  if (hasSecret) await fs.copyFile(secret, path.join(target, SECRET_FILE));
  if (hasSecret) await fs.chmod(path.join(target, SECRET_FILE), 0o600);
  await syncFile(path.join(target, SQLITE_FILE_NAME));
  await fs.rm(work, { recursive: true, force: true });
  const marker = { format: 'fss-backup-1', createdAt: new Date(started).toISOString(), files, blobs, bytes, secret: hasSecret ? SECRET_FILE : 'FSS_SECRET (not in the backup)' };
  await fs.writeFile(path.join(target, BACKUP_MARKER), JSON.stringify(marker, null, 2) + '\n', { mode: 0o600 });
  await syncFile(path.join(target, BACKUP_MARKER));
  await syncDirectory(target);

  const seconds = (Date.now() - started) / 1000;
  print(`backup of ${files} file(s) in ${target}: ${blobs} blob(s), ${formatBytes(bytes)} of content, in ${seconds.toFixed(1)} s`);
  print(
    hasSecret
      ? `secret: ${SECRET_FILE} is in the backup (signed URLs and sealed extraction codes need it). The backup holds secrets and every file: keep it private.`
      : 'secret: the service runs with FSS_SECRET, which is not in the backup: keep it with the backup, a restore needs it. The backup holds every file: keep it private.',
  );
  return { files, blobs, bytes, seconds, problems };
}

/** Copies one blob, checking its size and hash; 'missing' when the store no longer has it, a problem's text, or null. */
async function copyBlob(from: ContentStore, to: LocalDiskStore, blob: NamedBlob, work: string): Promise<string | 'missing' | null> {
  if ((await from.stat(blob.key)) === null) return 'missing';
  const temp = path.join(work, randomBytes(12).toString('hex'));
  const hash = createHash('sha256');
  let size = 0;
  try {
    try {
      await pipeline(
        await from.read(blob.key),
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            hash.update(chunk);
            size += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(temp, { flags: 'wx', mode: 0o600 }),
      );
    } catch (error) {
      if ((await from.stat(blob.key)) === null) return 'missing';
      throw error;
    }
    if (await to.stat(blob.key)) await to.delete(blob.key);
    await to.putFile(blob.key, temp);
  } finally {
    await fs.rm(temp, { force: true });
  }
  const sha256 = hash.digest('hex');
  // Copied as they are, as the installation holds them; fss fsck on the installation tells more.
  if (blob.kind === 'content' && size !== blob.size) return `${describeBlob(blob)}: ${size} bytes in the store, ${blob.size} in the database`;
  const want = knownSha256(blob);
  if (want !== undefined && sha256 !== want) return `${describeBlob(blob)}: the stored bytes hash to ${sha256}, not ${want}`;
  return null;
}

/**
 * Copies a complete backup into the data folder of `config`, which must be empty (the service stopped, the old folder
 * moved aside): content first, the database last, so a folder with a database never lacks a blob it names.
 */
export async function restoreInstallation(config: Config, dir: string, print: (line: string) => void): Promise<{ readonly blobs: number; readonly bytes: number }> {
  const started = Date.now();
  if (config.databaseUrl !== undefined) {
    throw new BackupRefused('fss restore fills the embedded default (SQLite); with PostgreSQL, follow README "Backup and restore" (pg_restore, then the bucket)');
  }
  const backup = path.resolve(dir);
  if (!(await exists(path.join(backup, BACKUP_MARKER))) || !(await exists(path.join(backup, SQLITE_FILE_NAME)))) {
    throw new BackupRefused(`${backup} holds no complete backup (no ${BACKUP_MARKER}): a backup that was interrupted cannot be restored`);
  }
  const dataDir = path.resolve(config.dataDir);
  if ((await fs.readdir(dataDir).catch(() => [])).length > 0) {
    throw new BackupRefused(`${dataDir} (FSS_DATA_DIR) is not empty: stop the service, move that folder aside, and restore into an empty one`);
  }
  const hasSecret = await exists(path.join(backup, SECRET_FILE));
  if (!hasSecret && config.secret === undefined) {
    // Else the first start would make a new secret.key, and every URL and sealed code of the backup would fail.
    throw new BackupRefused('the backup holds no secret.key (its service ran with FSS_SECRET): set FSS_SECRET to that secret, and restore again');
  }
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const work = path.join(dataDir, 'tmp', `restore-${randomBytes(6).toString('hex')}`);
  await fs.mkdir(work, { recursive: true, mode: 0o700 });
  const from = new LocalDiskStore(path.join(backup, 'content'));
  const to = contentStoreFor(config);
  let blobs = 0;
  let bytes = 0;
  try {
    await forEachConcurrently(from.listKeys(), JOBS, async (key) => {
      const temp = path.join(work, randomBytes(12).toString('hex'));
      await fs.copyFile(from.fileOf(key), temp);
      bytes += (await fs.stat(temp)).size;
      await to.putFile(key, temp);
      blobs++;
    });
    if (hasSecret) {
      await fs.copyFile(path.join(backup, SECRET_FILE), path.join(dataDir, SECRET_FILE));
      await fs.chmod(path.join(dataDir, SECRET_FILE), 0o600);
    }
    const temp = path.join(work, SQLITE_FILE_NAME);
    await fs.copyFile(path.join(backup, SQLITE_FILE_NAME), temp);
    await syncFile(temp);
    await fs.rename(temp, path.join(dataDir, SQLITE_FILE_NAME));
    await syncDirectory(dataDir);
  } finally {
    await fs.rm(path.join(dataDir, 'tmp'), { recursive: true, force: true });
  }
  print(`restored into ${dataDir}: the database and ${blobs} blob(s), ${formatBytes(bytes)}, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { blobs, bytes };
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
