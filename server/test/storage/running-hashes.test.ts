/**
 * The SHA-256 of an upload computed while its bytes arrive (storage/content/running-hashes.ts), on
 * the local upload area: used only when this process saw every byte arrive through writes that
 * succeeded; in every other case the bytes are read and hashed, with the same answer.
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Upload } from '@tus/server';
import { describe, expect, test } from 'vitest';
import { LocalDiskStore } from '../../src/storage/content/local-disk-store';
import { RunningHashes } from '../../src/storage/content/running-hashes';
import { LocalUploadArea } from '../../src/storage/content/upload-area';
import { tempDir } from '../helpers/database';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const KiB = 1024;

/** Two areas on one folder: two processes (or one before and after a restart) sharing the uploads. */
function areas(): { one: LocalUploadArea; other: LocalUploadArea } {
  const dir = tempDir();
  const store = new LocalDiskStore(path.join(dir, 'content'));
  const uploads = path.join(dir, 'uploads');
  return { one: new LocalUploadArea(uploads, store), other: new LocalUploadArea(uploads, store) };
}

async function createUpload(area: LocalUploadArea, size: number): Promise<string> {
  const id = randomBytes(16).toString('hex');
  await area.createDatastore().create(new Upload({ id, size, offset: 0 }));
  return id;
}

/** A PATCH's body as tus hands it to the datastore, in pieces of 16 KiB. */
function body(bytes: Buffer): Readable {
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 16 * KiB) pieces.push(bytes.subarray(at, at + 16 * KiB));
  return Readable.from(pieces);
}

/** A body that yields `bytes` and then fails, as a dropped connection does. */
function failingBody(bytes: Buffer): Readable {
  return Readable.from(
    (async function* () {
      yield bytes;
      throw new Error('connection reset');
    })(),
  );
}

describe('hashing an upload as it arrives', () => {
  test('bytes written in several PATCHes give their SHA-256 without being read again', async () => {
    const { one } = areas();
    const data = randomBytes(300 * KiB + 5);
    const id = await createUpload(one, data.length);
    const datastore = one.createDatastore();
    let offset = 0;
    for (const end of [100 * KiB, 250 * KiB, data.length]) offset = await datastore.write(body(data.subarray(offset, end)), id, offset);

    expect(offset).toBe(data.length);
    // The running hash covers every byte: the answer does not come from reading the file.
    expect(one.runningHashes.digestOf(id, data.length)).toBe(sha(data));
    expect(await one.sha256Of(id)).toEqual({ sha256: sha(data), size: data.length });
  });

  test('a process that did not see the bytes arrive (a restart, another instance) reads them and gives the same SHA-256', async () => {
    const { one, other } = areas();
    const data = randomBytes(200 * KiB);
    const id = await createUpload(one, data.length);
    await one.createDatastore().write(body(data), id, 0);

    expect(other.runningHashes.digestOf(id, data.length)).toBeNull();
    expect(await other.sha256Of(id)).toEqual({ sha256: sha(data), size: data.length });
  });

  test('an upload resumed in another process is hashed from its bytes there', async () => {
    const { one, other } = areas();
    const data = randomBytes(200 * KiB);
    const id = await createUpload(one, data.length);
    await one.createDatastore().write(body(data.subarray(0, 80 * KiB)), id, 0);
    await other.createDatastore().write(body(data.subarray(80 * KiB)), id, 80 * KiB);

    // The second process never saw the first 80 KiB: no running hash of it answers.
    expect(other.runningHashes.digestOf(id, data.length)).toBeNull();
    expect(await other.sha256Of(id)).toEqual({ sha256: sha(data), size: data.length });
  });

  test('a running hash that does not match the offset of the next write is dropped, never continued', async () => {
    const { one, other } = areas();
    const data = randomBytes(240 * KiB);
    const id = await createUpload(one, data.length);
    await one.createDatastore().write(body(data.subarray(0, 80 * KiB)), id, 0);
    // Bytes 80–160 KiB arrive at another instance; this one hashed only the first 80 KiB.
    await other.createDatastore().write(body(data.subarray(80 * KiB, 160 * KiB)), id, 80 * KiB);
    await one.createDatastore().write(body(data.subarray(160 * KiB)), id, 160 * KiB);

    expect(one.runningHashes.digestOf(id, data.length)).toBeNull();
    expect(await one.sha256Of(id)).toEqual({ sha256: sha(data), size: data.length });
  });

  test('a write that fails half-way (a dropped connection) drops the running hash; the upload still hashes right', async () => {
    const { one } = areas();
    const data = randomBytes(200 * KiB);
    const id = await createUpload(one, data.length);
    const datastore = one.createDatastore();
    await datastore.write(body(data.subarray(0, 50 * KiB)), id, 0);
    await expect(datastore.write(failingBody(data.subarray(50 * KiB, 120 * KiB)), id, 50 * KiB)).rejects.toBeDefined();

    // Resumed from what the file holds, as a client does after HEAD.
    const reached = (await datastore.getUpload(id)).offset;
    await datastore.write(body(data.subarray(reached)), id, reached);
    expect(one.runningHashes.digestOf(id, data.length)).toBeNull();
    expect(await one.sha256Of(id)).toEqual({ sha256: sha(data), size: data.length });
  });

  test('bytes changed in the area after a write are not what the running hash answers for: the size must match too', async () => {
    const { one } = areas();
    const data = randomBytes(64 * KiB);
    const id = await createUpload(one, data.length);
    await one.createDatastore().write(body(data), id, 0);
    // The file was cut behind tus's back: the running hash covers more bytes than the area holds.
    // (Bytes added behind its back are not counted at all: upload-area.test.ts.)
    const shorter = data.subarray(0, data.length - 4);
    await writeFile(one.dataPath(id), shorter);

    expect(await one.sha256Of(id)).toEqual({ sha256: sha(shorter), size: shorter.length });
  });

  test('storing or removing an upload forgets its running hash', async () => {
    const { one } = areas();
    const data = randomBytes(10 * KiB);
    const kept = await createUpload(one, data.length);
    const removed = await createUpload(one, data.length);
    await one.createDatastore().write(body(data), kept, 0);
    await one.createDatastore().write(body(data), removed, 0);
    expect(one.runningHashes.size).toBe(2);

    await one.storeInto(kept, `${sha(data).slice(0, 2)}/${sha(data).slice(2, 4)}/${sha(data)}-0123456789abcdef`);
    await one.remove(removed);
    expect(one.runningHashes.size).toBe(0);
  });
});

describe('RunningHashes', () => {
  test('beyond its limit, the oldest running hashes are forgotten (and those uploads are read when completed)', async () => {
    const hashes = new RunningHashes(2);
    for (const id of ['a', 'b', 'c']) {
      const tracked = hashes.track(id, 0, Readable.from([Buffer.from(id)]));
      for await (const chunk of tracked.stream) void chunk;
      tracked.settle(1);
    }
    expect(hashes.digestOf('a', 1)).toBeNull();
    expect(hashes.digestOf('b', 1)).toBe(sha(Buffer.from('b')));
    expect(hashes.digestOf('c', 1)).toBe(sha(Buffer.from('c')));
  });

  test('a write whose store took another number of bytes than were hashed is not remembered', async () => {
    const hashes = new RunningHashes();
    const tracked = hashes.track('x', 0, Readable.from([Buffer.from('12345')]));
    for await (const chunk of tracked.stream) void chunk;
    tracked.settle(4);
    expect(hashes.digestOf('x', 4)).toBeNull();
    expect(hashes.digestOf('x', 5)).toBeNull();
  });
});
