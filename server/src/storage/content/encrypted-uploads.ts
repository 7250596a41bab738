/**
 * Uploads encrypted as they arrive (docs/encryption.md): the plaintext never touches the disk. `<id>` is the blob
 * (header, then one record per whole chunk); `<id>.tail` holds the count of durable records and the sealed remainder
 * of the last chunk, so the offset is worked out from the files alone (docs/uploads-and-downloads.md). The cipher comes
 * from the operations: this module knows the format's sizes and the files, not the cryptography.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { ERRORS, type DataStore, type Upload } from '@tus/server';
import { syncDirectory, unlessMissing, writeFileSynced } from './file-sync';
import { uploadWith, WrappingDataStore } from './wrapping-data-store';
import { crossedWritebackStep, startWriteback, writeFully } from './writeback';

/** What the upload area needs to write and read one encrypted upload; made by the operations from the content format and the data key. */
export interface UploadCipher {
  /** The blob's first bytes. */
  readonly header: Buffer;
  /** Plaintext bytes per chunk. */
  readonly chunkSize: number;
  /** Bytes a record has besides its plaintext. */
  readonly recordOverhead: number;
  readonly plaintextSize: number;
  /** The record of chunk `index` (the last one is sealed as final), in pieces, from its plaintext in pieces. */
  sealChunk(index: number, plaintext: readonly Buffer[]): Buffer[];
  /** A tail that begins chunk `index`, sealed. */
  sealTail(index: number, plaintext: Buffer): Buffer;
  /** The plaintext of a sealed tail that begins chunk `index`; null when it does not open. */
  openTail(index: number, sealed: Buffer): Buffer | null;
  /** The plaintext of a complete blob from its records (the bytes after the header), each chunk authenticated. */
  decrypt(records: Readable): Readable;
}

/** The ciphers of encrypted uploads this process's requests work on, by upload id, each held for a request's length. */
export class UploadCiphers {
  private readonly held = new Map<string, { readonly cipher: UploadCipher; holds: number }>();

  /** Makes `cipher` the one of upload `id` until the returned function is called. */
  hold(id: string, cipher: UploadCipher): () => void {
    const entry = this.held.get(id) ?? { cipher, holds: 0 };
    entry.holds++;
    this.held.set(id, entry);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--entry.holds === 0 && this.held.get(id) === entry) this.held.delete(id);
    };
  }

  of(id: string): UploadCipher | undefined {
    return this.held.get(id)?.cipher;
  }
}

/** The file beside an encrypted upload's blob that marks it and keeps its tail. */
export const tailPathOf = (blobPath: string) => `${blobPath}.tail`;
const INDEX_BYTES = 8;

/** Where an encrypted upload stands on disk. */
export interface EncryptedUploadState {
  /** Whole records in the blob. */
  readonly records: number;
  /** The blob's size on disk (a record cut short included). */
  readonly blobBytes: number;
  /** The tail's plaintext, when there is one that belongs. */
  readonly tail: Buffer | null;
  /** Plaintext bytes received: what tus reports as the offset. */
  readonly offset: number;
}

function chunkCountOf(cipher: UploadCipher): number {
  return Math.max(1, Math.ceil(cipher.plaintextSize / cipher.chunkSize));
}

export function completeBlobBytes(cipher: UploadCipher): number {
  return cipher.header.length + chunkCountOf(cipher) * cipher.recordOverhead + cipher.plaintextSize;
}

/** Whether `blobPath` is an encrypted upload's blob (its tail file exists). */
export async function isEncryptedUpload(blobPath: string): Promise<boolean> {
  try {
    await fs.access(tailPathOf(blobPath));
    return true;
  } catch {
    return false;
  }
}

/** The state of an encrypted upload; null when its blob is not there (never created, or moved into the store). */
export async function encryptedUploadState(blobPath: string, cipher: UploadCipher): Promise<EncryptedUploadState | null> {
  const stats = await unlessMissing(fs.stat(blobPath), null);
  if (!stats) return null;
  const blobBytes = stats.size;
  const tail = await readTail(tailPathOf(blobPath));
  const count = chunkCountOf(cipher);
  if (blobBytes >= completeBlobBytes(cipher) && tail.index === count) return { records: count, blobBytes, tail: null, offset: cipher.plaintextSize };
  const whole = Math.max(0, Math.floor((blobBytes - cipher.header.length) / (cipher.chunkSize + cipher.recordOverhead)));
  // The records the tail's index counts (synced before it was written); fewer when the blob is shorter (altered by hand).
  const records = Math.min(whole, tail.index, count);
  const plaintext = tail.index === records && tail.sealed ? cipher.openTail(records, tail.sealed) : null;
  return { records, blobBytes, tail: plaintext, offset: records * cipher.chunkSize + (plaintext?.length ?? 0) };
}

/** The tail file's index and sealed part; index 0 (nothing counted) when the file is missing or shorter than an index. */
async function readTail(file: string): Promise<{ index: number; sealed: Buffer | null }> {
  const bytes = await unlessMissing(fs.readFile(file), null);
  if (!bytes || bytes.length < INDEX_BYTES) return { index: 0, sealed: null };
  return { index: Number(bytes.readBigUInt64BE(0)), sealed: bytes.length > INDEX_BYTES ? bytes.subarray(INDEX_BYTES) : null };
}

/** Writes the tail file (replacing it whole): `tail` sealed as the beginning of chunk `index`, or no sealed part. */
async function writeTail(blobPath: string, cipher: UploadCipher, index: number, tail: Buffer | null): Promise<void> {
  const head = Buffer.alloc(INDEX_BYTES);
  head.writeBigUInt64BE(BigInt(index));
  const body = tail && tail.length > 0 ? Buffer.concat([head, cipher.sealTail(index, tail)]) : head;
  const file = tailPathOf(blobPath);
  // Durable before the PATCH that wrote it is answered: the new tail whole, then its name.
  await writeFileSynced(`${file}.tmp`, body);
  await fs.rename(`${file}.tmp`, file);
  await syncDirectory(path.dirname(file));
}

/** Bytes of records gathered before one write to the blob. */
const WRITE_BATCH_BYTES = 1024 * 1024;

/** Takes exactly `n` bytes from the front of `pending` (which holds at least that many), as pieces of it: nothing is copied. */
function takeBytes(pending: Buffer[], n: number): Buffer[] {
  const pieces: Buffer[] = [];
  let taken = 0;
  while (taken < n) {
    const next = pending[0];
    const used = Math.min(next.length, n - taken);
    pieces.push(used === next.length ? next : next.subarray(0, used));
    taken += used;
    if (used === next.length) pending.shift();
    else pending[0] = next.subarray(used);
  }
  return pieces;
}

/** A tus datastore writing uploads it holds a cipher for encrypted; every other upload goes to `inner`. */
export class EncryptingDataStore extends WrappingDataStore {
  constructor(
    inner: DataStore,
    private readonly ciphers: UploadCiphers,
    private readonly pathOf: (id: string) => string,
  ) {
    super(inner);
  }

  override async create(upload: Upload): Promise<Upload> {
    const created = await this.inner.create(upload);
    const cipher = this.ciphers.of(upload.id);
    if (cipher) {
      const blob = this.pathOf(upload.id);
      // An empty file is one empty final chunk: complete at once.
      const empty = cipher.plaintextSize === 0;
      const first = empty ? [cipher.header, ...cipher.sealChunk(0, [])] : [cipher.header];
      await writeFileSynced(blob, Buffer.concat(first));
      await writeTail(blob, cipher, empty ? chunkCountOf(cipher) : 0, null);
    }
    return created;
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    const cipher = this.ciphers.of(id);
    if (!cipher) {
      if (await isEncryptedUpload(this.pathOf(id))) throw ERRORS.FILE_WRITE_ERROR; // never written as plaintext
      return this.inner.write(stream, id, offset);
    }
    return this.writeEncrypted(stream, id, offset, cipher);
  }

  private async writeEncrypted(stream: Readable, id: string, offset: number, cipher: UploadCipher): Promise<number> {
    const blob = this.pathOf(id);
    const state = await encryptedUploadState(blob, cipher);
    if (!state) throw ERRORS.FILE_NOT_FOUND;
    if (state.offset !== offset) throw ERRORS.INVALID_OFFSET;
    const count = chunkCountOf(cipher);
    const recordBytes = cipher.chunkSize + cipher.recordOverhead;
    const handle = await fs.open(blob, 'r+').catch(() => {
      throw ERRORS.FILE_WRITE_ERROR;
    });
    let position = cipher.header.length + state.records * recordBytes;
    let index = state.records;
    const pending: Buffer[] = state.tail ? [state.tail] : [];
    let pendingBytes = state.tail?.length ?? 0;
    let out: Buffer[] = [];
    let outBytes = 0;
    /** Plaintext bytes of the upload received so far (the offset). */
    let received = state.offset;

    const sealWhatIsWhole = () => {
      while (index < count) {
        const length = Math.min(cipher.chunkSize, cipher.plaintextSize - index * cipher.chunkSize);
        if (pendingBytes < length) return;
        const record = cipher.sealChunk(index, takeBytes(pending, length));
        pendingBytes -= length;
        index++;
        for (const piece of record) {
          out.push(piece);
          outBytes += piece.length;
        }
      }
    };
    let writeFailed = false;
    const flush = async () => {
      if (out.length === 0) return;
      const from = position;
      const buffers = out;
      out = [];
      outBytes = 0;
      try {
        position = await writeFully(handle, buffers, position);
      } catch (error) {
        writeFailed = true;
        throw error;
      }
      if (crossedWritebackStep(from, position)) startWriteback(blob);
    };
    const firstRecordAt = position;
    /** Why the body ended early (a dropped connection, bytes past the upload's length); what came before it is kept. */
    let bodyFailure: unknown = null;

    try {
      if (state.blobBytes < cipher.header.length) await handle.write(cipher.header, 0, cipher.header.length, 0);
      // A record cut short, or anything after the last whole record, goes.
      if (state.blobBytes > position) await handle.truncate(position);
      try {
        for await (const chunk of stream) {
          const bytes = chunk as Buffer;
          if (bytes.length === 0) continue;
          // tus never passes a body beyond the upload's length; should one come, it is refused.
          if (received + bytes.length > cipher.plaintextSize) throw ERRORS.ERR_SIZE_EXCEEDED;
          pending.push(bytes);
          pendingBytes += bytes.length;
          received += bytes.length;
          sealWhatIsWhole();
          if (outBytes >= WRITE_BATCH_BYTES) await flush();
        }
      } catch (error) {
        if (writeFailed) throw error;
        bodyFailure = error;
      }
      // Kept as for plaintext uploads: whole chunks as records, the rest as the sealed tail; records durable first.
      sealWhatIsWhole();
      await flush();
      await handle.datasync();
      await writeTail(blob, cipher, index, pendingBytes > 0 ? Buffer.concat(pending, pendingBytes) : null);
    } catch {
      // A failed write or sync: this write's records go, and the offset is worked out again as after a crash.
      await handle.truncate(firstRecordAt).catch(() => {});
      throw ERRORS.FILE_WRITE_ERROR;
    } finally {
      await handle.close();
    }
    if (bodyFailure !== null) throw bodyFailure === ERRORS.ERR_SIZE_EXCEEDED ? bodyFailure : ERRORS.FILE_WRITE_ERROR;
    return received;
  }

  override async getUpload(id: string): Promise<Upload> {
    const upload = await this.inner.getUpload(id);
    const cipher = this.ciphers.of(id);
    if (!cipher) {
      if (await isEncryptedUpload(this.pathOf(id))) throw ERRORS.FILE_WRITE_ERROR; // its offset needs the key
      return upload;
    }
    const state = await encryptedUploadState(this.pathOf(id), cipher);
    if (!state) throw ERRORS.FILE_NOT_FOUND;
    return uploadWith(upload, { offset: state.offset });
  }

  override async remove(id: string): Promise<void> {
    await this.inner.remove(id);
    await removeTail(this.pathOf(id));
  }
}

/** Removes an encrypted upload's tail file (and a half-written one); idempotent. */
export async function removeTail(blobPath: string): Promise<void> {
  const file = tailPathOf(blobPath);
  await fs.rm(file, { force: true });
  await fs.rm(`${file}.tmp`, { force: true });
}
