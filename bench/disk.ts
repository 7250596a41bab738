/**
 * The disk as the limit of content (section 4): what this machine's disk does, measured in the
 * same run as the transfers and on the same file system as the service's data folder, so that each
 * transfer is judged as a ratio to it rather than against a fixed MB/s.
 *
 * - Durable write: `bytes` random bytes written to a new file in 8 MiB writes, then one fsync, as
 *   `dd bs=8M conv=fsync` does; timed from the open to the end of the fsync. An upload is durable
 *   when its answer comes (docs/uploads-and-downloads.md §3), so this is the most it could reach.
 * - Cold read: a file's pages evicted from the page cache (posix_fadvise POSIX_FADV_DONTNEED, which
 *   `dd iflag=nocache count=0` calls on the whole file), then read in 8 MiB reads, as
 *   `dd bs=8M of=/dev/null` does. The download is measured in the same state: the blob it serves is
 *   evicted just before it (a file service's downloads are mostly of files written long before).
 *   Clean pages only can be evicted: a blob is fsync'ed before it becomes content, so all of it.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs, statSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { SQLITE_FILE_NAME } from '../server/src/storage/db/engine/database';
import { MiB, run } from './util';

const BLOCK = 8 * MiB;

export interface DiskFigure {
  readonly bytes: number;
  readonly seconds: number;
  readonly mbPerSecond: number;
  /** MB/s of each run, when the figure is the best of several. */
  readonly runsMbPerSecond?: number[];
}

const figure = (bytes: number, seconds: number): DiskFigure => ({ bytes, seconds, mbPerSecond: bytes / 1e6 / seconds });

/**
 * The best of `runs` measurements. On a virtual disk the same write or read runs at very different
 * speeds depending on what the host holds (here: a first write into blocks the host has not
 * allocated ran at ~280 MB/s, a rewrite of freed blocks at ~1,300 MB/s; the first read of a fresh
 * file at ~500 MB/s, later cold reads at ~1,900 MB/s): the best is the limit the transfer is held to,
 * so that its ratio is never flattered by a probe that met the slow state.
 */
export async function bestOf<T extends DiskFigure>(runs: number, measure: () => Promise<T>): Promise<T> {
  const figures: T[] = [];
  for (let i = 0; i < runs; i++) figures.push(await measure());
  const best = figures.reduce((a, b) => (b.mbPerSecond > a.mbPerSecond ? b : a));
  return { ...best, runsMbPerSecond: figures.map((f) => f.mbPerSecond) };
}

/** Writes `bytes` random bytes to a new file in `dir`, fsyncs it, removes it: the disk's durable write speed. */
export async function durableWrite(dir: string, bytes: number): Promise<DiskFigure> {
  const file = path.join(dir, `disk-probe-${process.pid}`);
  // Random, and each block made distinct (as the bench's upload is): nothing to compress or share.
  const block = randomBytes(BLOCK);
  const started = performance.now();
  const handle = await fs.open(file, 'w', 0o600);
  try {
    for (let at = 0, index = 0; at < bytes; at += BLOCK, index++) {
      block.writeUInt32BE(index, 0);
      const length = Math.min(BLOCK, bytes - at);
      for (let done = 0; done < length; ) done += (await handle.write(block, done, length - done, at + done)).bytesWritten;
    }
    await handle.sync();
    return figure(bytes, (performance.now() - started) / 1000);
  } finally {
    await handle.close();
    await fs.rm(file, { force: true });
  }
}

/**
 * Drops `file`'s pages from the page cache; answers how many bytes of it are still cached when
 * util-linux's fincore can tell (NaN otherwise).
 */
export async function evict(file: string): Promise<number> {
  await run('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
  try {
    return Number((await run('fincore', ['--bytes', '--noheadings', '--output', 'RES', file])).trim());
  } catch {
    return NaN;
  }
}

/** Reads `file` to its end in 8 MiB reads, after evicting it: the disk's cold read speed. */
export async function coldRead(file: string): Promise<DiskFigure & { readonly cachedAfterEviction: number }> {
  const cachedAfterEviction = await evict(file);
  const buffer = Buffer.allocUnsafe(BLOCK);
  const started = performance.now();
  const handle = await fs.open(file, 'r');
  let bytes = 0;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, BLOCK, bytes);
      if (bytesRead === 0) break;
      bytes += bytesRead;
    }
  } finally {
    await handle.close();
  }
  return { ...figure(bytes, (performance.now() - started) / 1000), cachedAfterEviction };
}

/** The file holding file `fileId`'s content in the data folder's local content store. */
export function blobOf(dataDir: string, fileId: number): string {
  const db = new SQLite(path.join(dataDir, SQLITE_FILE_NAME), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('select c.storage_key as key from files f join content c on c.id = f.content_id where f.id = ?').get(fileId) as { key: string } | undefined;
    if (!row) throw new Error(`no content for file ${fileId}`);
    return path.join(dataDir, 'content', row.key);
  } finally {
    db.close();
  }
}

/** A folder for the write probe: beside the data folder when it is on the same file system, else in it. */
export function probeFolder(dataDir: string): string {
  const parent = path.dirname(path.resolve(dataDir));
  return statSync(parent).dev === statSync(dataDir).dev ? parent : dataDir;
}
