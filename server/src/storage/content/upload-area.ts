/**
 * Where unfinished uploads are staged: `<dataDir>/uploads/` (LocalUploadArea) or the bucket's `<prefix>uploads/`
 * (s3-upload-area.ts). Only 32-hex-digit ids are uploads; anything else in the area is left alone.
 */
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { FileStore } from '@tus/file-store';
import { ERRORS, type DataStore, type Upload } from '@tus/server';
import { uploadWith } from './wrapping-data-store';
import type { Config } from '../../config';
import type { ContentStore } from './content-store';
import { syncDirectory, syncFile, unlessMissing, writeFileSynced } from './file-sync';
import { EncryptingDataStore, encryptedUploadState, isEncryptedUpload, removeTail, UploadCiphers, type UploadCipher } from './encrypted-uploads';
import { HashingDataStore, RunningHashes, sha256OfUpload } from './running-hashes';
import { crossedWritebackStep, WRITEBACK_EVERY_BYTES, writeFully } from './writeback';

const UPLOAD_ID = /^[0-9a-f]{32}$/;

/** Whether `id` has the form of an upload id (and so names nothing outside the area). */
export function isUploadId(id: string): boolean {
  return UPLOAD_ID.test(id);
}

export interface UploadArea {
  /** Holds the keys of uploads encrypted as they arrive; null where uploads are encrypted after completion (the bucket). */
  readonly ciphers: UploadCiphers | null;

  /** A tus datastore writing uploads into this area (a new one per tus server). */
  createDatastore(): DataStore;

  /** Bytes of upload `id` readable as one piece (all, once complete; encrypted: plaintext received); null when none. */
  readableBytes(id: string): Promise<number | null>;

  /** The bytes of upload `id` as a stream (of an encrypted upload, complete: the plaintext); null when readableBytes would say null. */
  open(id: string): Promise<Readable | null>;

  /** SHA-256 (hex) and size of the complete upload `id`, from the running hash when this process saw every byte. */
  sha256Of(id: string): Promise<{ sha256: string; size: number } | null>;

  /** Puts the complete bytes of upload `id` into the store under `key` (whole or not at all) and consumes them. */
  storeInto(id: string, key: string): Promise<void>;

  /** Removes everything upload `id` left in the area (bytes, tus metadata, unfinished parts); idempotent. */
  remove(id: string): Promise<void>;

  /** Ids of the uploads with something in the area not modified since `before`. */
  idsUntouchedSince(before: Date): Promise<string[]>;
}

/** The embedded default's folder, in @tus/file-store's layout: bytes in `<id>`, metadata in `<id>.json`, encrypted tail in `<id>.tail`. */
export class LocalUploadArea implements UploadArea {
  readonly directory: string;
  /** The SHA-256 of uploads being written through this area's datastores. */
  readonly runningHashes = new RunningHashes();
  readonly ciphers = new UploadCiphers();

  constructor(
    directory: string,
    private readonly store: ContentStore,
  ) {
    this.directory = path.resolve(directory);
  }

  createDatastore(): DataStore {
    const pathOf = (id: string) => this.dataPath(id);
    // Hashed outside the encryption: the running hash is of the plaintext, as FileAdd's hash is.
    return new HashingDataStore(new EncryptingDataStore(new BatchedFileStore(this.directory, pathOf), this.ciphers, pathOf), this.runningHashes);
  }

  dataPath(id: string): string {
    if (!isUploadId(id)) throw new Error('invalid upload id');
    return path.join(this.directory, id);
  }

  /** The cipher of an encrypted upload (which the caller must hold); undefined for a plaintext one. */
  private async cipherOf(id: string): Promise<UploadCipher | undefined> {
    const cipher = this.ciphers.of(id);
    if (cipher || !(await isEncryptedUpload(this.dataPath(id)))) return cipher;
    throw new Error(`upload ${id} is encrypted and its key is not held`);
  }

  async readableBytes(id: string): Promise<number | null> {
    const cipher = await this.cipherOf(id);
    if (cipher) return (await encryptedUploadState(this.dataPath(id), cipher))?.offset ?? null;
    return durableBytes(this.dataPath(id));
  }

  async open(id: string): Promise<Readable | null> {
    const cipher = await this.cipherOf(id);
    if (cipher) {
      const state = await encryptedUploadState(this.dataPath(id), cipher);
      if (!state) return null;
      if (state.offset !== cipher.plaintextSize) throw new Error(`encrypted upload ${id} is not complete`);
    }
    const handle = await unlessMissing(fs.open(this.dataPath(id), constants.O_RDONLY), null);
    if (!handle) return null;
    if (!cipher) return handle.createReadStream({ autoClose: true, highWaterMark: 1024 * 1024 });
    return cipher.decrypt(handle.createReadStream({ start: cipher.header.length, autoClose: true, highWaterMark: 1024 * 1024 }));
  }

  sha256Of(id: string): Promise<{ sha256: string; size: number } | null> {
    return sha256OfUpload(this.runningHashes, id, this);
  }

  async storeInto(id: string, key: string): Promise<void> {
    // The store moves the file itself when it can (a rename on the same file system).
    await this.store.putFile(key, this.dataPath(id));
    this.runningHashes.forget(id);
  }

  async remove(id: string): Promise<void> {
    this.runningHashes.forget(id);
    const data = this.dataPath(id);
    await fs.rm(data, { force: true });
    await fs.rm(`${data}.json`, { force: true });
    await fs.rm(offsetPathOf(data), { force: true });
    await removeTail(data);
  }

  async idsUntouchedSince(before: Date): Promise<string[]> {
    const names = await unlessMissing(fs.readdir(this.directory), []);
    const newest = new Map<string, number>();
    for (const name of names) {
      // `<id>`, its tus metadata `<id>.json`, its durable offset `<id>.offset`, an encrypted upload's `<id>.tail` (and `.tail.tmp`).
      const id = /^([0-9a-f]{32})(?:\.json|\.offset|\.tail|\.tail\.tmp)?$/.exec(name)?.[1];
      if (id === undefined) continue;
      const stats = await fs.stat(path.join(this.directory, name)).catch(() => null);
      if (!stats) continue;
      newest.set(id, Math.max(newest.get(id) ?? 0, stats.mtimeMs));
    }
    return [...newest].filter(([, mtime]) => mtime < before.getTime()).map(([id]) => id);
  }
}

/** Bytes gathered before one write to the upload's file. */
const WRITE_BATCH_BYTES = 1024 * 1024;
/** Pieces gathered at most before one write (tiny pieces: a slow client), well under IOV_MAX. */
const WRITE_BATCH_PIECES = 256;
/** While a body arrives, what is written is synced and recorded each time it grows past a multiple of this (one sync at a time). */
const SYNC_EVERY_BYTES = WRITEBACK_EVERY_BYTES;

/**
 * @tus/file-store writing a PATCH in ~1 MiB batches (one writev, not a write per 16–64 KiB piece: half the cost).
 * Durable before acknowledged: fdatasync, then the offset recorded in `<id>.offset` (docs/uploads-and-downloads.md,
 * "When an uploaded byte is durable"); the offset is never more than what is synced and recorded.
 */
class BatchedFileStore extends FileStore {
  constructor(
    private readonly folder: string,
    private readonly pathOf: (id: string) => string,
  ) {
    super({ directory: folder });
  }

  override async create(upload: Upload): Promise<Upload> {
    const created = await super.create(upload);
    const file = this.pathOf(upload.id);
    await writeFileSynced(offsetPathOf(file), offsetRecord(0));
    // The tus metadata (written whole by @tus/file-store) and the three new names.
    await syncFile(`${file}.json`);
    await syncDirectory(this.folder);
    return created;
  }

  override async getUpload(id: string): Promise<Upload> {
    const upload = await super.getUpload(id);
    const durable = await durableBytes(this.pathOf(id));
    if (durable === null || durable === upload.offset) return upload;
    return uploadWith(upload, { offset: durable });
  }

  override async write(readable: NodeJS.ReadableStream, id: string, offset: number): Promise<number> {
    const file = this.pathOf(id);
    const handle = await fs.open(file, 'r+').catch(() => {
      throw ERRORS.FILE_WRITE_ERROR; // as @tus/file-store answers when its write stream cannot open
    });
    let position = offset;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let writeFailed = false;
    let bodyFailed = false;
    /** What is synced and recorded: where the upload stands if the process or the machine stops now. */
    let durable = offset;
    let syncing: Promise<void> | null = null;
    // Synced and recorded in the background while the body arrives, so a kill mid-PATCH loses only what came after.
    const syncInBackground = () => {
      const covered = position;
      syncing = handle
        .datasync()
        .then(() => recordDurableOffset(file, covered, { sync: false }))
        .then(() => void (durable = covered))
        .catch(() => {}) // the final sync reports what failed
        .finally(() => (syncing = null));
    };
    const flush = async () => {
      const buffers = pending;
      pending = [];
      pendingBytes = 0;
      const from = position;
      try {
        position = await writeFully(handle, buffers, position);
      } catch (error) {
        writeFailed = true;
        throw error;
      }
      if (syncing === null && crossedWritebackStep(from, position, SYNC_EVERY_BYTES)) syncInBackground();
    };
    try {
      // Bytes past the offset were never acknowledged (durableBytes): they go.
      if ((await handle.stat()).size > offset) await handle.truncate(offset);
      try {
        for await (const chunk of readable) {
          pending.push(chunk as Buffer);
          pendingBytes += (chunk as Buffer).length;
          if (pendingBytes >= WRITE_BATCH_BYTES || pending.length >= WRITE_BATCH_PIECES) await flush();
        }
      } catch (error) {
        if (writeFailed) throw error;
        // The body broke off (a dropped connection): what arrived is kept, and the upload resumes from there.
        bodyFailed = true;
      }
      await flush();
      await syncing;
      await handle.datasync();
      await recordDurableOffset(file, position, { sync: true });
    } catch {
      // Written but perhaps not durable (a failed write or sync): the upload goes back to what
      // was synced and recorded.
      await syncing;
      await handle.truncate(durable).catch(() => {});
      await recordDurableOffset(file, durable, { sync: true }).catch(() => {});
      throw ERRORS.FILE_WRITE_ERROR;
    } finally {
      await handle.close();
    }
    if (bodyFailed) throw ERRORS.FILE_WRITE_ERROR;
    return position;
  }
}

/** The file beside a plaintext upload's bytes that records the offset its last acknowledged write made durable. */
const offsetPathOf = (dataPath: string) => `${dataPath}.offset`;

/** The record: 8 bytes, big-endian (written in place, so a crash leaves the old value or the new one). */
function offsetRecord(offset: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(offset));
  return bytes;
}

/** Records `offset` as durable for `dataPath` (`sync`: the record too); a record lost to a power loss counts fewer bytes, never more. */
export async function recordDurableOffset(dataPath: string, offset: number, { sync }: { sync: boolean }): Promise<void> {
  const handle = await fs.open(offsetPathOf(dataPath), 'r+');
  try {
    await handle.write(offsetRecord(offset), 0, 8, 0);
    if (sync) await handle.datasync();
  } finally {
    await handle.close();
  }
}

/** The bytes of a plaintext upload that count: the file's size capped by its durable offset record; null when no file. */
async function durableBytes(dataPath: string): Promise<number | null> {
  const stats = await unlessMissing(fs.stat(dataPath), null);
  if (!stats) return null;
  const record = await unlessMissing(fs.readFile(offsetPathOf(dataPath)), null);
  if (!record) return stats.size;
  return Math.min(stats.size, record.length >= 8 ? Number(record.readBigUInt64BE(0)) : 0);
}

export function uploadDirectory(config: Config): string {
  return path.join(config.dataDir, 'uploads');
}
