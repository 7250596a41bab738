/**
 * The content store of the embedded default: key `ab/cd/<sha256>-<16 hex>` is the file `content/ab/cd/…` (two levels
 * of fan-out keep directories small). A key appears only by rename of an fsync'ed file, its directory fsync'ed
 * after, so a crash leaves no part of a file under a key; temporary files in `content/.tmp/` are swept.
 */
import { randomBytes } from 'node:crypto';
import { constants, createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InvalidStorageKeyError, isDerivedKey, storageKeyFor, type BlobStat, type ByteRange, type ContentStore } from './content-store';
import { syncDirectory, syncFile, unlessMissing } from './file-sync';

const KEY = /^([0-9a-f]{2})\/([0-9a-f]{2})\/([0-9a-f]{64})-([0-9a-f]{16})$/;
const FAN_OUT = /^[0-9a-f]{2}$/;
const BLOB_NAME = /^[0-9a-f]{64}-[0-9a-f]{16}$/;
const TEMP_DIR = '.tmp';
/** Bytes per read of a blob (and per write of a copy): memory per open read stays about this. */
const READ_BYTES = 1024 * 1024;

/** What read() answers: a stream, or bytes read into the caller's buffer until it answers 0; destroy() closes the file either way. */
export type BlobFileStream = Readable & { readInto(target: Buffer): Promise<number> };

export class LocalDiskStore implements ContentStore {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  newKey(sha256: string): string {
    return storageKeyFor(sha256);
  }

  async putFile(key: string, sourcePath: string): Promise<void> {
    const target = this.pathOf(key);
    const dir = path.dirname(target);
    await this.ensureDirectory(dir);
    if (await exists(target)) throw new Error(`storage key already holds content: ${key}`);

    try {
      // Same file system: the finished file itself becomes the key, after its bytes are on disk.
      await syncFile(sourcePath);
      await fs.rename(sourcePath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      // Another file system: copy into a temporary file beside the keys, then rename that.
      const temp = await this.copyToTemp(sourcePath);
      try {
        await fs.rename(temp, target);
      } catch (renameError) {
        await fs.rm(temp, { force: true });
        throw renameError;
      }
      await fs.rm(sourcePath, { force: true });
    }
    await syncDirectory(dir);
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const handle = await fs.open(this.pathOf(key), constants.O_RDONLY);
    // Opened first, so that a missing key rejects here rather than failing a half-sent answer.
    // Reads of 1 MiB: a quarter of the CPU time that 64 KiB reads (the default) take per GiB.
    const highWaterMark = READ_BYTES;
    const stream = handle.createReadStream(range ? { start: range.start, end: range.end, autoClose: true, highWaterMark } : { autoClose: true, highWaterMark });
    // readInto, for a consumer that reuses its own buffers (the ZIP writer): no fresh Buffer per read. Then not read as a stream.
    let position = range?.start ?? 0;
    const end = range ? range.end + 1 : Infinity;
    const readInto = async (target: Buffer): Promise<number> => {
      const { bytesRead } = await handle.read(target, 0, Math.min(target.length, end - position), position);
      position += bytesRead;
      return bytesRead;
    };
    return Object.assign(stream, { readInto }) satisfies BlobFileStream;
  }

  async stat(key: string): Promise<BlobStat | null> {
    const stats = await unlessMissing(fs.stat(this.pathOf(key)), null);
    return stats?.isFile() ? { size: stats.size } : null;
  }

  async delete(key: string): Promise<void> {
    const file = this.pathOf(key);
    if ((await unlessMissing(fs.unlink(file), 'missing')) === 'missing') return;
    await syncDirectory(path.dirname(file));
  }

  async *listKeys(): AsyncIterable<string> {
    for (const first of await listNames(this.root)) {
      if (!FAN_OUT.test(first)) continue;
      for (const second of await listNames(path.join(this.root, first))) {
        if (!FAN_OUT.test(second)) continue;
        const dir = await unlessMissing(fs.opendir(path.join(this.root, first, second)), null);
        if (!dir) continue;
        for await (const entry of dir) {
          if (entry.isFile() && BLOB_NAME.test(entry.name)) yield `${first}/${second}/${entry.name}`;
        }
      }
    }
  }

  async putDerived(key: string, bytes: Buffer): Promise<void> {
    const target = this.pathOf(key);
    await this.ensureDirectory(path.dirname(target));
    const tempDir = path.join(this.root, TEMP_DIR);
    await fs.mkdir(tempDir, { recursive: true, mode: 0o700 });
    const temp = path.join(tempDir, randomBytes(16).toString('hex'));
    try {
      await fs.writeFile(temp, bytes, { flag: 'wx', mode: 0o600 });
      await syncFile(temp);
      await fs.rename(temp, target);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
  }

  async *listDerivedKeys(sha256?: string): AsyncIterable<string> {
    if (sha256 !== undefined && !/^[0-9a-f]{64}$/.test(sha256)) throw new Error('listDerivedKeys needs a lowercase hex SHA-256');
    const root = path.join(this.root, 'derived');
    for (const first of sha256 ? [sha256.slice(0, 2)] : await listNames(root)) {
      for (const second of sha256 ? [sha256.slice(2, 4)] : await listNames(path.join(root, first))) {
        for (const name of await listNames(path.join(root, first, second))) {
          const key = `derived/${first}/${second}/${name}`;
          if (isDerivedKey(key) && (!sha256 || name.startsWith(`${sha256}-`))) yield key;
        }
      }
    }
  }

  async sweepPartialWrites(before: Date): Promise<number> {
    const tempDir = path.join(this.root, TEMP_DIR);
    let removed = 0;
    for (const name of await listNames(tempDir)) {
      const file = path.join(tempDir, name);
      const stats = await unlessMissing(fs.stat(file), null);
      if (stats && stats.mtimeMs < before.getTime()) {
        await fs.rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }

  /** The file that holds `key`, for `fss migrate`, which links it into a work folder rather than copying it. */
  fileOf(key: string): string {
    return this.pathOf(key);
  }

  /** The file of a key; refuses anything not of the key form, so no key names a path outside. */
  private pathOf(key: string): string {
    if (isDerivedKey(key)) return path.join(this.root, ...key.split('/'));
    const match = KEY.exec(key);
    if (!match || match[3].slice(0, 2) !== match[1] || match[3].slice(2, 4) !== match[2]) throw new InvalidStorageKeyError(key);
    return path.join(this.root, match[1], match[2], `${match[3]}-${match[4]}`);
  }

  /** Creates a fan-out directory and makes its entry in each new parent durable. */
  private async ensureDirectory(dir: string): Promise<void> {
    if (await exists(dir)) return;
    const first = await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    if (first === undefined) return;
    // Every directory from the first one created down to `dir` is new: sync each parent.
    for (let current = dir; current.length >= first.length; current = path.dirname(current)) {
      await syncDirectory(path.dirname(current));
    }
  }

  private async copyToTemp(sourcePath: string): Promise<string> {
    const tempDir = path.join(this.root, TEMP_DIR);
    await fs.mkdir(tempDir, { recursive: true, mode: 0o700 });
    const temp = path.join(tempDir, randomBytes(16).toString('hex'));
    const source = await fs.open(sourcePath, constants.O_RDONLY);
    try {
      await pipeline(source.createReadStream({ highWaterMark: READ_BYTES }), createWriteStream(temp, { flags: 'wx', mode: 0o600, highWaterMark: READ_BYTES }));
      await syncFile(temp);
      return temp;
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    } finally {
      await source.close().catch(() => {});
    }
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

async function listNames(dir: string): Promise<string[]> {
  return unlessMissing(fs.readdir(dir), []);
}
