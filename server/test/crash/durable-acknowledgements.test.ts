/**
 * What the upload endpoint acknowledges is on disk before it says so (docs/uploads-and-downloads.md
 * §3, "When an uploaded byte is durable"). A kill -9 cannot show this: the kernel keeps what a
 * killed process wrote, and only a power loss (or a kernel crash) loses what was not synced. So the
 * real service (`node bin/fss.mjs serve`) runs under strace, and the order of its system calls is
 * checked: every byte written to an upload's files is fsync'ed (or fdatasync'ed) after it was
 * written and before the answer that acknowledges it goes out on the socket; the record of the
 * durable offset is written only after the bytes it counts are synced; a file renamed into place
 * has its folder synced after the rename. What the offset is after a power loss left bytes that
 * were never acknowledged is checked in storage/upload-area.test.ts and encrypted-uploads.test.ts.
 *
 * PATCHes of 3 MiB from offset 0 cross no 16 MiB step of the early writeback (writeback.ts), so no
 * background sync can stand in for the one the answer must wait for.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../helpers/requests';
import { killAllServices, runFss, startService, type ServiceProcess } from '../helpers/service-process';
import { bytesOf, login, ok, Ops, type Session } from '../reliability/crash/client';

const MiB = 1024 * 1024;
const ACCOUNT = 'durable';
const PASSWORD = 'durable-password-1';
const hasStrace = spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;

// ---- strace --------------------------------------------------------------------------------------

/** One system call as strace printed it: `start` and `end` are line numbers (an unfinished call ends later). */
interface Syscall {
  readonly name: string;
  /** The file or socket of the first argument (strace -y), when it is a descriptor. */
  readonly target: string | null;
  /** The quoted strings among the arguments (paths, the first bytes of a buffer). */
  readonly strings: string[];
  readonly start: number;
  readonly end: number;
  readonly result: string;
}

const TRACED = ['write', 'writev', 'pwrite64', 'pwritev', 'pwritev2', 'fsync', 'fdatasync', 'rename', 'renameat', 'renameat2'];

/** Reads strace's output (-f -y): the calls in the order they ended. */
function parseTrace(text: string): Syscall[] {
  const calls: Syscall[] = [];
  const unfinished = new Map<string, { name: string; args: string; start: number }>();
  const lines = text.split('\n');
  const finish = (name: string, args: string, start: number, end: number, result: string) => {
    const target = /^(?:\d+|AT_FDCWD)<([^>]*)>/.exec(args)?.[1] ?? null;
    const strings = [...args.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
    calls.push({ name, target, strings, start, end, result });
  };
  lines.forEach((line, index) => {
    const match = /^(\d+)\s+(.*)$/.exec(line);
    if (!match) return;
    const [, tid, rest] = match;
    const resumed = /^<\.\.\. (\w+) resumed>(.*)\)\s+= (\S+)/.exec(rest);
    if (resumed) {
      const begun = unfinished.get(tid);
      unfinished.delete(tid);
      if (begun) finish(begun.name, begun.args + resumed[2], begun.start, index, resumed[3]);
      return;
    }
    const call = /^(\w+)\((.*)$/.exec(rest);
    if (!call || !TRACED.includes(call[1])) return;
    if (call[2].endsWith('<unfinished ...>')) {
      unfinished.set(tid, { name: call[1], args: call[2], start: index });
      return;
    }
    const ended = /^(.*)\)\s+= (\S+)/.exec(call[2]);
    if (ended) finish(call[1], ended[1], index, index, ended[2]);
  });
  return calls.sort((a, b) => a.end - b.end);
}

interface Tracer {
  /** Detaches from the service; answers the calls traced. */
  stop(): Promise<Syscall[]>;
}

/** Attaches strace to the running service (all its threads, and those it starts). */
async function trace(service: ServiceProcess, outFile: string): Promise<Tracer> {
  const child: ChildProcess = spawn('strace', ['-f', '-y', '-s', '40', '-e', `trace=${TRACED.join(',')}`, '-o', outFile, '-p', String(service.pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let errors = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      errors += chunk.toString('utf8');
      if (/attached/.test(errors)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`strace ended (${code}) before attaching: ${errors}`)));
  });
  return {
    async stop() {
      child.kill('SIGINT'); // strace detaches and leaves the service running
      await exited;
      return parseTrace(await fs.readFile(outFile, 'utf8'));
    },
  };
}

const isWrite = (c: Syscall) => ['write', 'writev', 'pwrite64', 'pwritev', 'pwritev2'].includes(c.name);
const isSync = (c: Syscall) => (c.name === 'fsync' || c.name === 'fdatasync') && c.result === '0';
const isRename = (c: Syscall) => c.name.startsWith('rename') && c.result === '0';
/** The answer with this status line going out on a socket. */
const answerOf = (calls: Syscall[], status: string) => calls.find((c) => isWrite(c) && c.target?.startsWith('socket:') && c.strings.some((s) => s.startsWith(`HTTP/1.1 ${status}`)));

/**
 * Checks that `file`'s bytes written before `answer` were synced before it: a successful fsync or
 * fdatasync of `file` that began after the last write to it ended, and ended before the answer
 * began. Answers that sync.
 */
function expectSyncedBefore(calls: Syscall[], file: string, answer: Syscall): Syscall {
  const writes = calls.filter((c) => isWrite(c) && c.target === file && c.end < answer.start);
  expect(writes.length, `writes to ${file} before the answer`).toBeGreaterThan(0);
  const lastWrite = writes[writes.length - 1];
  const sync = calls.find((c) => isSync(c) && c.target === file && c.start > lastWrite.end && c.end < answer.start);
  expect(sync, `an fsync/fdatasync of ${file} after its last write and before the answer`).toBeDefined();
  return sync!;
}

// ---- the service ---------------------------------------------------------------------------------

let workDir: string;
let service: ServiceProcess;
let session: Session;

beforeAll(async () => {
  workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fss-durable-'));
});
afterEach(async () => {
  await killAllServices();
});
afterAll(async () => {
  await killAllServices();
  if (workDir) await fs.rm(workDir, { recursive: true, force: true });
});

let runs = 0;
async function startFresh(): Promise<string> {
  const dataDir = path.join(workDir, `data-${++runs}`);
  await fs.mkdir(dataDir, { recursive: true });
  expect((await runFss(dataDir, ['user', 'add', ACCOUNT, '--password', PASSWORD])).code).toBe(0);
  service = await startService(dataDir);
  session = await login(service.url, ACCOUNT, PASSWORD);
  return dataDir;
}

const tusHeaders = () => ({ 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${session.token}` });
const base64 = (text: string) => Buffer.from(text).toString('base64');

async function create(length: number, folder?: number): Promise<{ location: string; file: string }> {
  const metadata: Record<string, string> = folder === undefined ? {} : { 'Upload-Metadata': `filename ${base64('f.bin')},folder ${base64(String(folder))}` };
  const created = await send(service.url, 'POST', '/upload/', { ...tusHeaders(), 'Upload-Length': String(length), ...metadata });
  expect(created.status).toBe(201);
  const location = new URL(String(created.headers.location), service.url).pathname;
  return { location, file: path.join(service.dataDir, 'uploads', location.split('/').pop()!) };
}

async function patch(location: string, offset: number, bytes: Buffer): Promise<void> {
  const answer = await send(
    service.url,
    'PATCH',
    location,
    { ...tusHeaders(), 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(bytes.length) },
    bytes,
  );
  expect(answer.status).toBe(204);
  expect(Number(answer.headers['upload-offset'])).toBe(offset + bytes.length);
}

// ---- the behaviours ------------------------------------------------------------------------------

describe.skipIf(!hasStrace)('the upload endpoint syncs what it acknowledges (strace)', () => {
  it("answers a PATCH only once the bytes it wrote are fdatasync'ed, and then the new offset recorded and synced", async () => {
    await startFresh();
    const bytes = bytesOf('durable plaintext', 8 * MiB);
    const { location, file } = await create(bytes.length);
    for (const [from, to] of [
      [0, 3 * MiB],
      [3 * MiB, 6 * MiB],
    ]) {
      const tracer = await trace(service, path.join(workDir, `trace-${runs}-${from}`));
      await patch(location, from, bytes.subarray(from, to));
      const calls = await tracer.stop();
      const answer = answerOf(calls, '204');
      expect(answer, 'the 204 on the socket').toBeDefined();
      const bytesSync = expectSyncedBefore(calls, file, answer!);
      const recordSync = expectSyncedBefore(calls, `${file}.offset`, answer!);
      expect(recordSync.start, 'the offset recorded after the bytes are durable').toBeGreaterThan(bytesSync.end);
    }
  });

  it('answers a creation once the tus metadata, the offset record and their names are synced', async () => {
    const dataDir = await startFresh();
    const tracer = await trace(service, path.join(workDir, `trace-${runs}-create`));
    const { file } = await create(MiB);
    const calls = await tracer.stop();
    const answer = answerOf(calls, '201');
    expect(answer, 'the 201 on the socket').toBeDefined();
    expectSyncedBefore(calls, `${file}.offset`, answer!);
    const metadataSync = expectSyncedBefore(calls, `${file}.json`, answer!);
    const folderSync = calls.find((c) => isSync(c) && c.target === path.join(dataDir, 'uploads') && c.start > metadataSync.start && c.end < answer!.start);
    expect(folderSync, 'an fsync of the uploads folder before the 201').toBeDefined();
  });

  it('answers a PATCH of an encrypted upload once its records, its tail and the tail’s name are durable', async () => {
    const dataDir = await startFresh();
    const folder = Number((await ok(service.url, Ops.FolderAdd, session, { name: 'vault', dirid: 0 })).folders[0]?.id ?? NaN);
    expect(folder).toBeGreaterThan(0);
    await ok(service.url, Ops.FolderEncrypt, session, { dirid: folder, password: 'vault-password-1', password_tip: '' });
    await ok(service.url, Ops.Unlock, session, { dirid: folder, fid: 0, password: 'vault-password-1' });
    const bytes = bytesOf('durable encrypted', 8 * MiB);
    const { location, file } = await create(bytes.length, folder);

    const tracer = await trace(service, path.join(workDir, `trace-${runs}-encrypted`));
    // 3 MiB and 1000 bytes: whole records, and a tail of 1000 bytes kept for the next PATCH.
    await patch(location, 0, bytes.subarray(0, 3 * MiB + 1000));
    const calls = await tracer.stop();
    const answer = answerOf(calls, '204');
    expect(answer, 'the 204 on the socket').toBeDefined();
    const recordsSync = expectSyncedBefore(calls, file, answer!);
    const tailSync = expectSyncedBefore(calls, `${file}.tail.tmp`, answer!);
    expect(tailSync.start, 'the tail synced after the records').toBeGreaterThan(recordsSync.end);
    const rename = calls.find((c) => isRename(c) && c.strings.includes(`${file}.tail.tmp`) && c.strings.includes(`${file}.tail`) && c.start > tailSync.end && c.end < answer!.start);
    expect(rename, 'the tail renamed into place after its sync').toBeDefined();
    const folderSync = calls.find((c) => isSync(c) && c.target === path.join(dataDir, 'uploads') && c.start > rename!.end && c.end < answer!.start);
    expect(folderSync, 'the uploads folder synced after the rename, before the 204').toBeDefined();
  });
});
