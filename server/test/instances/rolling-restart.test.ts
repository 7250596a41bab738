/**
 * A rolling restart of two instances on one PostgreSQL database and one S3 bucket (README, "Stopping
 * and rolling restarts"): the instance that gets SIGTERM finishes the download it is serving, ends a
 * PATCH in flight with the offset written so far and lets go of the upload's lock, so that the
 * other instance takes the upload over at once; then it exits 0.
 *
 * Runs in the "postgres" project only (vitest.config.ts); starts its own S3 server.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { send } from '../helpers/requests';
import { startTestS3Server, testS3Settings, type TestS3Server } from '../helpers/s3-server';
import { killAllServices, runFss, startService, type ServiceProcess } from '../helpers/service-process';
import { bytesOf, createUpload, login, ok, Ops, patchInterrupted, sha256, uploadOffset, type Session } from '../reliability/crash/client';

const MiB = 1024 * 1024;
const PASSWORD = 'alice-password-1';

let database: TestDatabase;
let s3: TestS3Server;
let db: pg.Pool;
let workDir: string;
let env: NodeJS.ProcessEnv;
let a: ServiceProcess;
let b: ServiceProcess;
let alice: Session;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'fss-rolling-'));
  [database, s3] = await Promise.all([createTestDatabase(), startTestS3Server()]);
  db = new pg.Pool({ connectionString: database.url, max: 2 });
  db.on('error', () => undefined);
  const bucket = testS3Settings(s3);
  env = {
    FSS_DATABASE_URL: database.url,
    FSS_SECRET: randomBytes(32).toString('base64'),
    FSS_S3_ENDPOINT: bucket.endpoint!,
    FSS_S3_BUCKET: bucket.bucket,
    FSS_S3_REGION: bucket.region,
    FSS_S3_ACCESS_KEY_ID: bucket.accessKeyId!,
    FSS_S3_SECRET_ACCESS_KEY: bucket.secretAccessKey!,
    FSS_S3_FORCE_PATH_STYLE: 'true',
    FSS_S3_PREFIX: bucket.prefix,
  };
  a = await startService(path.join(workDir, 'a'), env);
  b = await startService(path.join(workDir, 'b'), env);
  expect((await runFss(path.join(workDir, 'a'), ['user', 'add', 'alice', '--password', PASSWORD], env)).code).toBe(0);
  alice = await login(b.url, 'alice', PASSWORD);
}, 120_000);

afterAll(async () => {
  await killAllServices();
  await db?.end();
  await database?.drop();
  await s3?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const tusHeaders = (extra: Record<string, string> = {}) => ({ 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${alice.token}`, ...extra });
const patchHeaders = (offset: number, extra: Record<string, string> = {}) =>
  tusHeaders({ 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', ...extra });

describe('a rolling restart of two instances', { timeout: 90_000 }, () => {
  it('SIGTERM to the instance serving a download: the download completes, the other instance serves on', async () => {
    const bytes = bytesOf('rolling download', 24 * MiB);
    const location = await createUpload(b.url, alice, bytes.length);
    expect((await send(b.url, 'PATCH', location, patchHeaders(0), bytes)).status).toBe(204);
    const added = await ok(b.url, Ops.FileAdd, alice, { name: 'big.bin', ext: 'bin', size: bytes.length, dirid: 0, hash: sha256(bytes) });
    const { pathname, search } = new URL((await ok(b.url, Ops.FileDownload, alice, { fid: Number(added.files[0].id) })).result.url);

    // A serves the download to a reader that stalls after the first bytes.
    let resume = () => {};
    let receiving = () => {};
    const firstBytes = new Promise<void>((resolve) => (receiving = resolve));
    const done = new Promise<Buffer>((resolve, reject) => {
      http
        .get(new URL(pathname + search, a.url), (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.once('data', () => (res.pause(), receiving()));
          resume = () => res.resume();
          res.once('end', () => resolve(Buffer.concat(chunks)));
          res.once('error', reject);
        })
        .once('error', reject);
    });
    await firstBytes;

    a.signal('SIGTERM');
    await sleep(300);
    expect(a.exited).toBe(false);
    expect((await ok(b.url, Ops.GetFiles, alice, { dir: '0', order: 'name', desc: '0' })).files.map((file) => file.name)).toContain('big.bin');
    resume();
    const got = await done;
    expect(got.length).toBe(bytes.length);
    expect(sha256(got)).toBe(sha256(bytes));
    expect(await a.exitStatus()).toEqual({ code: 0, signal: null });
  });

  it('SIGTERM to the instance receiving a PATCH: answered with its offset, the lock let go, the other instance takes the upload over', async () => {
    a = await startService(path.join(workDir, 'a'), env);
    const bytes = bytesOf('rolling upload', 6 * MiB);
    const location = await createUpload(a.url, alice, bytes.length);
    const res = await patchInterrupted(a.url, alice, location, bytes, () => a.signal('SIGTERM'));
    expect(res.statusCode).toBe(204);
    const offset = Number(res.headers['upload-offset']);
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThan(bytes.length);
    expect(await a.exitStatus()).toEqual({ code: 0, signal: null });
    expect((await db.query('select name from upload_locks')).rows).toEqual([]);

    expect(await uploadOffset(b.url, alice, location)).toMatchObject({ status: 200, offset });
    const rest = await send(b.url, 'PATCH', location, patchHeaders(offset), bytes.subarray(offset));
    expect(rest.status).toBe(204);
    expect(rest.headers['upload-sha256']).toBe(sha256(bytes));
  });
});
