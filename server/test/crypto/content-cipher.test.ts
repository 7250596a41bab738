/**
 * The chunked content cipher (operations/crypto/content-cipher.ts): round trips, ranges that
 * decrypt only the chunks they cover, and every way of tampering with a blob refused.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  chunkCount,
  cipherRangeOf,
  ContentAuthenticationError,
  decryptChunks,
  encryptContent,
  encryptedSize,
  HEADER_BYTES,
  headerMatches,
  newLayout,
  NONCE_BYTES,
  openDecrypted,
  RECORD_OVERHEAD,
  type CipherLayout,
} from '../../src/operations/crypto/content-cipher';

const key = randomBytes(32);

async function collect(source: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of source) parts.push(part);
  return Buffer.concat(parts);
}

/** Plaintext in uneven pieces, as a stream gives it. */
function pieces(bytes: Buffer, size = 1000): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

async function encrypt(plain: Buffer, layout: CipherLayout, withKey = key): Promise<Buffer> {
  return collect(encryptContent(pieces(plain), withKey, layout));
}

/** Decrypts a whole blob (the records after the header), as a reader with the database's layout does. */
const decryptBlob = (blob: Buffer, layout: CipherLayout, withKey = key) => collect(decryptChunks([blob.subarray(HEADER_BYTES)], withKey, layout));

async function rangeOf(blob: Buffer, layout: CipherLayout, start: number, end: number): Promise<{ plain: Buffer; read: Array<{ start: number; end: number }> }> {
  const read: Array<{ start: number; end: number }> = [];
  const stream = await openDecrypted(
    async (range) => {
      read.push(range);
      return Readable.from(pieces(blob.subarray(range.start, range.end + 1), 777));
    },
    key,
    layout,
    { start, end },
  );
  return { plain: await collect(stream), read };
}

describe('round trips', () => {
  it.each([0, 1, 15, 16, 17, 48, 1000])('%i bytes with 16-byte chunks: the blob has the documented size and decrypts to the plaintext', async (size) => {
    const plain = randomBytes(size);
    const layout = newLayout(size, 16);
    const blob = await encrypt(plain, layout);
    expect(blob.length).toBe(encryptedSize(layout));
    expect(blob.length).toBe(HEADER_BYTES + chunkCount(layout) * RECORD_OVERHEAD + size);
    expect(headerMatches(blob, layout)).toBe(true);
    expect(await decryptBlob(blob, layout)).toEqual(plain);
  });

  it('an empty file is one authenticated empty chunk', async () => {
    const layout = newLayout(0);
    expect(chunkCount(layout)).toBe(1);
    expect(await decryptBlob(await encrypt(Buffer.alloc(0), layout), layout)).toEqual(Buffer.alloc(0));
  });

  it('refuses a plaintext shorter or longer than the size it was announced with', async () => {
    await expect(encrypt(randomBytes(10), newLayout(11, 16))).rejects.toThrow(/ended after 10 of 11/);
    await expect(encrypt(randomBytes(12), newLayout(11, 16))).rejects.toThrow(/longer than 11/);
  });

  it('the same plaintext encrypts differently each time (random nonces), and no nonce repeats within a blob', async () => {
    const plain = Buffer.alloc(64 * 16, 7);
    const layout = newLayout(plain.length, 16);
    const a = await encrypt(plain, layout);
    const b = await encrypt(plain, layout);
    expect(a.equals(b)).toBe(false);
    const nonces = new Set<string>();
    for (let i = 0; i < chunkCount(layout); i++) nonces.add(a.subarray(HEADER_BYTES + i * (16 + RECORD_OVERHEAD), HEADER_BYTES + i * (16 + RECORD_OVERHEAD) + NONCE_BYTES).toString('hex'));
    expect(nonces.size).toBe(chunkCount(layout));
    expect(a.includes(plain.subarray(0, 16))).toBe(false);
  });
});

describe('ranges', () => {
  const C = 65536;
  const size = 3 * C + 123;
  const plain = randomBytes(size);
  const layout = newLayout(size);

  it.each([
    [0, 0],
    [0, C - 1],
    [C - 1, C],
    [C, C],
    [C, 2 * C - 1],
    [C - 1, 2 * C],
    [2 * C + 5, size - 1],
    [3 * C, size - 1],
    [size - 1, size - 1],
    [0, size - 1],
  ])('bytes %i-%i match the plaintext, reading only the chunks they cover', async (start, end) => {
    const blob = await encrypt(plain, layout);
    const { plain: got, read } = await rangeOf(blob, layout, start, end);
    expect(got).toEqual(plain.subarray(start, end + 1));
    const first = Math.floor(start / C);
    const last = Math.floor(end / C);
    expect(read).toEqual([{ start: HEADER_BYTES + first * (C + RECORD_OVERHEAD), end: HEADER_BYTES + last * (C + RECORD_OVERHEAD) + RECORD_OVERHEAD + Math.min(C, size - last * C) - 1 }]);
    expect(read[0].end).toBeLessThan(blob.length);
  });

  it('refuses a range outside the plaintext', () => {
    expect(() => cipherRangeOf(layout, { start: 0, end: size })).toThrow(RangeError);
    expect(() => cipherRangeOf(layout, { start: 5, end: 4 })).toThrow(RangeError);
  });
});

describe('tampering', () => {
  const C = 32;
  const plain = randomBytes(C * 4 + 5);
  const layout = newLayout(plain.length, C);
  const record = (i: number) => HEADER_BYTES + i * (C + RECORD_OVERHEAD);

  it('a flipped bit in a chunk fails authentication, and no byte of that chunk is released', async () => {
    const blob = await encrypt(plain, layout);
    blob[record(1) + NONCE_BYTES + 3] ^= 1;
    const released: Buffer[] = [];
    const reading = (async () => {
      for await (const part of decryptChunks([blob.subarray(HEADER_BYTES)], key, layout)) released.push(part);
    })();
    await expect(reading).rejects.toThrow(ContentAuthenticationError);
    expect(Buffer.concat(released)).toEqual(plain.subarray(0, C));
  });

  it('swapped chunks fail (the index is authenticated)', async () => {
    const blob = await encrypt(plain, layout);
    const a = Buffer.from(blob.subarray(record(0), record(1)));
    const b = Buffer.from(blob.subarray(record(1), record(2)));
    a.copy(blob, record(1));
    b.copy(blob, record(0));
    await expect(decryptBlob(blob, layout)).rejects.toThrow(ContentAuthenticationError);
  });

  it('a blob cut after a whole chunk fails (the last chunk is marked final)', async () => {
    const blob = await encrypt(plain, layout);
    const shorter = { ...layout, plaintextSize: 3 * C };
    await expect(decryptBlob(blob.subarray(0, record(3)), shorter)).rejects.toThrow(ContentAuthenticationError);
    await expect(decryptBlob(blob.subarray(0, record(3) + 10), layout)).rejects.toThrow(/truncated/);
  });

  it('another blob under the same key does not pass for this one (the blob id is authenticated)', async () => {
    const other = newLayout(plain.length, C);
    const blob = await encrypt(plain, other);
    await expect(decryptBlob(blob, layout)).rejects.toThrow(ContentAuthenticationError);
  });

  it('the wrong key fails', async () => {
    const blob = await encrypt(plain, layout);
    await expect(decryptBlob(blob, layout, randomBytes(32))).rejects.toThrow(ContentAuthenticationError);
  });

  it('a header that says another chunk size does not pass', async () => {
    const blob = await encrypt(plain, layout);
    blob.writeUInt32BE(C * 2, 8);
    expect(headerMatches(blob, layout)).toBe(false);
  });
});

describe('streaming', () => {
  it('encrypts and decrypts 96 MiB without holding it: memory stays flat', async () => {
    const size = 96 * 1024 * 1024;
    const layout = newLayout(size);
    async function* plaintext() {
      const block = Buffer.alloc(1024 * 1024, 0x5a);
      for (let i = 0; i < size / block.length; i++) yield block;
    }
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const ciphertext = async function* () {
      for await (const part of encryptContent(plaintext(), key, layout)) {
        peak = Math.max(peak, process.memoryUsage().heapUsed);
        yield part;
      }
    };
    let total = 0;
    const records = async function* () {
      let skipped = false;
      for await (const part of ciphertext()) {
        if (!skipped) {
          skipped = true;
          continue; // the header
        }
        yield part;
      }
    };
    for await (const part of decryptChunks(records(), key, layout)) total += part.length;
    expect(total).toBe(size);
    expect(peak - before).toBeLessThan(48 * 1024 * 1024);
  }, 60_000);
});
