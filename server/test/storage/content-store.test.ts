import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, onTestFinished, test } from 'vitest';
import { InvalidStorageKeyError } from '../../src/storage/content/content-store';
import { LocalDiskStore } from '../../src/storage/content/local-disk-store';
import { tempDir } from '../helpers/database';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function storeWithFile(content: string) {
  const dir = tempDir();
  const store = new LocalDiskStore(path.join(dir, 'content'));
  await mkdir(path.join(dir, 'uploads'));
  const source = path.join(dir, 'uploads', 'finished');
  await writeFile(source, content);
  return { dir, store, source };
}

async function collect(keys: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const key of keys) out.push(key);
  return out.sort();
}

describe('local disk content store', () => {
  test('a new key fans out by the hash and is never the same twice for the same bytes', () => {
    const store = new LocalDiskStore(tempDir());
    const hash = sha('hello');
    const first = store.newKey(hash);
    const second = store.newKey(hash);
    expect(first).toMatch(new RegExp(`^${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}-[0-9a-f]{16}$`));
    expect(second).not.toBe(first);
  });

  test('putFile moves a finished file under the key: readable, with its size, and the source is gone', async () => {
    const { dir, store, source } = await storeWithFile('hello world');
    const key = store.newKey(sha('hello world'));
    await store.putFile(key, source);
    expect(existsSync(source)).toBe(false);
    expect(await store.stat(key)).toEqual({ size: 11 });
    expect(await text(await store.read(key))).toBe('hello world');
    expect(existsSync(path.join(dir, 'content', ...key.split('/')))).toBe(true);
  });

  test('read returns an inclusive byte range', async () => {
    const { store, source } = await storeWithFile('0123456789');
    const key = store.newKey(sha('0123456789'));
    await store.putFile(key, source);
    expect(await text(await store.read(key, { start: 0, end: 0 }))).toBe('0');
    expect(await text(await store.read(key, { start: 3, end: 6 }))).toBe('3456');
    expect(await text(await store.read(key, { start: 9, end: 9 }))).toBe('9');
  });

  test('reading a key that holds nothing rejects before any byte; stat says null', async () => {
    const store = new LocalDiskStore(tempDir());
    const key = store.newKey(sha('nothing'));
    await expect(store.read(key)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await store.stat(key)).toBeNull();
  });

  test('delete removes the bytes and is idempotent', async () => {
    const { store, source } = await storeWithFile('bytes');
    const key = store.newKey(sha('bytes'));
    await store.putFile(key, source);
    await store.delete(key);
    expect(await store.stat(key)).toBeNull();
    await store.delete(key);
  });

  test('deleting one key of some bytes leaves another key of the same bytes alone', async () => {
    const { dir, store, source } = await storeWithFile('same');
    const older = store.newKey(sha('same'));
    await store.putFile(older, source);
    const again = path.join(dir, 'uploads', 'again');
    await writeFile(again, 'same');
    const newer = store.newKey(sha('same'));
    await store.putFile(newer, again);
    await store.delete(older);
    expect(await text(await store.read(newer))).toBe('same');
  });

  test('putFile never overwrites a key that holds something', async () => {
    const { dir, store, source } = await storeWithFile('first');
    const key = store.newKey(sha('first'));
    await store.putFile(key, source);
    const other = path.join(dir, 'uploads', 'other');
    await writeFile(other, 'second');
    await expect(store.putFile(key, other)).rejects.toThrow(/already holds/);
    expect(await text(await store.read(key))).toBe('first');
  });

  test('keys that are not of the store form are refused, so no key reaches outside the folder', async () => {
    const store = new LocalDiskStore(tempDir());
    for (const key of ['../../etc/passwd', 'ab/cd/../../x', `aa/bb/${sha('x')}-0000000000000000`, '', 'AB/CD/x']) {
      await expect(store.read(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
      await expect(store.delete(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
    }
  });

  test('listKeys lists every stored key and nothing else', async () => {
    const { dir, store, source } = await storeWithFile('a');
    const a = store.newKey(sha('a'));
    await store.putFile(a, source);
    const second = path.join(dir, 'uploads', 'b');
    await writeFile(second, 'b');
    const b = store.newKey(sha('b'));
    await store.putFile(b, second);
    // A temporary file of an interrupted write and a stranger are not keys.
    await mkdir(path.join(dir, 'content', '.tmp'), { recursive: true });
    await writeFile(path.join(dir, 'content', '.tmp', 'partial'), 'half');
    await writeFile(path.join(dir, 'content', 'README'), 'x');
    expect(await collect(store.listKeys())).toEqual([a, b].sort());
  });

  test('an empty store lists no keys, even before its folder exists', async () => {
    const store = new LocalDiskStore(path.join(tempDir(), 'not-yet'));
    expect(await collect(store.listKeys())).toEqual([]);
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
