/**
 * The offset of a plaintext upload on the local upload area (storage/content/upload-area.ts): the
 * bytes its acknowledged writes made durable, never bytes a PATCH wrote without being answered.
 * What a power loss leaves (the file's size covering bytes that never reached the disk, which read
 * as zeros on ext4) is made here by appending to the file, as a kill -9 in the middle of a PATCH
 * would also leave it; that every acknowledged write is synced first is checked under strace in
 * crash/durable-acknowledgements.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Upload } from '@tus/server';
import { describe, expect, test } from 'vitest';
import { LocalDiskStore } from '../../src/storage/content/local-disk-store';
import { sha256OfStream } from '../../src/storage/content/running-hashes';
import { LocalUploadArea } from '../../src/storage/content/upload-area';
import { tempDir } from '../helpers/database';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function plaintextUpload(size: number) {
  const dir = tempDir();
  const area = new LocalUploadArea(path.join(dir, 'uploads'), new LocalDiskStore(path.join(dir, 'content')));
  const id = randomBytes(16).toString('hex');
  const datastore = area.createDatastore();
  await datastore.create(new Upload({ id, size, offset: 0 }));
  const write = (bytes: Buffer, offset: number) => datastore.write(Readable.from([bytes]), id, offset);
  return { area, id, datastore, write, file: area.dataPath(id) };
}

describe('a plaintext upload on the local disk', () => {
  test('does not count bytes past its last acknowledged write, and the next write replaces them', async () => {
    const bytes = randomBytes(300_000);
    const { area, id, datastore, write, file } = await plaintextUpload(bytes.length);
    expect(await write(bytes.subarray(0, 100_000), 0)).toBe(100_000);
    // A PATCH that wrote 150,000 bytes (zeros, as a power loss leaves them) and was never answered.
    await appendFile(file, Buffer.alloc(150_000));
    expect((await datastore.getUpload(id)).offset).toBe(100_000);
    expect(await area.readableBytes(id)).toBe(100_000);
    // The client resumes from the offset it is told; a shorter write leaves nothing of the zeros.
    expect(await write(bytes.subarray(100_000, 120_000), 100_000)).toBe(120_000);
    expect((await stat(file)).size).toBe(120_000);
    expect(await write(bytes.subarray(120_000), 120_000)).toBe(bytes.length);
    expect(await area.sha256Of(id)).toEqual({ sha256: sha(bytes), size: bytes.length });
    expect((await sha256OfStream((await area.open(id))!)).sha256).toBe(sha(bytes));
  });

  test('begun before offsets were recorded (no record beside it), counts its file as it stands', async () => {
    const bytes = randomBytes(50_000);
    const { area, id, datastore, write, file } = await plaintextUpload(bytes.length * 2);
    await write(bytes, 0);
    await rm(`${file}.offset`);
    await appendFile(file, bytes.subarray(0, 1000));
    expect((await datastore.getUpload(id)).offset).toBe(51_000);
    expect(await area.readableBytes(id)).toBe(51_000);
  });

  test('remove() takes the record of its offset with the rest', async () => {
    const { area, id, write, file } = await plaintextUpload(1000);
    await write(randomBytes(10), 0);
    await area.remove(id);
    await expect(stat(`${file}.offset`)).rejects.toThrow(/ENOENT/);
    expect(await area.idsUntouchedSince(new Date(Date.now() + 3600_000))).not.toContain(id);
  });
});
