/**
 * Encryption through the whole service (DECISIONS.md §11): FileEncrypt and Unlock in all four call
 * forms; what the content store holds afterwards (a grep of every file under <dataDir>/content);
 * ranges of an unlocked encrypted file over /d/; wrong passwords throttled; an unlock that
 * survives a restart, works on a second instance and ends with Logout; a big FolderEncrypt that
 * runs as a job, survives a restart halfway and reports progress.
 */
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppOptions } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import type { Services } from '../../src/operations/context';
import { encryptionProgress, INLINE_JOB_LIMITS, runEncryptionJobs } from '../../src/operations/encryption/encryption-jobs';
import { addAccount, element, logIn, newSession, signedResult, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { testEnv } from '../helpers/database';
import { contentStoreHolds, patternedBytes } from '../helpers/encryption';
import { FORMS, ops, type Form } from '../helpers/requests';
import { insertTestFile, sha256Of, storeTestContent } from '../helpers/stored-files';

const { FileEncrypt, FolderEncrypt, FolderAdd, Unlock, FileDownload, GetFiles, FileSearch, Logout } = ops;

const PASSWORD = 'correct horse';
const TIP = 'the horse & the battery';

/** The <result> of an answer, in any form: its attributes, and the raw XML for item checks. */
async function call(app: TestApp, form: Form, operation: typeof FileEncrypt, session: Session, params: Record<string, string | number>) {
  const { xml, result } = await signedResult(app, form, operation, session, params);
  return { attrs: result, xml };
}

/** A file of the account in `folderId`, straight into the database and the content store. */
async function storedFile(services: Services, accountId: number, name: string, bytes: string | Buffer, folderId = 0): Promise<number> {
  const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  const existing = await services.db.selectFrom('content').select('id').where('sha256', '=', sha256Of(data)).where('encrypted', '=', 0).executeTakeFirst();
  const contentId = existing?.id ?? (await storeTestContent(services, data)).contentId;
  return insertTestFile(services, { accountId, name, contentId, sha256: sha256Of(data), size: data.length, folderId });
}

const get = (app: TestApp, url: string, headers: Record<string, string> = {}) => {
  const { pathname } = new URL(url);
  return getBytes(app.url + pathname, headers);
};

function getBytes(url: string, headers: Record<string, string>): Promise<{ status: number; body: Buffer; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function downloadUrl(app: TestApp, session: Session, fid: number): Promise<string> {
  const result = await call(app, 'post', FileDownload, session, { fid });
  expect(result.attrs.code).toBe('0');
  return result.attrs.url;
}

describe.each(FORMS)('FileEncrypt and Unlock over %s', (form) => {
  let app: TestApp;
  let alice: Session;
  beforeAll(async () => {
    app = await startTestApp();
    alice = await newSession(app, 'alice', form);
  });
  afterAll(() => app.close());

  it('encrypts, lists encrypted="1" with the tip, refuses a wrong password, unlocks, downloads', async () => {
    const fid = await storedFile(app.app.services, alice.uid, 'notes.txt', 'MARKER-notes: the plan');
    expect((await call(app, form, FileEncrypt, alice, { fid, password: 'abc', password_tip: '' })).attrs.code).toBe('400');
    expect((await call(app, form, FileEncrypt, alice, { fid, password: PASSWORD, password_tip: TIP })).attrs).toMatchObject({ code: '0', msg: '' });
    expect((await call(app, form, FileEncrypt, alice, { fid, password: PASSWORD, password_tip: TIP })).attrs.code).toBe('423');

    const listed = await call(app, form, GetFiles, alice, { dir: '0', order: 'name', desc: '0' });
    expect(element(listed.xml, 'file')!.attrs).toMatchObject({ id: String(fid), encrypted: '1', tip: TIP });

    const locked = await call(app, form, FileDownload, alice, { fid });
    expect(locked.attrs).toMatchObject({ code: '423', reason: 'encrypted-locked', id: String(fid), tip: TIP, type: 'file' });

    expect((await call(app, form, Unlock, alice, { dirid: 0, fid, password: 'wrong password' })).attrs.code).toBe('403');
    expect((await call(app, form, Unlock, alice, { dirid: fid, fid, password: PASSWORD })).attrs.code).toBe('400');
    expect((await call(app, form, Unlock, alice, { dirid: 0, fid, password: PASSWORD })).attrs).toMatchObject({ code: '0', msg: '' });

    const answer = await get(app, await downloadUrl(app, alice, fid));
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('MARKER-notes: the plan');
  });
});

describe('what the content store holds', () => {
  let app: TestApp;
  let alice: Session;
  let bob: Session;
  beforeAll(async () => {
    app = await startTestApp();
    alice = await newSession(app, 'alice');
    bob = await newSession(app, 'bob');
  });
  afterAll(() => app.close());

  it('no file under <dataDir>/content holds the plaintext once its only file is encrypted', async () => {
    const { services } = app.app;
    const fid = await storedFile(services, alice.uid, 'alone.txt', 'MARKER-alone: nobody else has this');
    expect(await contentStoreHolds(services, 'MARKER-alone')).toBe(true);
    expect((await call(app, 'post', FileEncrypt, alice, { fid, password: PASSWORD, password_tip: TIP })).attrs.code).toBe('0');
    expect(await contentStoreHolds(services, 'MARKER-alone')).toBe(false);
  });

  it('the plaintext stays while another record references it, and goes with the last one', async () => {
    const { services } = app.app;
    const mine = await storedFile(services, alice.uid, 'copy.txt', 'MARKER-twice: stored once');
    const theirs = await storedFile(services, bob.uid, 'copy.txt', 'MARKER-twice: stored once');
    expect((await call(app, 'post', FileEncrypt, alice, { fid: mine, password: PASSWORD, password_tip: TIP })).attrs.code).toBe('0');
    expect(await contentStoreHolds(services, 'MARKER-twice')).toBe(true);
    expect((await get(app, await downloadUrl(app, bob, theirs))).body.toString()).toBe('MARKER-twice: stored once');
    expect((await call(app, 'post', FileEncrypt, bob, { fid: theirs, password: 'another one', password_tip: '' })).attrs.code).toBe('0');
    expect(await contentStoreHolds(services, 'MARKER-twice')).toBe(false);
  });

  it('a small FolderEncrypt leaves no plaintext of its files, and search hides them until unlocked', async () => {
    const { services } = app.app;
    const folder = await call(app, 'post', FolderAdd, alice, { dirid: 0, name: 'Vault' });
    const dirid = Number(element(folder.xml, 'folder')!.attrs.id);
    for (let i = 0; i < 3; i++) await storedFile(services, alice.uid, `vaulted ${i}.txt`, `MARKER-vault ${i}`, dirid);
    expect((await call(app, 'post', FolderEncrypt, alice, { dirid, password: PASSWORD, password_tip: TIP })).attrs.code).toBe('0');
    expect(await contentStoreHolds(services, 'MARKER-vault')).toBe(false);
    expect((await call(app, 'post', FileSearch, alice, { keyword: 'vaulted', order: 'name', desc: '0' })).attrs).toMatchObject({ code: '0', count: '0' });
    expect((await call(app, 'post', GetFiles, alice, { dir: String(dirid), order: 'name', desc: '0' })).attrs).toMatchObject({ code: '423', id: String(dirid), tip: TIP });
    expect((await call(app, 'post', Unlock, alice, { dirid, fid: 0, password: PASSWORD })).attrs.code).toBe('0');
    expect((await call(app, 'post', FileSearch, alice, { keyword: 'vaulted', order: 'name', desc: '0' })).attrs).toMatchObject({ code: '0', count: '3' });
  });
});

describe('ranges of an unlocked encrypted file over /d/', () => {
  let app: TestApp;
  let alice: Session;
  const C = 65536;
  const bytes = patternedBytes(4 * C + 4321);
  let url: string;
  beforeAll(async () => {
    app = await startTestApp();
    alice = await newSession(app, 'alice');
    const fid = await storedFile(app.app.services, alice.uid, 'movie.mp4', bytes);
    await call(app, 'post', FileEncrypt, alice, { fid, password: PASSWORD, password_tip: TIP });
    await call(app, 'post', Unlock, alice, { dirid: 0, fid, password: PASSWORD });
    url = await downloadUrl(app, alice, fid);
  });
  afterAll(() => app.close());

  it('the whole file: 200, the plaintext size and SHA-256 ETag', async () => {
    const answer = await get(app, url);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-length']).toBe(String(bytes.length));
    expect(answer.headers.etag).toBe(`"${sha256Of(bytes)}"`);
    expect(answer.body.equals(bytes)).toBe(true);
  });

  it.each([
    [0, C - 1],
    [C - 1, C],
    [C, 2 * C - 1],
    [2 * C - 3, 3 * C + 2],
    [4 * C, bytes.length - 1],
    [123, 4 * C + 7],
  ])('bytes=%i-%i: 206 with exactly those bytes', async (start, end) => {
    const answer = await get(app, url, { Range: `bytes=${start}-${end}` });
    expect(answer.status).toBe(206);
    expect(answer.headers['content-range']).toBe(`bytes ${start}-${end}/${bytes.length}`);
    expect(answer.body.equals(bytes.subarray(start, end + 1))).toBe(true);
  });

  it('a suffix range: the last bytes', async () => {
    const answer = await get(app, url, { Range: 'bytes=-70000' });
    expect(answer.status).toBe(206);
    expect(answer.body.equals(bytes.subarray(bytes.length - 70000))).toBe(true);
  });
});

describe('wrong passwords over the wire', () => {
  let app: TestApp;
  let alice: Session;
  beforeAll(async () => {
    app = await startTestApp();
    alice = await newSession(app, 'alice');
  });
  afterAll(() => app.close());

  it('answer 403 five times, then 429 with retryAfter, even for the right password', async () => {
    const fid = await storedFile(app.app.services, alice.uid, 'locked.txt', 'locked');
    await call(app, 'post', FileEncrypt, alice, { fid, password: PASSWORD, password_tip: TIP });
    for (let i = 0; i < 5; i++) expect((await call(app, 'post', Unlock, alice, { dirid: 0, fid, password: `guess ${i}` })).attrs.code).toBe('403');
    const refused = await call(app, 'post', Unlock, alice, { dirid: 0, fid, password: PASSWORD });
    expect(refused.attrs.code).toBe('429');
    expect(Number(refused.attrs.retryAfter)).toBeGreaterThan(0);
  });
});

/** An instance of the service on an existing data folder. */
async function instance(dataDir: string, options: AppOptions = {}): Promise<TestApp> {
  const config: Config = { ...loadConfig(testEnv(dataDir)), log: () => {} };
  const app = await buildApp(config, options);
  const server = http.createServer(app.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    config,
    logLines: [],
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await app.close();
    },
  };
}

async function newDataDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'fss-encryption-'));
}

describe('an unlock lives in the database, with the token', () => {
  it('survives a restart, works on a second instance, and ends with Logout', async () => {
    const dataDir = await newDataDir();
    let first = await instance(dataDir);
    const second = await instance(dataDir, { housekeeping: false });
    try {
      await addAccount(first, 'alice', 'alice-password-1');
      const alice = await logIn(first, 'post', 'alice', 'alice-password-1');
      const folder = await call(first, 'post', FolderAdd, alice, { dirid: 0, name: 'Private' });
      const dirid = Number(element(folder.xml, 'folder')!.attrs.id);
      const fid = await storedFile(first.app.services, alice.uid, 'inside.txt', 'MARKER-inside', dirid);
      expect((await call(first, 'post', FolderEncrypt, alice, { dirid, password: PASSWORD, password_tip: TIP })).attrs.code).toBe('0');
      expect((await call(second, 'post', GetFiles, alice, { dir: String(dirid), order: 'name', desc: '0' })).attrs.code).toBe('423');

      expect((await call(first, 'post', Unlock, alice, { dirid, fid: 0, password: PASSWORD })).attrs.code).toBe('0');
      const listed = await call(second, 'post', GetFiles, alice, { dir: String(dirid), order: 'name', desc: '0' });
      expect(listed.attrs).toMatchObject({ code: '0', count: '1' });
      expect(element(listed.xml, 'file')!.attrs).toMatchObject({ id: String(fid), encrypted: '1', tip: TIP });
      // A URL made by one instance is served by the other.
      const url = await downloadUrl(second, alice, fid);
      expect((await get(first, url)).body.toString()).toBe('MARKER-inside');

      await first.close();
      first = await instance(dataDir);
      expect((await call(first, 'post', GetFiles, alice, { dir: String(dirid), order: 'name', desc: '0' })).attrs.code).toBe('0');
      expect((await get(first, url)).body.toString()).toBe('MARKER-inside');

      expect((await call(first, 'post', Logout, alice, {})).attrs.code).toBe('0');
      expect((await get(second, url)).status).toBe(423);
      const again = await logIn(first, 'post', 'alice', 'alice-password-1');
      expect((await call(second, 'post', GetFiles, again, { dir: String(dirid), order: 'name', desc: '0' })).attrs).toMatchObject({ code: '423', id: String(dirid) });
    } finally {
      await second.close();
      await first.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

/** Account alice, logged in, with a folder "Archive" of `count` stored files whose bytes start with `marker`. */
async function aliceWithArchive(app: TestApp, count: number, marker: string): Promise<{ alice: Session; dirid: number }> {
  const alice = await newSession(app, 'alice');
  const folder = await call(app, 'post', FolderAdd, alice, { dirid: 0, name: 'Archive' });
  const dirid = Number(element(folder.xml, 'folder')!.attrs.id);
  for (let i = 0; i < count; i++) await storedFile(app.app.services, alice.uid, `doc ${i}.txt`, `${marker} ${i}`, dirid);
  return { alice, dirid };
}

describe('a big FolderEncrypt is a background job', () => {
  it('answers at once, reports progress, survives a restart halfway, and finishes on the next instance', async () => {
    const dataDir = await newDataDir();
    // The first instance runs no job by itself: the test drives it, and stops it halfway.
    let app = await instance(dataDir, { encryptionJobs: false });
    try {
      const count = INLINE_JOB_LIMITS.files * 2;
      const { alice, dirid } = await aliceWithArchive(app, count, 'MARKER-archive');

      expect((await call(app, 'post', FolderEncrypt, alice, { dirid, password: PASSWORD, password_tip: TIP })).attrs.code).toBe('0');
      expect(await encryptionProgress(app.app.services, alice.uid, dirid)).toMatchObject({ state: 'waiting', totalFiles: count, doneFiles: 0 });
      // Locked at once, although its files are still being encrypted.
      expect((await call(app, 'post', GetFiles, alice, { dir: String(dirid), order: 'name', desc: '0' })).attrs.code).toBe('423');

      await runEncryptionJobs(app.app.services, { maxFiles: count / 2 });
      expect(await encryptionProgress(app.app.services, alice.uid, dirid)).toMatchObject({ totalFiles: count, doneFiles: count / 2 });
      expect(await contentStoreHolds(app.app.services, 'MARKER-archive')).toBe(true);
      await app.close();

      app = await instance(dataDir);
      const deadline = Date.now() + 20_000;
      while ((await encryptionProgress(app.app.services, alice.uid, dirid))?.state !== 'finished') {
        if (Date.now() > deadline) throw new Error('the job did not finish');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await encryptionProgress(app.app.services, alice.uid, dirid)).toMatchObject({ totalFiles: count, doneFiles: count, failedFiles: 0 });
      expect(await contentStoreHolds(app.app.services, 'MARKER-archive')).toBe(false);
      const files = await app.app.services.db.selectFrom('files').select('encrypted').where('folder_id', '=', dirid).execute();
      expect(files.map((file) => file.encrypted)).toEqual(Array(count).fill(1));
    } finally {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  // A process killed between the two would otherwise leave a file encrypted and never counted: the
  // job's next pass looks only for files still to encrypt (it happened once in the two-instance test).
  it('a file is counted in the transaction that switches its content: a count refused undoes the switch', async () => {
    const dataDir = await newDataDir();
    const app = await instance(dataDir, { encryptionJobs: false });
    try {
      const count = INLINE_JOB_LIMITS.files + 1;
      const { alice, dirid } = await aliceWithArchive(app, count, 'MARKER-counted');
      expect((await call(app, 'post', FolderEncrypt, alice, { dirid, password: PASSWORD, password_tip: TIP })).attrs.code).toBe('0');

      const { db } = app.app.services;
      if (app.config.databaseUrl) {
        await sql`create function fss_test_refuse_progress() returns trigger language plpgsql as $$ begin raise exception 'progress refused'; end $$`.execute(db);
        await sql`create trigger refuse_progress before update of done_files on encryption_jobs for each row execute function fss_test_refuse_progress()`.execute(db);
      } else {
        await sql`create trigger refuse_progress before update of done_files on encryption_jobs begin select raise(abort, 'progress refused'); end`.execute(db);
      }
      await runEncryptionJobs(app.app.services, { maxFiles: 1 }).catch(() => {});

      const files = await db.selectFrom('files').select('encrypted').where('folder_id', '=', dirid).execute();
      expect(files.map((file) => file.encrypted)).toEqual(Array(count).fill(0));
      expect(await contentStoreHolds(app.app.services, 'MARKER-counted')).toBe(true);
    } finally {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
