/**
 * The ContentStore contract, run against both stores: the local disk (the embedded default) and
 * S3 (against the test S3 server, helpers/s3-server.ts, each test under a prefix of its own).
 * Then what only one of them does.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { CreateMultipartUploadCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { ContentMissingError, derivedKeyFor, InvalidStorageKeyError, type ContentStore } from '../../src/storage/content/content-store';
import { LocalDiskStore } from '../../src/storage/content/local-disk-store';
import { createS3Client, S3ContentStore } from '../../src/storage/content/s3-store';
import { tempDir } from '../helpers/database';
import { startTestS3Server, testS3Settings, type TestS3Server } from '../helpers/s3-server';

const MiB = 1024 * 1024;
const sha = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
const text = async (stream: Readable) => (await bytesOf(stream)).toString('utf8');

async function collect(keys: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const key of keys) out.push(key);
  return out.sort();
}

/** A store under test, with what the contract tests need to provoke it. */
interface StoreUnderTest {
  readonly store: ContentStore;
  /** A finished local file holding `bytes`, as putFile takes it. */
  file(bytes: string | Buffer): Promise<string>;
  /** Leaves what is not a key next to the keys (a stranger, a partial write's leftovers). */
  leaveStrangers(): Promise<void>;
  /** Leaves what an interrupted write leaves (a temporary file, an unfinished multipart upload). */
  leavePartialWrite(): Promise<void>;
}

let s3: TestS3Server;
beforeAll(async () => {
  s3 = await startTestS3Server();
});
afterAll(() => s3?.close());

function localStore(): StoreUnderTest {
  const dir = tempDir();
  const root = path.join(dir, 'content');
  return {
    store: new LocalDiskStore(root),
    async file(bytes) {
      await mkdir(path.join(dir, 'uploads'), { recursive: true });
      const file = path.join(dir, 'uploads', randomBytes(8).toString('hex'));
      await writeFile(file, bytes);
      return file;
    },
    async leaveStrangers() {
      await mkdir(path.join(root, '.tmp'), { recursive: true });
      await writeFile(path.join(root, '.tmp', 'partial'), 'half');
      await writeFile(path.join(root, 'README'), 'x');
      await mkdir(path.join(root, 'ab', 'cd'), { recursive: true });
      await writeFile(path.join(root, 'ab', 'cd', 'not-a-key'), 'x');
    },
    async leavePartialWrite() {
      await mkdir(path.join(root, '.tmp'), { recursive: true });
      await writeFile(path.join(root, '.tmp', randomBytes(8).toString('hex')), 'half');
    },
  };
}

/** Small parts and copy limits, so that multipart writes and copies happen with a few MiB. */
const S3_OPTIONS = { partSize: 5 * MiB, maxSingleCopyBytes: 6 * MiB, copyPartSize: 5 * MiB, partConcurrency: 2 };

function makeS3Store(): StoreUnderTest & { readonly s3Store: S3ContentStore } {
  const dir = tempDir();
  const settings = testS3Settings(s3);
  const client = createS3Client(settings);
  onTestFinished(() => client.destroy());
  const store = new S3ContentStore(client, settings.bucket, settings.prefix, S3_OPTIONS);
  const put = (key: string, body: string) => client.send(new PutObjectCommand({ Bucket: settings.bucket, Key: key, Body: body }));
  return {
    store,
    s3Store: store,
    async file(bytes) {
      const file = path.join(dir, randomBytes(8).toString('hex'));
      await writeFile(file, bytes);
      return file;
    },
    async leaveStrangers() {
      await put(`${store.contentPrefix}README`, 'x');
      await put(`${store.contentPrefix}ab/cd/not-a-key`, 'x');
      await put(`${settings.prefix}uploads/${sha('x')}`, 'x');
      // Another prefix's content: another service sharing the bucket.
      await put(`other-${settings.prefix}content/${store.newKey(sha('x'))}`, 'x');
    },
    async leavePartialWrite() {
      await client.send(new CreateMultipartUploadCommand({ Bucket: settings.bucket, Key: `${store.contentPrefix}${store.newKey(sha('partial'))}` }));
    },
  };
}

describe.each([
  ['local disk', localStore],
  ['S3', makeS3Store],
])('%s content store', (_name, make: () => StoreUnderTest) => {
  async function stored(bytes: string | Buffer): Promise<{ store: ContentStore; key: string; under: StoreUnderTest }> {
    const under = make();
    const key = under.store.newKey(sha(bytes));
    await under.store.putFile(key, await under.file(bytes));
    return { store: under.store, key, under };
  }

  test('a new key fans out by the hash and is never the same twice for the same bytes', () => {
    const { store } = make();
    const hash = sha('hello');
    const first = store.newKey(hash);
    const second = store.newKey(hash);
    expect(first).toMatch(new RegExp(`^${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}-[0-9a-f]{16}$`));
    expect(second).not.toBe(first);
  });

  test('putFile puts a finished file under the key: readable, with its size, and the source is gone', async () => {
    const under = make();
    const source = await under.file('hello world');
    const key = under.store.newKey(sha('hello world'));
    await under.store.putFile(key, source);
    expect(existsSync(source)).toBe(false);
    expect(await under.store.stat(key)).toEqual({ size: 11 });
    expect(await text(await under.store.read(key))).toBe('hello world');
  });

  test('derived objects: put whole under their own keys, replaced, read, listed apart from content keys, deleted', async () => {
    const { store, key } = await stored('the content');
    const hash = sha('the content');
    const small = derivedKeyFor(hash, 11, 'small.webp');
    const other = derivedKeyFor(sha('other'), 5, 'large.webp');
    await store.putDerived(small, Buffer.from('first'));
    await store.putDerived(small, Buffer.from('second'));
    await store.putDerived(other, Buffer.from('x'));
    expect(await store.stat(small)).toEqual({ size: 6 });
    expect(await text(await store.read(small))).toBe('second');
    const listed = async (of?: string) => {
      const keys: string[] = [];
      for await (const k of store.listDerivedKeys(of)) keys.push(k);
      return keys.sort();
    };
    expect(await listed()).toEqual([small, other].sort());
    expect(await listed(hash)).toEqual([small]);
    const contentKeys: string[] = [];
    for await (const k of store.listKeys()) contentKeys.push(k);
    expect(contentKeys).toEqual([key]);
    await store.delete(small);
    expect(await store.stat(small)).toBeNull();
    await expect(store.putDerived('derived/../../etc/passwd', Buffer.from('x'))).rejects.toThrow(/invalid storage key/);
  });

  test('an empty file is stored and read back as empty', async () => {
    const { store, key } = await stored('');
    expect(await store.stat(key)).toEqual({ size: 0 });
    expect(await text(await store.read(key))).toBe('');
  });

  test('read returns an inclusive byte range', async () => {
    const { store, key } = await stored('0123456789');
    expect(await text(await store.read(key, { start: 0, end: 0 }))).toBe('0');
    expect(await text(await store.read(key, { start: 3, end: 6 }))).toBe('3456');
    expect(await text(await store.read(key, { start: 9, end: 9 }))).toBe('9');
    expect(await text(await store.read(key, { start: 0, end: 9 }))).toBe('0123456789');
  });

  test('a file larger than a part goes in whole (multipart on S3), and ranges across part boundaries read right', async () => {
    const bytes = randomBytes(11 * MiB + 3);
    const { store, key } = await stored(bytes);
    expect(await store.stat(key)).toEqual({ size: bytes.length });
    expect(sha(await bytesOf(await store.read(key)))).toBe(sha(bytes));
    const start = 5 * MiB - 10;
    const end = 10 * MiB + 10;
    expect((await bytesOf(await store.read(key, { start, end }))).equals(bytes.subarray(start, end + 1))).toBe(true);
  });

  test('reading a key that holds nothing rejects before any byte; stat says null', async () => {
    const { store } = make();
    const key = store.newKey(sha('nothing'));
    await expect(store.read(key)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await store.stat(key)).toBeNull();
  });

  test('delete removes the bytes and is idempotent', async () => {
    const { store, key } = await stored('bytes');
    await store.delete(key);
    expect(await store.stat(key)).toBeNull();
    await store.delete(key);
  });

  test('deleting one key of some bytes leaves another key of the same bytes alone', async () => {
    const { store, key: older, under } = await stored('same');
    const newer = store.newKey(sha('same'));
    await store.putFile(newer, await under.file('same'));
    await store.delete(older);
    expect(await text(await store.read(newer))).toBe('same');
  });

  test('putFile never overwrites a key that holds something', async () => {
    const { store, key, under } = await stored('first');
    await expect(store.putFile(key, await under.file('second'))).rejects.toThrow(/already holds/);
    expect(await text(await store.read(key))).toBe('first');
  });

  test('keys that are not of the store form are refused, so no key reaches outside the store', async () => {
    const { store } = make();
    for (const key of ['../../etc/passwd', 'ab/cd/../../x', `aa/bb/${sha('x')}-0000000000000000`, '', 'AB/CD/x']) {
      await expect(store.read(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
      await expect(store.delete(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
      await expect(store.stat(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
    }
  });

  test('listKeys lists every stored key and nothing else', async () => {
    const { store, key: a, under } = await stored('a');
    const b = store.newKey(sha('b'));
    await store.putFile(b, await under.file('b'));
    await under.leaveStrangers();
    await under.leavePartialWrite();
    expect(await collect(store.listKeys())).toEqual([a, b].sort());
  });

  test('an empty store lists no keys, even before anything was ever written', async () => {
    expect(await collect(make().store.listKeys())).toEqual([]);
  });

  test('sweepPartialWrites removes what interrupted writes left before the given time, and never a key', async () => {
    const { store, key, under } = await stored('kept');
    await under.leavePartialWrite();
    expect(await store.sweepPartialWrites(new Date(Date.now() - 3600_000))).toBe(0);
    expect(await store.sweepPartialWrites(new Date(Date.now() + 60_000))).toBe(1);
    expect(await store.sweepPartialWrites(new Date(Date.now() + 60_000))).toBe(0);
    expect(await text(await store.read(key))).toBe('kept');
  });
});

describe('local disk content store only', () => {
  test('a key is the file content/ab/cd/<sha256>-<16 hex>', async () => {
    const dir = tempDir();
    const store = new LocalDiskStore(path.join(dir, 'content'));
    const source = path.join(dir, 'finished');
    await writeFile(source, 'hello world');
    const key = store.newKey(sha('hello world'));
    await store.putFile(key, source);
    expect(existsSync(path.join(dir, 'content', ...key.split('/')))).toBe(true);
  });

  test('sweepPartialWrites removes old temporary files only', async () => {
    const dir = tempDir();
    const store = new LocalDiskStore(dir);
    await mkdir(path.join(dir, '.tmp'));
    await writeFile(path.join(dir, '.tmp', 'old'), 'x');
    await writeFile(path.join(dir, '.tmp', 'fresh'), 'y');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(path.join(dir, '.tmp', 'old'), twoHoursAgo, twoHoursAgo);
    expect(await store.sweepPartialWrites(new Date(Date.now() - 3600_000))).toBe(1);
    expect(await readdir(path.join(dir, '.tmp'))).toEqual(['fresh']);
  });

  test.skipIf(!existsSync('/dev/shm'))('a file on another file system is copied in through a temporary file, then removed', async () => {
    const dir = tempDir();
    const store = new LocalDiskStore(path.join(dir, 'content'));
    const shm = mkdtempSync('/dev/shm/fss-test-');
    onTestFinished(() => rmSync(shm, { recursive: true, force: true }));
    const source = path.join(shm, 'finished');
    await writeFile(source, 'across file systems');
    const key = store.newKey(sha('across file systems'));
    await store.putFile(key, source);
    expect(existsSync(source)).toBe(false);
    expect(await readFile(path.join(dir, 'content', ...key.split('/')), 'utf8')).toBe('across file systems');
    expect(await readdir(path.join(dir, 'content', '.tmp'))).toEqual([]);
  });
});

describe('S3 content store only', () => {
  test('a key is the object <prefix>content/ab/cd/<sha256>-<16 hex>', async () => {
    const { s3Store, file } = makeS3Store();
    const key = s3Store.newKey(sha('hello'));
    await s3Store.putFile(key, await file('hello'));
    expect(await s3Store.objectSize(`${s3Store.prefix}content/${key}`)).toBe(5);
  });

  test('a missing key rejects with ContentMissingError', async () => {
    const { store } = makeS3Store();
    await expect(store.read(store.newKey(sha('gone')))).rejects.toBeInstanceOf(ContentMissingError);
  });

  test('copyObjectInto copies inside the bucket: in one request, or part by part beyond the single-copy limit', async () => {
    const { s3Store, file } = makeS3Store();
    for (const size of [1000, 11 * MiB + 5]) {
      const bytes = randomBytes(size);
      const source = s3Store.newKey(sha(bytes));
      await s3Store.putFile(source, await file(bytes));
      const target = s3Store.newKey(sha(bytes));
      await s3Store.copyObjectInto(target, `${s3Store.contentPrefix}${source}`, size);
      expect(await s3Store.stat(target)).toEqual({ size });
      expect(sha(await bytesOf(await s3Store.read(target)))).toBe(sha(bytes));
      await expect(s3Store.copyObjectInto(target, `${s3Store.contentPrefix}${source}`, size)).rejects.toThrow(/already holds/);
    }
    // Nothing unfinished is left behind.
    expect(await s3Store.sweepPartialWrites(new Date(Date.now() + 60_000))).toBe(0);
  });

  test('a failed multipart write is aborted and leaves nothing under the key', async () => {
    const { s3Store, file } = makeS3Store();
    // The store refuses the second part (a network failure, a full disk on the store).
    s3Store.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { PartNumber?: number };
        if (context.commandName === 'UploadPartCommand' && input.PartNumber === 2) throw new Error('part refused');
        return next(args);
      },
      { step: 'initialize', name: 'refuseSecondPart' },
    );
    const key = s3Store.newKey(sha('x'));
    const source = await file(randomBytes(11 * MiB));
    await expect(s3Store.putFile(key, source)).rejects.toThrow(/part refused/);
    expect(await s3Store.stat(key)).toBeNull();
    expect(existsSync(source)).toBe(true);
    expect(await s3Store.sweepPartialWrites(new Date(Date.now() + 60_000))).toBe(0);
  });

});
