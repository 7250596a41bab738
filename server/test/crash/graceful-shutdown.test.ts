/**
 * Stopping the service (README, "Stopping and rolling restarts"): the real `fss serve` process gets
 * SIGTERM while a download or an upload is in flight. It stops accepting connections, lets the
 * download finish, ends a PATCH with the offset written so far (204) and lets go of the upload's
 * lock, answers a request that arrives meanwhile on a kept-alive connection with `Connection: close`,
 * then exits 0. A second signal stops it at once. On SQLite and PostgreSQL.
 */
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { testConfig, tempDir } from '../helpers/database';
import { send } from '../helpers/requests';
import { killAllServices, runFss, startService, type ServiceProcess } from '../helpers/service-process';
import { closeDatabase, openDatabase } from '../../src/storage/db/engine/database';
import { bytesOf, createUpload, login, ok, Ops, patchInterrupted, sha256, uploadOffset, type Session } from '../reliability/crash/client';

const MiB = 1024 * 1024;
const ACCOUNT = 'stopper';
const PASSWORD = 'stopper-password-1';

afterEach(async () => {
  await killAllServices();
});

interface Running {
  readonly dataDir: string;
  readonly service: ServiceProcess;
  readonly session: Session;
}

async function startWithAccount(): Promise<Running> {
  const dataDir = tempDir('fss-shutdown-');
  testConfig({ dataDir }); // on PostgreSQL: names the test's database for this folder
  expect((await runFss(dataDir, ['user', 'add', ACCOUNT, '--password', PASSWORD])).code).toBe(0);
  const service = await startService(dataDir);
  return { dataDir, service, session: await login(service.url, ACCOUNT, PASSWORD) };
}

const tusHeaders = (session: Session, extra: Record<string, string> = {}) => ({ 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${session.token}`, ...extra });

/** A stored file of `bytes`: the path (and query) of its download URL. */
async function storedFile({ service, session }: Running, bytes: Buffer): Promise<string> {
  const location = await createUpload(service.url, session, bytes.length);
  const patched = await send(service.url, 'PATCH', location, tusHeaders(session, { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }), bytes);
  expect(patched.status).toBe(204);
  const added = await ok(service.url, Ops.FileAdd, session, { name: 'big.bin', ext: 'bin', size: bytes.length, dirid: 0, hash: sha256(bytes) });
  const answer = await ok(service.url, Ops.FileDownload, session, { fid: Number(added.files[0].id) });
  const { pathname, search } = new URL(answer.result.url);
  return pathname + search;
}

/** A GET whose reader is stalled until `resume()`: the body as received. */
function stalledDownload(base: string, target: string) {
  let resumeReading = () => {};
  let firstBytes: () => void = () => {};
  const receiving = new Promise<void>((resolve) => (firstBytes = resolve));
  const done = new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
    http
      .get(new URL(target, base), (res) => {
        const chunks: Buffer[] = [];
        res.once('data', (chunk: Buffer) => {
          chunks.push(chunk);
          res.pause();
          res.on('data', (more: Buffer) => chunks.push(more));
          firstBytes();
        });
        resumeReading = () => res.resume();
        res.once('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.once('error', reject);
      })
      .once('error', reject);
  });
  return { receiving, done, resume: () => resumeReading() };
}

/** Waits until the service has logged that it drains (the SIGTERM was handled). */
async function draining(service: ServiceProcess): Promise<Record<string, unknown>> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const line = service
      .output()
      .split('\n')
      .find((text) => text.includes('"shutdown"') && text.includes('"draining"'));
    if (line) return JSON.parse(line) as Record<string, unknown>;
    await sleep(20);
  }
  throw new Error(`no "draining" line:\n${service.output()}`);
}

function connectionRefused(url: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

// Each test starts the real command (a few seconds under load) and waits for its exit.
describe('fss serve on SIGTERM', { timeout: 90_000 }, () => {
  it('lets a download in flight finish byte-exact, then exits 0', async () => {
    const running = await startWithAccount();
    const bytes = bytesOf('long download', 24 * MiB);
    const download = stalledDownload(running.service.url, await storedFile(running, bytes));
    await download.receiving;

    running.service.signal('SIGTERM');
    expect(await draining(running.service)).toMatchObject({ level: 'info', requests: 1 });
    await sleep(300); // the reader is still stalled: the service waits for it
    expect(running.service.exited).toBe(false);
    download.resume();

    const got = await download.done;
    expect(got.status).toBe(200);
    expect(got.body.length).toBe(bytes.length);
    expect(sha256(got.body)).toBe(sha256(bytes));
    expect(await running.service.exitStatus()).toEqual({ code: 0, signal: null });
    expect(running.service.output()).toMatch(/"shutdown".*"done"/);
  });

  it('refuses new connections at once, and answers a new request on a kept-alive connection with Connection: close', async () => {
    const running = await startWithAccount();
    const bytes = bytesOf('pipelined', 8 * MiB);
    const target = await storedFile(running, bytes);
    const { port } = new URL(running.service.url);
    // One connection: a download read slowly, then (after SIGTERM) a second request on it.
    const socket = net.connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const receiving = new Promise<void>((resolve) => socket.once('data', () => resolve(socket.pause() && undefined)));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await receiving;

    running.service.signal('SIGTERM');
    await draining(running.service);
    expect(await connectionRefused(running.service.url)).toBe('ECONNREFUSED');
    socket.write(`GET /OAuthService.asmx HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await sleep(200); // the second request is in while the first answer is still going out
    socket.resume();
    await closed;

    const all = Buffer.concat(received);
    const firstHead = all.subarray(0, all.indexOf('\r\n\r\n')).toString('latin1');
    expect(firstHead).toMatch(/^HTTP\/1\.1 200/);
    const bodyStart = firstHead.length + 4;
    expect(sha256(all.subarray(bodyStart, bodyStart + bytes.length))).toBe(sha256(bytes));
    const second = all.subarray(bodyStart + bytes.length).toString('latin1');
    expect(second).toMatch(/^HTTP\/1\.1 200/);
    expect(second.slice(0, second.indexOf('\r\n\r\n'))).toMatch(/^Connection: close$/im);
    expect(await running.service.exitStatus()).toEqual({ code: 0, signal: null });
  });

  it('answers a PATCH in flight with the offset written so far, lets go of its lock; a new instance resumes the upload', async () => {
    const running = await startWithAccount();
    const { service, session } = running;
    const bytes = bytesOf('interrupted upload', 6 * MiB);
    const location = await createUpload(service.url, session, bytes.length);
    const res = await patchInterrupted(service.url, session, location, bytes, () => service.signal('SIGTERM'));
    expect(res.statusCode).toBe(204);
    expect(res.headers.connection).toBe('close');
    const offset = Number(res.headers['upload-offset']);
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThan(bytes.length);
    expect(await service.exitStatus()).toEqual({ code: 0, signal: null });

    const db = await openDatabase(testConfig({ dataDir: running.dataDir }));
    try {
      expect(await db.selectFrom('upload_locks').selectAll().execute()).toEqual([]);
    } finally {
      await closeDatabase(db);
    }
    const next = await startService(running.dataDir);
    expect(await uploadOffset(next.url, session, location)).toMatchObject({ status: 200, offset });
    const rest = await send(next.url, 'PATCH', location, tusHeaders(session, { 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' }), bytes.subarray(offset));
    expect(rest.status).toBe(204);
    expect(rest.headers['upload-sha256']).toBe(sha256(bytes));
  });

  it('stops at once, with a non-zero code, on a second SIGTERM while a download is still in flight', async () => {
    const running = await startWithAccount();
    const download = stalledDownload(running.service.url, await storedFile(running, bytesOf('never read', 16 * MiB)));
    await download.receiving;

    running.service.signal('SIGTERM');
    await draining(running.service);
    running.service.signal('SIGTERM');
    expect(await running.service.exitStatus()).toEqual({ code: 143, signal: null });
    download.resume();
    await expect(download.done).rejects.toThrow();
  });

  it('cuts what is still in flight after FSS_SHUTDOWN_SECONDS, and exits 0', async () => {
    const dataDir = tempDir('fss-shutdown-');
    testConfig({ dataDir });
    expect((await runFss(dataDir, ['user', 'add', ACCOUNT, '--password', PASSWORD])).code).toBe(0);
    const service = await startService(dataDir, { FSS_SHUTDOWN_SECONDS: '1' });
    const running = { dataDir, service, session: await login(service.url, ACCOUNT, PASSWORD) };
    const download = stalledDownload(service.url, await storedFile(running, bytesOf('too slow', 16 * MiB)));
    await download.receiving;

    service.signal('SIGTERM');
    expect(await service.exitStatus()).toEqual({ code: 0, signal: null });
    expect(service.output()).toMatch(/"level":"warn".*"grace period over"/);
    download.resume();
    await expect(download.done).rejects.toThrow();
  });
});
