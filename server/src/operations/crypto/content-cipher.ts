/**
 * The at-rest format of encrypted content (docs/encryption.md §2): AES-256-GCM in chunks, so any range decrypts only
 * its chunks. A blob id, not the row id, binds chunks to their blob: the bytes are written before the row exists.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

export const MAGIC = Buffer.from('FSSE', 'latin1');
export const FORMAT_VERSION = 1;
export const NONCE_SCHEME_RANDOM_96 = 1;
export const HEADER_BYTES = 32;
export const NONCE_BYTES = 12;
export const TAG_BYTES = 16;
export const RECORD_OVERHEAD = NONCE_BYTES + TAG_BYTES;
export const DEFAULT_CHUNK_SIZE = 64 * 1024;
export const BLOB_ID_BYTES = 16;
const MAX_CHUNK_SIZE = 16 * 1024 * 1024;
/** Encrypting yields about this many bytes at a time: a file stream writes a tiny piece alone when nothing else waits. */
const OUTPUT_BATCH_BYTES = 1024 * 1024;

/** What a reader must know about a blob, from the database: it is never taken from the blob itself. */
export interface CipherLayout {
  readonly chunkSize: number;
  readonly blobId: Buffer;
  readonly plaintextSize: number;
}

/** Inclusive plaintext offsets, as in HTTP Range. */
export interface PlainRange {
  readonly start: number;
  readonly end: number;
}

export class ContentAuthenticationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContentAuthenticationError';
  }
}

export function newLayout(plaintextSize: number, chunkSize = DEFAULT_CHUNK_SIZE): CipherLayout {
  return { chunkSize, blobId: randomBytes(BLOB_ID_BYTES), plaintextSize };
}

function checkLayout(layout: CipherLayout): void {
  const { chunkSize, blobId, plaintextSize } = layout;
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1 || chunkSize > MAX_CHUNK_SIZE) throw new Error(`invalid chunk size ${chunkSize}`);
  if (blobId.length !== BLOB_ID_BYTES) throw new Error('invalid blob id');
  if (!Number.isSafeInteger(plaintextSize) || plaintextSize < 0) throw new Error(`invalid plaintext size ${plaintextSize}`);
}

export function headerOf(layout: CipherLayout): Buffer {
  checkLayout(layout);
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header[4] = FORMAT_VERSION;
  header[5] = NONCE_SCHEME_RANDOM_96;
  header.writeUInt32BE(layout.chunkSize, 8);
  layout.blobId.copy(header, 12);
  return header;
}

/** Chunks in a blob of `plaintextSize` bytes: at least one. */
export function chunkCount(layout: Pick<CipherLayout, 'chunkSize' | 'plaintextSize'>): number {
  return Math.max(1, Math.ceil(layout.plaintextSize / layout.chunkSize));
}

export function encryptedSize(layout: Pick<CipherLayout, 'chunkSize' | 'plaintextSize'>): number {
  return HEADER_BYTES + chunkCount(layout) * RECORD_OVERHEAD + layout.plaintextSize;
}

function plainLengthOf(layout: CipherLayout, index: number): number {
  return Math.min(layout.chunkSize, layout.plaintextSize - index * layout.chunkSize);
}

function recordOffset(layout: CipherLayout, index: number): number {
  return HEADER_BYTES + index * (layout.chunkSize + RECORD_OVERHEAD);
}

function associatedData(header: Buffer, index: number, final: boolean): Buffer {
  const tail = Buffer.alloc(9);
  tail.writeBigUInt64BE(BigInt(index), 0);
  tail[8] = final ? 1 : 0;
  return Buffer.concat([header, tail]);
}

/**
 * One chunk's record in pieces (nonce, ciphertext, tag). Plaintext pieces are encrypted one after another
 * (GCM is a stream mode), never gathered: mapping a fresh 1 MiB buffer cost as much as the encryption.
 */
export function sealChunk(key: Buffer, header: Buffer, index: number, final: boolean, plaintext: Buffer | readonly Buffer[]): Buffer[] {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(associatedData(header, index, final));
  const record = [nonce];
  for (const piece of Buffer.isBuffer(plaintext) ? [plaintext] : plaintext) record.push(cipher.update(piece));
  const rest = cipher.final(); // GCM is a stream mode: nothing is held back, but it is called for the tag
  if (rest.length > 0) record.push(rest);
  record.push(cipher.getAuthTag());
  return record;
}

function openChunk(key: Buffer, header: Buffer, index: number, final: boolean, record: Buffer): Buffer {
  const nonce = record.subarray(0, NONCE_BYTES);
  const tag = record.subarray(record.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(associatedData(header, index, final));
  decipher.setAuthTag(tag);
  try {
    const plain = decipher.update(record.subarray(NONCE_BYTES, record.length - TAG_BYTES));
    // final() checks the tag: nothing of `plain` leaves before it has passed. For GCM it adds no bytes.
    const rest = decipher.final();
    return rest.length > 0 ? Buffer.concat([plain, rest]) : plain;
  } catch {
    throw new ContentAuthenticationError(`encrypted content: chunk ${index} failed authentication (wrong key, or the bytes were altered)`);
  }
}

/**
 * The sealed tail of an upload encrypted as it arrives: plaintext after its last whole chunk, kept until
 * the rest comes. Its associated data (header, "tail", index) is no chunk's, so it opens only as that chunk's start.
 */
export function sealTail(key: Buffer, header: Buffer, index: number, plaintext: Buffer): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(tailAssociatedData(header, index));
  const body = cipher.update(plaintext);
  const rest = cipher.final();
  return Buffer.concat([nonce, body, rest, cipher.getAuthTag()]);
}

/** The plaintext of a sealed tail; null when it does not open (another key, blob or index, or altered). */
export function openTail(key: Buffer, header: Buffer, index: number, sealed: Buffer): Buffer | null {
  if (sealed.length < RECORD_OVERHEAD) return null;
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(tailAssociatedData(header, index));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    const plain = decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES));
    const rest = decipher.final();
    return rest.length > 0 ? Buffer.concat([plain, rest]) : plain;
  } catch {
    return null;
  }
}

function tailAssociatedData(header: Buffer, index: number): Buffer {
  const tail = Buffer.alloc(12);
  tail.write('tail', 0, 'latin1');
  tail.writeBigUInt64BE(BigInt(index), 4);
  return Buffer.concat([header, tail]);
}

/** Bytes as a stream gives them: a Readable, an async generator, or (in tests) an array. */
export type ByteSource = AsyncIterable<Buffer | string> | Iterable<Buffer | string>;

async function* toAsync(source: Iterable<Buffer | string>): AsyncGenerator<Buffer | string> {
  yield* source;
}

/**
 * Reads a stream in pieces of exactly the sizes asked for: a view of one buffer, or gathered into a scratch
 * buffer that the next read reuses (joining each buffer to the last one's rest copied every byte again).
 */
class ExactReader {
  private readonly iterator: AsyncIterator<Buffer | string>;
  private current: Buffer = Buffer.alloc(0);
  private scratch: Buffer = Buffer.alloc(0);
  private done = false;

  constructor(source: ByteSource) {
    this.iterator = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : toAsync(source)[Symbol.asyncIterator]();
  }

  /** The stream's next non-empty buffer, or null at its end. */
  private async next(): Promise<Buffer | null> {
    while (!this.done) {
      const next = await this.iterator.next();
      if (next.done) this.done = true;
      else if (next.value.length > 0) return typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    }
    return null;
  }

  /** Exactly `n` bytes, or fewer only when the stream ends first; valid until the next read. */
  async read(n: number): Promise<Buffer> {
    if (this.current.length === 0) this.current = (await this.next()) ?? this.current;
    if (this.current.length >= n) return this.take(n);
    if (this.scratch.length < n) this.scratch = Buffer.allocUnsafeSlow(n);
    let filled = 0;
    while (filled < n && this.current.length > 0) {
      const piece = this.take(Math.min(n - filled, this.current.length));
      filled += piece.copy(this.scratch, filled);
      if (this.current.length === 0 && filled < n) this.current = (await this.next()) ?? this.current;
    }
    return this.scratch.subarray(0, filled);
  }

  private take(n: number): Buffer {
    const piece = this.current.subarray(0, n);
    this.current = this.current.subarray(n);
    return piece;
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}

/** Joins pieces into buffers of about OUTPUT_BATCH_BYTES (one copy), for generators to yield. */
class Batch {
  private pieces: Buffer[] = [];
  private bytes = 0;

  add(...pieces: Buffer[]): void {
    for (const piece of pieces) {
      this.pieces.push(piece);
      this.bytes += piece.length;
    }
  }

  get full(): boolean {
    return this.bytes >= OUTPUT_BATCH_BYTES;
  }

  get empty(): boolean {
    return this.pieces.length === 0;
  }

  take(): Buffer {
    const joined = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces, this.bytes);
    this.pieces = [];
    this.bytes = 0;
    return joined;
  }
}

/** Encrypts exactly `layout.plaintextSize` bytes: the header, then records joined into ~1 MiB buffers; throws on a size mismatch. */
export async function* encryptContent(plaintext: ByteSource, key: Buffer, layout: CipherLayout): AsyncGenerator<Buffer> {
  const header = headerOf(layout);
  yield header;
  const batch = new Batch();
  const reader = new ExactReader(plaintext);
  try {
    const count = chunkCount(layout);
    for (let index = 0; index < count; index++) {
      const expected = plainLengthOf(layout, index);
      const chunk = await reader.read(expected);
      if (chunk.length !== expected) throw new Error(`plaintext ended after ${index * layout.chunkSize + chunk.length} of ${layout.plaintextSize} bytes`);
      batch.add(...sealChunk(key, header, index, index === count - 1, chunk));
      if (batch.full) yield batch.take();
    }
    if ((await reader.read(1)).length > 0) throw new Error(`plaintext is longer than ${layout.plaintextSize} bytes`);
    if (!batch.empty) yield batch.take();
  } finally {
    await reader.close();
  }
}

/** The ciphertext bytes (inclusive offsets) holding the chunks that cover `range`, and those chunks. */
export function cipherRangeOf(layout: CipherLayout, range?: PlainRange): { start: number; end: number; firstChunk: number; lastChunk: number } {
  checkLayout(layout);
  const count = chunkCount(layout);
  let firstChunk = 0;
  let lastChunk = count - 1;
  if (range) {
    if (!(Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end) && range.start >= 0 && range.start <= range.end && range.end < layout.plaintextSize)) {
      throw new RangeError(`range ${range.start}-${range.end} is outside ${layout.plaintextSize} bytes`);
    }
    firstChunk = Math.floor(range.start / layout.chunkSize);
    lastChunk = Math.floor(range.end / layout.chunkSize);
  }
  const start = recordOffset(layout, firstChunk);
  const end = recordOffset(layout, lastChunk) + RECORD_OVERHEAD + plainLengthOf(layout, lastChunk) - 1;
  return { start, end, firstChunk, lastChunk };
}

/**
 * Decrypts chunks `firstChunk`..`lastChunk` of `ciphertext`, yielding `range`'s plaintext a chunk at a time,
 * each authenticated first. Not joined: a stream gathers what waits into one `writev`, and joining copied every byte.
 */
export async function* decryptChunks(
  ciphertext: ByteSource,
  key: Buffer,
  layout: CipherLayout,
  range?: PlainRange,
): AsyncGenerator<Buffer> {
  const header = headerOf(layout);
  const { firstChunk, lastChunk } = cipherRangeOf(layout, range);
  const lastOfBlob = chunkCount(layout) - 1;
  const reader = new ExactReader(ciphertext);
  try {
    for (let index = firstChunk; index <= lastChunk; index++) {
      const plainLength = plainLengthOf(layout, index);
      const record = await reader.read(plainLength + RECORD_OVERHEAD);
      if (record.length !== plainLength + RECORD_OVERHEAD) {
        throw new ContentAuthenticationError(`encrypted content: chunk ${index} is truncated`);
      }
      let plain = openChunk(key, header, index, index === lastOfBlob, record);
      if (range) {
        const chunkStart = index * layout.chunkSize;
        const from = index === firstChunk ? range.start - chunkStart : 0;
        const to = index === lastChunk ? range.end - chunkStart + 1 : plain.length;
        plain = plain.subarray(from, to);
      }
      if (plain.length > 0) yield plain;
    }
  } finally {
    await reader.close();
  }
}

/** Checks a blob's header against the layout the database holds. */
export function headerMatches(blobHeader: Buffer, layout: CipherLayout): boolean {
  return blobHeader.length >= HEADER_BYTES && blobHeader.subarray(0, HEADER_BYTES).equals(headerOf(layout));
}

/** The plaintext of `range` through `open` (a ranged read), in constant memory; opens first, so a missing blob rejects here. */
export async function openDecrypted(
  open: (range: { start: number; end: number }) => Promise<Readable>,
  key: Buffer,
  layout: CipherLayout,
  range?: PlainRange,
): Promise<Readable> {
  const cipherRange = cipherRangeOf(layout, range);
  const source = await open({ start: cipherRange.start, end: cipherRange.end });
  const plaintext = Readable.from(decryptChunks(source, key, layout, range), { objectMode: false });
  plaintext.once('close', () => source.destroy());
  return plaintext;
}
