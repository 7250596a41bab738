/**
 * Two instances of the service on one PostgreSQL database and one S3 bucket (docs/design.md,
 * "Running several instances"; README, "Scaling out"): two real `fss serve` processes
 * (helpers/service-process.ts) on loopback ports, each with a data folder of its own, the same
 * FSS_SECRET, one fresh database of the test PostgreSQL server and one prefix of a test S3 server;
 * a client that alternates between them as a load balancer without sticky sessions would send it:
 *
 * - a token from a login on A works on B, and a Logout on B ends it on A;
 * - half a file uploaded over tus on A is resumed on B; FileAdd on A takes the hash B answered, and
 *   the download (URL from B, bytes from A) has exactly the bytes sent;
 * - an encrypted file unlocked on A is downloaded through B;
 * - 20 concurrent ShareDownload calls spread over A and B on a share with a limit of 5: 5 URLs;
 * - two PATCHes of one upload at once, one on A and one on B, are serialized by the upload lock in
 *   the database (the second asks the first to let go, and waits for it): the upload stays whole;
 * - the instance working on a background encryption job is killed (SIGKILL) halfway, and the
 *   other one takes the job over when its lease runs out (FSS_JOB_LEASE_SECONDS=2 here) and
 *   finishes it.
 *
 * Runs in the "postgres" project only (vitest.config.ts); starts its own S3 server.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, type OperationSpec, type ServiceName } from '../../src/catalog/operations';
import { signRequest } from '../../src/operations/accounts/signing';
import { element } from '../helpers/app-server';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { callInForm, resultXml, send, type HttpAnswer, type Value } from '../helpers/requests';
import { startTestS3Server, testS3Settings, type TestS3Server } from '../helpers/s3-server';
import { killAllServices, runFss, startService, type ServiceProcess } from '../helpers/service-process';

const op = (service: ServiceName, name: string): OperationSpec => findOperation(service, name)!;
const Login = op('OAuthService', 'Login');
const Logout = op('OAuthService', 'Logout');
const FolderAdd = op('FileService', 'FolderAdd');
const FileAdd = op('FileService', 'FileAdd');
const FileDownload = op('FileService', 'FileDownload');
const FileEncrypt = op('FileService', 'FileEncrypt');
const FolderEncrypt = op('FileService', 'FolderEncrypt');
const FileShare = op('FileService', 'FileShare');
const Unlock = op('FileService', 'Unlock');
const GetFiles = op('UserService', 'GetFiles');
const GetShareFiles = op('UserService', 'GetShareFiles');
const ShareDownload = op('ShareService', 'ShareDownload');

const KiB = 1024;
const MiB = 1024 * KiB;
const PASSWORD = 'alice-password-1';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let database: TestDatabase;
let s3: TestS3Server;
let db: pg.Pool;
let workDir: string;
let a: ServiceProcess;
let b: ServiceProcess;
let alice: Session;

interface Session {
  readonly uid: number;
  readonly token: string;
  readonly key: string;
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'fss-instances-'));
  [database, s3] = await Promise.all([createTestDatabase(), startTestS3Server()]);
  db = new pg.Pool({ connectionString: database.url, max: 2 });
  // Idle connections ended by the server when the test database is dropped: not the test's failure.
  db.on('error', () => undefined);
  const bucket = testS3Settings(s3);
  const env = {
    FSS_DATABASE_URL: database.url,
    FSS_SECRET: randomBytes(32).toString('base64'),
    FSS_S3_ENDPOINT: bucket.endpoint!,
    FSS_S3_BUCKET: bucket.bucket,
    FSS_S3_REGION: bucket.region,
    FSS_S3_ACCESS_KEY_ID: bucket.accessKeyId!,
    FSS_S3_SECRET_ACCESS_KEY: bucket.secretAccessKey!,
    FSS_S3_FORCE_PATH_STYLE: 'true',
    FSS_S3_PREFIX: bucket.prefix,
    // Meant for tests: a job whose instance died is taken over after 2 s rather than 60.
    FSS_JOB_LEASE_SECONDS: '2',
  };
  const dirA = path.join(workDir, 'a');
  const dirB = path.join(workDir, 'b');
  // Both start at once on the empty-of-accounts database (each would create the demo account:
  // exactly one does).
  [a, b] = await Promise.all([startService(dirA, env), startService(dirB, env)]);
  const added = await runFss(dirA, ['user', 'add', 'alice', '--password', PASSWORD], env);
  expect(added.code, added.stderr).toBe(0);
  alice = await logIn(a.url);
}, 120_000);

afterAll(async () => {
  await killAllServices();
  await db?.end();
  await database?.drop();
  await s3?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

// ---- Calls ---------------------------------------------------------------------------------------

async function logIn(url: string): Promise<Session> {
  const answer = await callInForm(url, 'post', Login, { uid: 'alice', pwd: PASSWORD });
  const token = element(resultXml(answer, Login), 'token');
  if (!token || token.text === '0') throw new Error(`login refused: ${answer.body}`);
  return { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key };
}

/** A signed call on the instance at `url`: the <result> attributes and the XML. */
async function call(url: string, operation: OperationSpec, params: Record<string, Value>, session = alice) {
  const values: Record<string, Value> = { uid: session.uid, token: session.token, ...params };
  const text: Record<string, string> = {};
  for (const p of operation.params) if (p.name !== 'sign') text[p.name] = values[p.name] === undefined || values[p.name] === null ? '' : String(values[p.name]);
  values.sign = signRequest(session.key, operation.name, text);
  const answer = await callInForm(url, 'post', operation, values);
  expect(answer.status).toBe(200);
  const xml = resultXml(answer, operation);
  return { result: element(xml, 'result')?.attrs ?? {}, xml };
}

async function anonymous(url: string, operation: OperationSpec, params: Record<string, Value>) {
  const answer = await callInForm(url, 'post', operation, params);
  expect(answer.status).toBe(200);
  return element(resultXml(answer, operation), 'result')!.attrs;
}

async function addFolder(url: string, name: string): Promise<number> {
  const added = await call(url, FolderAdd, { dirid: 0, name });
  expect(added.result.code).toBe('0');
  return Number(element(added.xml, 'folder')!.attrs.id);
}

async function addFile(url: string, name: string, bytes: Buffer, dirid = 0): Promise<number> {
  const added = await call(url, FileAdd, { name, ext: path.extname(name).slice(1), size: bytes.length, dirid, hash: sha256(bytes) });
  expect(added.result, added.xml).toMatchObject({ code: '0' });
  return Number(element(added.xml, 'file')!.attrs.id);
}

/** Downloads file `fid`: the URL from one instance, the bytes from the other (or the same). */
async function download(urlFrom: string, bytesFrom: string, fid: number, session = alice): Promise<{ status: number; body: Buffer }> {
  const answer = await call(urlFrom, FileDownload, { fid }, session);
  if (answer.result.code !== '0') return { status: Number(answer.result.code), body: Buffer.alloc(0) };
  return getBytes(bytesFrom, new URL(answer.result.url).pathname);
}

function getBytes(base: string, pathname: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(new URL(pathname, base), (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

// ---- tus -----------------------------------------------------------------------------------------

const tusHeaders = (extra: Record<string, string> = {}) => ({ 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${alice.token}`, ...extra });

async function createUpload(url: string, length: number): Promise<string> {
  const answer = await send(url, 'POST', '/upload/', tusHeaders({ 'Upload-Length': String(length) }));
  expect(answer.status).toBe(201);
  return new URL(String(answer.headers.location)).pathname;
}

const patch = (url: string, upload: string, offset: number, chunk: Buffer): Promise<HttpAnswer> =>
  send(url, 'PATCH', upload, tusHeaders({ 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' }), chunk);

async function offsetOf(url: string, upload: string): Promise<number> {
  const answer = await send(url, 'HEAD', upload, tusHeaders());
  expect(answer.status).toBe(200);
  return Number(answer.headers['upload-offset']);
}

/** Uploads `bytes` whole on one instance: the hash the completion answered. */
async function uploadWhole(url: string, bytes: Buffer): Promise<string> {
  const upload = await createUpload(url, bytes.length);
  const answer = await patch(url, upload, 0, bytes);
  expect(answer.status).toBe(204);
  return String(answer.headers['upload-sha256']);
}

interface SlowPatch {
  readonly status: number;
  /** When its answer (or the end of its connection) arrived. */
  readonly at: number;
  /** When the last byte of its body went out. */
  readonly sentAt: number;
}

/** A PATCH whose body goes out in `pieces` pieces, `everyMs` apart (a slow client). */
function slowPatch(url: string, upload: string, offset: number, bytes: Buffer, pieces: number, everyMs: number): Promise<SlowPatch> {
  return new Promise((resolve) => {
    const req = http.request(new URL(upload, url), {
      method: 'PATCH',
      headers: tusHeaders({ 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(bytes.length) }),
    });
    let done = false;
    let sentAt = Number.NaN;
    const finish = (status: number) => {
      if (done) return;
      done = true;
      resolve({ status, at: Date.now(), sentAt });
    };
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => finish(res.statusCode ?? 0));
    });
    req.on('error', () => finish(0));
    const size = Math.ceil(bytes.length / pieces);
    void (async () => {
      for (let start = 0; start < bytes.length && !done && !req.destroyed; start += size) {
        req.write(bytes.subarray(start, start + size));
        if (start + size >= bytes.length) sentAt = Date.now();
        await sleep(everyMs);
      }
      req.end();
    })();
  });
}

// ---- The tests -----------------------------------------------------------------------------------

describe('two instances on one PostgreSQL database and one bucket', () => {
  it('a token from a login on A works on B; a Logout on B ends it on A', async () => {
    const session = await logIn(a.url);
    const folder = await call(b.url, FolderAdd, { dirid: 0, name: 'Made on B' }, session);
    expect(folder.result.code).toBe('0');
    const listed = await call(a.url, GetFiles, { dir: '0', order: 'name', desc: '0' }, session);
    expect(listed.result.code).toBe('0');
    expect(listed.xml).toContain('name="Made on B"');

    expect((await call(b.url, Logout, {}, session)).result.code).toBe('0');
    expect((await call(a.url, GetFiles, { dir: '0', order: 'name', desc: '0' }, session)).result.code).toBe('401');
  });

  it('an upload begun over tus on A is resumed on B; FileAdd on A; the download has exactly its bytes', async () => {
    // The first part is under S3's 5 MiB minimum part: A leaves it as tus' `.part` object, which B
    // must find in the bucket and put in front of what it receives.
    const data = randomBytes(9 * MiB + 13);
    const upload = await createUpload(a.url, data.length);
    const first = 3 * MiB + 7;
    expect((await patch(a.url, upload, 0, data.subarray(0, first))).status).toBe(204);

    const offset = await offsetOf(b.url, upload);
    expect(offset).toBe(first);
    const last = await patch(b.url, upload, offset, data.subarray(offset));
    expect(last.status).toBe(204);
    expect(last.headers['upload-sha256']).toBe(sha256(data));
    // A sees the upload completed too (HEAD answers the hash).
    const head = await send(a.url, 'HEAD', upload, tusHeaders());
    expect(head.headers).toMatchObject({ 'upload-offset': String(data.length), 'upload-sha256': sha256(data) });

    const fid = await addFile(a.url, 'resumed.bin', data);
    const got = await download(b.url, a.url, fid);
    expect(got.status).toBe(200);
    expect(got.body.length).toBe(data.length);
    expect(sha256(got.body)).toBe(sha256(data));
  });

  it('a file encrypted on B and unlocked on A is downloaded through B', async () => {
    const plain = Buffer.from(`MARKER-secret ${randomBytes(8).toString('hex')}`);
    expect(await uploadWhole(a.url, plain)).toBe(sha256(plain));
    const fid = await addFile(a.url, 'secret.txt', plain);
    expect((await call(b.url, FileEncrypt, { fid, password: 'correct horse', password_tip: '' })).result.code).toBe('0');
    expect((await download(b.url, b.url, fid)).status).toBe(423);

    expect((await call(a.url, Unlock, { dirid: 0, fid, password: 'correct horse' })).result.code).toBe('0');
    const got = await download(b.url, b.url, fid);
    expect(got.status).toBe(200);
    expect(got.body.toString()).toBe(plain.toString());
  });

  it('20 concurrent ShareDownload calls over A and B on a share with a limit of 5: exactly 5 URLs', async () => {
    const bytes = Buffer.from('popular on two instances');
    await uploadWhole(b.url, bytes);
    const fid = await addFile(b.url, 'popular.txt', bytes);
    const shared = await call(a.url, FileShare, { fids: String(fid), downpwd: '', downValue: 5, description: '' });
    const code = element(shared.xml, 'file')!.attrs.code;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => anonymous(i % 2 === 0 ? a.url : b.url, ShareDownload, { code, downpwd: '', fid })));
    const granted = answers.filter((answer) => answer.code === '0');
    expect(granted).toHaveLength(5);
    expect(answers.filter((answer) => answer.code === '403')).toHaveLength(15);
    for (const [i, answer] of granted.entries()) {
      const got = await getBytes(i % 2 === 0 ? a.url : b.url, new URL(answer.url).pathname);
      expect(got.body.toString()).toBe('popular on two instances');
    }
    const listed = await call(b.url, GetShareFiles, { order: 'name', desc: '0' });
    expect(listed.xml).toMatch(/downloads="5"/);
  });

  it('two PATCHes of one upload at once, on A and on B, are serialized by the lock in the database; the upload stays whole', async () => {
    const data = randomBytes(4 * MiB);
    const upload = await createUpload(a.url, data.length);
    const id = upload.split('/').pop()!;

    // The same bytes from offset 0, as a client that lost its first connection sends them again:
    // first slowly to A (about 1.6 s), then at once to B while A's is still coming in.
    const onA = slowPatch(a.url, upload, 0, data, 32, 50);
    await sleep(300);
    const sawRequest = watchLockRow(id);
    const bStarted = Date.now();
    const onB = slowPatch(b.url, upload, 0, data, 1, 0);
    const [answerA, answerB] = await Promise.all([onA, onB]);
    const lockRows = await sawRequest.stop();

    // B's PATCH found the lock held by A and asked A to let go; it was answered only after A's
    // body was all in (A's PATCH then let go: tus gives a request 3 s to end once asked).
    expect(lockRows.some((row) => row.instance.includes(`:${a.pid}:`) && row.release_requested === 1)).toBe(true);
    expect(answerA.status, 'A wrote the whole upload').toBe(204);
    expect(answerB.at).toBeGreaterThanOrEqual(answerA.sentAt);
    expect(answerB.at - bStarted).toBeGreaterThan(500);
    // Then B found the upload complete (or its bytes written, if A's completion was not done yet):
    // 409, changing nothing.
    expect(answerB.status).toBe(409);

    // The client goes on from the offset reached, as tus clients do, on either instance.
    let offset = await offsetOf(b.url, upload);
    if (offset < data.length) {
      const rest = await patch(a.url, upload, offset, data.subarray(offset));
      expect(rest.status).toBe(204);
      offset = data.length;
    }
    const head = await send(b.url, 'HEAD', upload, tusHeaders());
    expect(head.headers['upload-sha256']).toBe(sha256(data));
    const fid = await addFile(b.url, 'twice.bin', data);
    expect(sha256((await download(a.url, b.url, fid)).body)).toBe(sha256(data));
    // Every lock was let go.
    expect((await db.query('select name from upload_locks')).rows).toEqual([]);
  });

  it('the instance running a background encryption job is killed; the other takes the job over and finishes it', async () => {
    const dirid = await addFolder(a.url, 'Archive');
    const content = randomBytes(64 * KiB);
    await uploadWhole(a.url, content);
    const count = 150;
    const fids: number[] = [];
    // One upload, many files: FileAdd of content the account owns needs no transfer.
    for (let i = 0; i < count; i++) fids.push(await addFile(i % 2 === 0 ? a.url : b.url, `doc ${i}.bin`, content, dirid));

    expect((await call(a.url, FolderEncrypt, { dirid, password: 'correct horse', password_tip: '' })).result.code).toBe('0');
    // Whoever claimed the job (A, which was told at once, unless B's poll came first) is the victim.
    const working = await waitForJob((job) => job.done_files >= 3);
    expect(working.finished_at, 'the job finished before it could be interrupted: give it more files').toBeNull();
    const victim = working.lease_owner.includes(`:${a.pid}:`) ? a : b;
    const survivor = victim === a ? b : a;
    expect(working.lease_owner).toContain(`:${victim.pid}:`);
    await victim.kill9();
    const atKill = await job();
    expect(atKill.done_files).toBeLessThan(count);

    // The dead instance's lease (2 s here) runs out; the survivor's runner (every 5 s) takes over.
    const finished = await waitForJob((row) => row.finished_at !== null, 60_000);
    expect(finished).toMatchObject({ total_files: count, done_files: count, failed_files: 0 });
    expect(finished.lease_owner ?? '').not.toContain(`:${victim.pid}:`);
    expect((await db.query('select count(*)::int as n from files where folder_id = $1 and key_id is null', [dirid])).rows[0].n).toBe(0);
    // Logged after the job's end is committed, and written within the log's batch time.
    for (let waited = 0; !survivor.output().includes('encryption job finished') && waited < 5_000; waited += 50) await sleep(50);
    expect(survivor.output()).toContain('encryption job finished');

    expect((await call(survivor.url, Unlock, { dirid, fid: 0, password: 'correct horse' })).result.code).toBe('0');
    for (const fid of [fids[0], fids[Math.floor(count / 2)], fids[count - 1]]) {
      const got = await download(survivor.url, survivor.url, fid);
      expect(got.status).toBe(200);
      expect(sha256(got.body)).toBe(sha256(content));
    }
  }, 120_000);
});

// ---- Looking into the database -------------------------------------------------------------------

interface JobRow {
  readonly lease_owner: string;
  readonly done_files: number;
  readonly total_files: number;
  readonly failed_files: number;
  readonly finished_at: string | null;
}

async function job(): Promise<JobRow> {
  const { rows } = await db.query<JobRow>(
    'select lease_owner, done_files::int, total_files::int, failed_files::int, finished_at::text from encryption_jobs order by id desc limit 1',
  );
  expect(rows).toHaveLength(1);
  return rows[0];
}

async function waitForJob(until: (row: JobRow) => boolean, timeoutMs = 30_000): Promise<JobRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await job();
    if (until(row)) return row;
    if (Date.now() > deadline) throw new Error(`the job did not get there in ${timeoutMs} ms: ${JSON.stringify(row)}`);
    await sleep(20);
  }
}

interface LockRow {
  readonly instance: string;
  readonly release_requested: number;
}

/** Reads upload `id`'s lock row every 10 ms until stopped: every state seen. */
function watchLockRow(id: string): { stop(): Promise<LockRow[]> } {
  const seen: LockRow[] = [];
  let stopped = false;
  const watching = (async () => {
    while (!stopped) {
      const { rows } = await db.query<LockRow>('select instance, release_requested from upload_locks where name = $1', [id]);
      seen.push(...rows);
      await sleep(10);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await watching;
      return seen;
    },
  };
}
