/**
 * Uploads into an encrypted folder, encrypted as they arrive (docs/encryption.md, "Uploads into an
 * encrypted folder"), driven over HTTP as the web app drives them: the creation names the folder in
 * its Upload-Metadata, PATCHes of any size follow, then FileAdd. What the upload area and the
 * content store hold is read from the disk itself.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkIntegrity, describeReport, problemCount } from '../../src/operations/admin/integrity';
import { UPLOAD_CHUNK_SIZE as CHUNK } from '../../src/operations/content/uploads';
import { localUploadAreaFor } from '../../src/storage/content/stores';
import { element, logIn, newSession, signedResult, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { testContent } from '../helpers/content';
import { contentStoreHolds, patternedBytes } from '../helpers/encryption';
import { ops, send, type HttpAnswer } from '../helpers/requests';

const { FolderAdd, FolderEncrypt, Unlock, FileAdd, FileDownload, GetFiles } = ops;

const PASSWORD = 'correct horse';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let app: TestApp;
let alice: Session;
let bob: Session;
/** An encrypted folder of alice's, unlocked for `alice`. */
let vault: number;
let plain: number;

async function call(session: Session, operation: typeof FolderAdd, params: Record<string, string | number>): Promise<{ attrs: Record<string, string>; xml: string }> {
  const { xml, result } = await signedResult(app, 'post', operation, session, params);
  return { attrs: result, xml };
}

beforeAll(async () => {
  app = await startTestApp();
  alice = await newSession(app, 'alice');
  bob = await newSession(app, 'bob');
  vault = Number(element((await call(alice, FolderAdd, { dirid: 0, name: 'Vault' })).xml, 'folder')!.attrs.id);
  plain = Number(element((await call(alice, FolderAdd, { dirid: 0, name: 'Plain' })).xml, 'folder')!.attrs.id);
  expect((await call(alice, FolderEncrypt, { dirid: vault, password: PASSWORD, password_tip: '' })).attrs.code).toBe('0');
  expect((await call(alice, Unlock, { dirid: vault, fid: 0, password: PASSWORD })).attrs.code).toBe('0');
});
afterAll(() => app.close());

const tusHeaders = (token: string, extra: Record<string, string> = {}) => ({ 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${token}`, ...extra });

async function create(session: Session, length: number, folder: number | string): Promise<{ answer: HttpAnswer; path: string }> {
  const metadata = `filename ${Buffer.from('secret.bin').toString('base64')},folder ${Buffer.from(String(folder)).toString('base64')}`;
  const answer = await send(app.url, 'POST', '/upload/', tusHeaders(session.token, { 'Upload-Length': String(length), 'Upload-Metadata': metadata }));
  const location = String(answer.headers.location ?? '');
  return { answer, path: location ? new URL(location).pathname : '' };
}

const patch = (session: Session, uploadPath: string, offset: number, chunk: Buffer) =>
  send(app.url, 'PATCH', uploadPath, tusHeaders(session.token, { 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' }), chunk);

const offsetOf = async (session: Session, uploadPath: string) => Number((await send(app.url, 'HEAD', uploadPath, tusHeaders(session.token))).headers['upload-offset']);

/** Sends `bytes` in PATCHes of `sizes` (repeated), checking each answer; the last answer. */
async function sendAll(session: Session, uploadPath: string, bytes: Buffer, sizes: readonly number[], from = 0): Promise<HttpAnswer> {
  let offset = from;
  let last: HttpAnswer | null = null;
  for (let i = 0; offset < bytes.length; i++) {
    const chunk = bytes.subarray(offset, offset + sizes[i % sizes.length]);
    last = await patch(session, uploadPath, offset, chunk);
    expect(last.status).toBe(204);
    offset += chunk.length;
    expect(Number(last.headers['upload-offset'])).toBe(offset);
  }
  return last!;
}

/** Every file the upload area holds, with its bytes. */
async function uploadAreaFiles(): Promise<Array<{ name: string; bytes: Buffer }>> {
  const dir = localUploadAreaFor(app.app.services.config).directory;
  const names = await readdir(dir).catch(() => [] as string[]);
  return Promise.all(names.map(async (name) => ({ name, bytes: await readFile(path.join(dir, name)) })));
}

/** Whether any file of the upload area holds any 48-byte window of `plaintext` taken every 16 KiB. */
async function uploadAreaHoldsPlaintextOf(plaintext: Buffer): Promise<boolean> {
  const files = await uploadAreaFiles();
  for (let at = 0; at + 48 <= plaintext.length; at += 16 * 1024) {
    const window = plaintext.subarray(at, at + 48);
    if (files.some((file) => file.bytes.includes(window))) return true;
  }
  return false;
}

async function addFile(session: Session, dirid: number, name: string, bytes: Buffer) {
  return call(session, FileAdd, { name, ext: 'bin', size: bytes.length, dirid, hash: sha256(bytes) });
}

function download(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    http
      .get(app.url + new URL(url).pathname, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`download: ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}

async function downloaded(session: Session, fid: number): Promise<Buffer> {
  const answer = await call(session, FileDownload, { fid });
  expect(answer.attrs.code).toBe('0');
  return download(answer.attrs.url);
}

/** A file of the folder's listing, by name. */
async function listed(session: Session, dir: number, name: string): Promise<Record<string, string>> {
  const { xml } = await call(session, GetFiles, { dir, order: 'name', desc: '0' });
  const match = [...xml.matchAll(/<file\s[^>]*\/?>/g)].map((m) => element(m[0], 'file')!.attrs).find((attrs) => attrs.name === name);
  if (!match) throw new Error(`${name} is not listed`);
  return match;
}

// The bucket's upload area stores uploads as they come (docs/encryption.md §6): its own test below.
const encryptsOnArrival = testContent() === 'local';

describe.runIf(encryptsOnArrival)('an upload into an encrypted folder', () => {
  it('never puts its plaintext on disk: the upload area holds ciphertext, the content store the encrypted file', async () => {
    const bytes = patternedBytes(3 * CHUNK + 12_345, 'MARKER-upload-1');
    const { answer, path: uploadPath } = await create(alice, bytes.length, vault);
    expect(answer.status).toBe(201);
    // One whole chunk and a tail kept sealed.
    const first = CHUNK + 100_000;
    await sendAll(alice, uploadPath, bytes.subarray(0, first), [first]);
    expect(await uploadAreaHoldsPlaintextOf(bytes.subarray(0, first))).toBe(false);
    const last = await sendAll(alice, uploadPath, bytes, [777_777], first);
    expect(last.headers['upload-sha256']).toBe(sha256(bytes));

    const added = await addFile(alice, vault, 'secret-1.bin', bytes);
    expect(added.attrs.code).toBe('0');
    expect(await contentStoreHolds(app.app.services, 'MARKER-upload-1')).toBe(false);
    const fid = Number((await listed(alice, vault, 'secret-1.bin')).id);
    expect((await listed(alice, vault, 'secret-1.bin')).encrypted).toBe('1');
    expect((await downloaded(alice, fid)).equals(bytes)).toBe(true);
    // fsck finds the file, its encrypted content and the blob consistent.
    const report = await checkIntegrity(app.app.services);
    expect(problemCount(report), describeReport(report).join('\n')).toBe(0);
  });

  it('is encrypted at rest from its FileAdd on: no encryption job is made for it', async () => {
    const bytes = patternedBytes(70_000, 'MARKER-upload-2');
    const { path: uploadPath } = await create(alice, bytes.length, vault);
    await sendAll(alice, uploadPath, bytes, [bytes.length]);
    const jobsBefore = await app.app.services.db.selectFrom('encryption_jobs').select('id').execute();
    expect((await addFile(alice, vault, 'secret-2.bin', bytes)).attrs.code).toBe('0');
    const file = await app.app.services.db.selectFrom('files').select(['key_id', 'encrypted', 'content_id']).where('name', '=', 'secret-2.bin').executeTakeFirstOrThrow();
    expect(file.encrypted).toBe(1);
    expect(file.key_id).not.toBeNull();
    const content = await app.app.services.db.selectFrom('content').select('encrypted').where('id', '=', file.content_id).executeTakeFirstOrThrow();
    expect(content.encrypted).toBe(1);
    expect(await app.app.services.db.selectFrom('encryption_jobs').select('id').execute()).toEqual(jobsBefore);
  });

  it('reports every byte received as its offset, the sealed tail included, and resumes from there', async () => {
    const bytes = patternedBytes(2 * CHUNK + 5000, 'MARKER-upload-3');
    const { path: uploadPath } = await create(alice, bytes.length, vault);
    await sendAll(alice, uploadPath, bytes.subarray(0, 1000), [1000]);
    expect(await offsetOf(alice, uploadPath)).toBe(1000);
    await sendAll(alice, uploadPath, bytes.subarray(0, CHUNK + 1), [CHUNK], 1000);
    expect(await offsetOf(alice, uploadPath)).toBe(CHUNK + 1);
    await sendAll(alice, uploadPath, bytes.subarray(0, CHUNK + 4), [3], CHUNK + 1);
    expect(await offsetOf(alice, uploadPath)).toBe(CHUNK + 4);
    // A PATCH at another offset is refused as tus refuses it, and changes nothing.
    expect((await patch(alice, uploadPath, CHUNK - 10, bytes.subarray(CHUNK - 10, CHUNK + 10))).status).toBe(409);
    expect(await offsetOf(alice, uploadPath)).toBe(CHUNK + 4);
    const last = await sendAll(alice, uploadPath, bytes, [CHUNK], CHUNK + 4);
    expect(last.headers['upload-sha256']).toBe(sha256(bytes));
    expect((await addFile(alice, vault, 'secret-3.bin', bytes)).attrs.code).toBe('0');
    expect((await downloaded(alice, Number((await listed(alice, vault, 'secret-3.bin')).id))).equals(bytes)).toBe(true);
  });

  it('keeps what a PATCH cut short delivered, and completes after resuming from the offset HEAD gives', async () => {
    const bytes = patternedBytes(3 * CHUNK, 'MARKER-upload-4');
    const { path: uploadPath } = await create(alice, bytes.length, vault);
    await new Promise<void>((resolve) => {
      const req = http.request(new URL(uploadPath, app.url), {
        method: 'PATCH',
        headers: tusHeaders(alice.token, { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(bytes.length) }),
      });
      req.on('error', () => {});
      req.write(bytes.subarray(0, CHUNK + CHUNK / 2));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    let offset = -1;
    for (let i = 0; i < 50; i++) {
      const now = await offsetOf(alice, uploadPath);
      if (now === offset) break;
      offset = now;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(CHUNK + CHUNK / 2);
    expect(await uploadAreaHoldsPlaintextOf(bytes.subarray(0, offset))).toBe(false);
    const last = await sendAll(alice, uploadPath, bytes, [1_234_567], offset);
    expect(last.headers['upload-sha256']).toBe(sha256(bytes));
  });

  it('is hashed by decrypting what was written when this process did not see every byte arrive', async () => {
    const bytes = patternedBytes(CHUNK + CHUNK / 2, 'MARKER-upload-5');
    const { path: uploadPath } = await create(alice, bytes.length, vault);
    await sendAll(alice, uploadPath, bytes.subarray(0, CHUNK + 100), [CHUNK + 100]);
    // As after a restart: the running hash is gone.
    localUploadAreaFor(app.app.services.config).runningHashes.forget(path.basename(uploadPath));
    const last = await sendAll(alice, uploadPath, bytes, [CHUNK], CHUNK + 100);
    expect(last.headers['upload-sha256']).toBe(sha256(bytes));
  });

  it('sent whole with its creation (creation-with-upload) is encrypted as well', async () => {
    const bytes = patternedBytes(CHUNK + 777, 'MARKER-upload-6');
    const metadata = `folder ${Buffer.from(String(vault)).toString('base64')}`;
    const answer = await send(
      app.url,
      'POST',
      '/upload/',
      tusHeaders(alice.token, { 'Upload-Length': String(bytes.length), 'Upload-Metadata': metadata, 'Content-Type': 'application/offset+octet-stream' }),
      bytes,
    );
    expect(answer.status).toBe(201);
    expect(answer.headers['upload-sha256']).toBe(sha256(bytes));
    expect((await addFile(alice, vault, 'secret-6.bin', bytes)).attrs.code).toBe('0');
    expect(await contentStoreHolds(app.app.services, 'MARKER-upload-6')).toBe(false);
    expect((await downloaded(alice, Number((await listed(alice, vault, 'secret-6.bin')).id))).equals(bytes)).toBe(true);
  });

  it('of an empty file is complete at its creation', async () => {
    const { answer } = await create(alice, 0, vault);
    expect(answer.status).toBe(201);
    expect(answer.headers['upload-sha256']).toBe(sha256(Buffer.alloc(0)));
    expect((await addFile(alice, vault, 'empty.bin', Buffer.alloc(0))).attrs.code).toBe('0');
    expect((await downloaded(alice, Number((await listed(alice, vault, 'empty.bin')).id))).length).toBe(0);
  });
});

describe('who may upload into an encrypted folder', () => {
  it.runIf(encryptsOnArrival)('a session that has not unlocked the folder is refused with 423, at creation and on resume', async () => {
    const other = await logIn(app, 'post', 'alice', 'alice-password-1');
    expect((await create(other, 10, vault)).answer.status).toBe(423);
    const { path: uploadPath } = await create(alice, 10, vault);
    const refused = await patch(other, uploadPath, 0, Buffer.from('0123456789'));
    expect(refused.status).toBe(423);
    expect(await offsetOf(alice, uploadPath)).toBe(0);
  });

  it('a folder that is not the caller\'s is 404, and a folder id that is not a number 400', async () => {
    expect((await create(bob, 10, vault)).answer.status).toBe(404);
    expect((await create(alice, 10, 'x1')).answer.status).toBe(400);
  });

  it.runIf(encryptsOnArrival)('an upload into a plain folder is stored as it comes', async () => {
    const bytes = patternedBytes(50_000, 'MARKER-plain');
    const { path: uploadPath } = await create(alice, bytes.length, plain);
    await sendAll(alice, uploadPath, bytes.subarray(0, 20_000), [20_000]);
    expect(await uploadAreaHoldsPlaintextOf(bytes.subarray(0, 20_000))).toBe(true);
    await sendAll(alice, uploadPath, bytes, [30_000], 20_000);
    expect((await addFile(alice, plain, 'plain.bin', bytes)).attrs.code).toBe('0');
    expect((await listed(alice, plain, 'plain.bin')).encrypted ?? '0').toBe('0');
  });
});

describe.runIf(!encryptsOnArrival)('an upload into an encrypted folder, content in S3', () => {
  it('is stored as it comes and encrypted by a job after FileAdd; the folder is still checked (423, 404)', async () => {
    const other = await logIn(app, 'post', 'alice', 'alice-password-1');
    expect((await create(other, 10, vault)).answer.status).toBe(423);
    expect((await create(bob, 10, vault)).answer.status).toBe(404);
    const bytes = patternedBytes(100_000, 'MARKER-s3');
    const { path: uploadPath } = await create(alice, bytes.length, vault);
    const last = await sendAll(alice, uploadPath, bytes, [60_000]);
    expect(last.headers['upload-sha256']).toBe(sha256(bytes));
    expect((await addFile(alice, vault, 's3.bin', bytes)).attrs.code).toBe('0');
    for (let i = 0; i < 100 && (await listed(alice, vault, 's3.bin')).encrypted !== '1'; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await listed(alice, vault, 's3.bin')).encrypted).toBe('1');
    expect((await downloaded(alice, Number((await listed(alice, vault, 's3.bin')).id))).equals(bytes)).toBe(true);
  });
});

