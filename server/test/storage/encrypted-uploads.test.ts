/**
 * Uploads encrypted as they arrive, on the local upload area (storage/content/encrypted-uploads.ts):
 * the offset worked out from the files alone, whatever a killed process or a power loss left (a
 * record cut short, records appended after the tail was written, records of zeros), and the
 * plaintext read back exactly.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFile, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Upload } from '@tus/server';
import { describe, expect, test } from 'vitest';
import { DEFAULT_CHUNK_SIZE, RECORD_OVERHEAD } from '../../src/operations/crypto/content-cipher';
import { uploadCipherOf } from '../../src/operations/encryption/encrypted-content';
import { tailPathOf } from '../../src/storage/content/encrypted-uploads';
import { LocalDiskStore } from '../../src/storage/content/local-disk-store';
import { sha256OfStream } from '../../src/storage/content/running-hashes';
import { LocalUploadArea } from '../../src/storage/content/upload-area';
import { tempDir } from '../helpers/database';

const CHUNK = DEFAULT_CHUNK_SIZE;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** An area with one encrypted upload of `size` bytes, its key held. */
async function encryptedUpload(size: number) {
  const dir = tempDir();
  const area = new LocalUploadArea(path.join(dir, 'uploads'), new LocalDiskStore(path.join(dir, 'content')));
  const id = randomBytes(16).toString('hex');
  const cipher = uploadCipherOf(randomBytes(32), { chunkSize: CHUNK, blobId: randomBytes(16), plaintextSize: size });
  const release = area.ciphers.hold(id, cipher);
  const datastore = area.createDatastore();
  await datastore.create(new Upload({ id, size, offset: 0 }));
  const write = (bytes: Buffer, offset: number) => datastore.write(Readable.from([bytes]), id, offset);
  return { area, id, datastore, write, release, blob: area.dataPath(id) };
}

describe('an upload encrypted as it arrives', () => {
  test('reports whole records and its tail as the offset, and reads back exactly what was sent', async () => {
    const bytes = randomBytes(3 * CHUNK + 1000);
    const { area, id, datastore, write } = await encryptedUpload(bytes.length);
    expect(await write(bytes.subarray(0, CHUNK + 10), 0)).toBe(CHUNK + 10);
    expect((await datastore.getUpload(id)).offset).toBe(CHUNK + 10);
    expect((await stat(area.dataPath(id))).size).toBe(32 + CHUNK + RECORD_OVERHEAD);
    expect(await write(bytes.subarray(CHUNK + 10), CHUNK + 10)).toBe(bytes.length);
    expect(await area.readableBytes(id)).toBe(bytes.length);
    expect(await area.sha256Of(id)).toEqual({ sha256: sha(bytes), size: bytes.length });
    expect((await sha256OfStream((await area.open(id))!)).sha256).toBe(sha(bytes));
  });

  test('a record cut short by a crash is not counted: the offset is the records and the tail before it', async () => {
    const bytes = randomBytes(3 * CHUNK);
    const { id, datastore, write, blob } = await encryptedUpload(bytes.length);
    await write(bytes.subarray(0, CHUNK + 10), 0);
    await appendFile(blob, randomBytes(5000)); // half a record of the next PATCH, then the process died
    expect((await datastore.getUpload(id)).offset).toBe(CHUNK + 10);
    // The next PATCH overwrites it from the last whole record.
    expect(await write(bytes.subarray(CHUNK + 10), CHUNK + 10)).toBe(bytes.length);
    expect((await stat(blob)).size).toBe(32 + 3 * (CHUNK + RECORD_OVERHEAD));
  });

  test('records appended after the last tail was written (a PATCH cut short before its answer) are not counted: the tail says where it stands', async () => {
    const bytes = randomBytes(3 * CHUNK);
    const { area, id, datastore, write, blob } = await encryptedUpload(bytes.length);
    await write(bytes.subarray(0, CHUNK + 10), 0);
    const oldTail = await readFile(tailPathOf(blob));
    await write(bytes.subarray(CHUNK + 10, 2 * CHUNK + 20), CHUNK + 10);
    // As if the second PATCH had been killed after appending its record, before writing its tail.
    await writeFile(tailPathOf(blob), oldTail);
    expect((await datastore.getUpload(id)).offset).toBe(CHUNK + 10);
    // The client resumes from there; the record is written again, and the whole reads back exactly.
    expect(await write(bytes.subarray(CHUNK + 10), CHUNK + 10)).toBe(bytes.length);
    expect((await sha256OfStream((await area.open(id))!)).sha256).toBe(sha(bytes));
  });

  test('whole records of zeros past the tail (what a power loss can leave under the size) are not counted', async () => {
    const bytes = randomBytes(4 * CHUNK);
    const { area, id, datastore, write, blob } = await encryptedUpload(bytes.length);
    await write(bytes.subarray(0, CHUNK + 10), 0);
    await appendFile(blob, Buffer.alloc(2 * (CHUNK + RECORD_OVERHEAD)));
    expect((await datastore.getUpload(id)).offset).toBe(CHUNK + 10);
    expect(await area.readableBytes(id)).toBe(CHUNK + 10);
    expect(await write(bytes.subarray(CHUNK + 10), CHUNK + 10)).toBe(bytes.length);
    expect((await stat(blob)).size).toBe(32 + 4 * (CHUNK + RECORD_OVERHEAD));
    expect((await sha256OfStream((await area.open(id))!)).sha256).toBe(sha(bytes));
  });

  test('a tail that does not open (altered, or another key) is not counted', async () => {
    const bytes = randomBytes(2 * CHUNK);
    const { id, datastore, write, blob } = await encryptedUpload(bytes.length);
    await write(bytes.subarray(0, CHUNK + 10), 0);
    const tail = await readFile(tailPathOf(blob));
    tail[tail.length - 1] ^= 1;
    await writeFile(tailPathOf(blob), tail);
    expect((await datastore.getUpload(id)).offset).toBe(CHUNK);
  });

  test('is never read or written without its key: the plaintext store does not take it over', async () => {
    const bytes = randomBytes(CHUNK + 10);
    const { area, id, datastore, write, release } = await encryptedUpload(bytes.length);
    await write(bytes.subarray(0, 10), 0);
    release();
    await expect(datastore.write(Readable.from([bytes.subarray(10)]), id, 10)).rejects.toBeTruthy();
    await expect(datastore.getUpload(id)).rejects.toBeTruthy();
    await expect(area.readableBytes(id)).rejects.toThrow(/key is not held/);
  });

  test('remove() takes the blob, the tail and the tus metadata', async () => {
    const { area, id, write } = await encryptedUpload(CHUNK * 2);
    await write(randomBytes(100), 0);
    await area.remove(id);
    expect(await area.idsUntouchedSince(new Date(Date.now() + 3600_000))).not.toContain(id);
  });

  test('truncating the blob below its header is repaired by the next write', async () => {
    const bytes = randomBytes(CHUNK);
    const { id, datastore, write, blob } = await encryptedUpload(bytes.length);
    await truncate(blob, 7);
    expect((await datastore.getUpload(id)).offset).toBe(0);
    expect(await write(bytes, 0)).toBe(bytes.length);
    expect((await stat(blob)).size).toBe(32 + CHUNK + RECORD_OVERHEAD);
  });
});
