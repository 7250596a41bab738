/**
 * Section 6: stalls. One account makes the heaviest calls the limits allow, one at a time, while
 * two probes measure what everybody else feels meanwhile:
 * - the event loop: `GET /OAuthService.asmx` (the health check; no database), sent again 5 ms after
 *   each answer on a connection of its own. The longest a probe sent during a call waited is the
 *   longest the call held the service's one event loop (to within the 5 ms between probes).
 * - another account: a signed GetFiles of a 100-file folder of the search account, the same way.
 *   It waits for the event loop, and on SQLite also for the one connection while a transaction of
 *   the heavy call holds it.
 *
 * The worst cases, at the limits (256 levels, names of 255 characters, 1,000 ids per list) and at
 * the sizes of the populated database (a folder of 100,000 items, a folder with 100,000
 * descendants, an account of 1,000,000 files): a chain of folders 255 deep with 255-character
 * names, 1,000 folders at depth 256 beneath its end (the "comb"), a file in each, then the calls
 * below on them; each call `rounds` times, what it needs before and after (a delete before a
 * restore) outside what is measured, with a quiet half second before each. The section leaves
 * the database as it found it, but for the folder with 100,000 descendants, which it empties from
 * the bin last.
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { attribute, login, operation, resultCode, resultOf, signedRequest, type Answer, type RawRequest, type Session } from './calls';
import { BENCH_ACCOUNT, PASSWORD, SEARCH_ACCOUNT, type Manifest } from './populate';
import { startService } from './service';
import { log, round, sleep } from './util';

export interface StallsOptions {
  readonly dataDir: string;
  readonly runDir: string;
  readonly manifest: Manifest;
  /** Times each call is made. */
  readonly rounds: number;
  readonly profileDir?: string;
}

/** What the probes saw during one kind of call. */
export interface StallFigures {
  readonly call: string;
  /** What the call works on. */
  readonly size: string;
  readonly calls: number;
  /** The call's own time to the last byte, worst over its calls. */
  readonly worstCallMs: number;
  readonly answerBytes: number;
  /** The longest wait of a health probe sent while the call ran: the longest hold of the event loop. */
  readonly eventLoopMs: number;
  /**
   * The service's main thread's own CPU in its longest stop while the call ran (bench/hold-monitor.cjs):
   * the hold without the time other processes had its CPU. Null where it cannot be read (not Linux).
   */
  readonly eventLoopCpuMs: number | null;
  /** The longest wait of the other account's GetFiles sent while the call ran. */
  readonly otherAccountMs: number;
  /** Probes answered while the call ran (a check that they kept coming). */
  readonly probes: number;
}

export interface StallsResult {
  readonly maxFolderDepth: number;
  readonly maxNameLength: number;
  /** The probes' own time with nothing else running: their floor. */
  readonly idle: { readonly eventLoopMs: number; readonly otherAccountMs: number };
  readonly calls: StallFigures[];
}

const DEPTH = 256;
const NAME_LENGTH = 255;
const COMB = 1_000;
const PROBE_GAP_MS = 5;
/** Between calls: what a call left to do in the background (a WAL checkpoint) is not the next one's. */
const QUIET_MS = 500;

/** A name of exactly 255 characters that starts with `prefix` (unique per level). */
const longName = (prefix: string) => `${prefix} `.padEnd(NAME_LENGTH, 'x');

/**
 * A probe loop on a connection of its own, in a worker thread: each answer's wait, with when it was
 * sent. The heavy calls' answers (up to 125 MiB) are received and read on the benchmark's main
 * thread, which that holds for up to 0.3 s; probes on that thread would count it as the service's.
 * Times are absolute (timeOrigin + now), the same in both threads.
 */
class Probe {
  readonly samples: Array<{ readonly sent: number; readonly ms: number }> = [];
  /** Probes that failed (an error, or an answer other than the expected one): reported, never ignored. */
  readonly failures: string[] = [];
  #worker: Worker | undefined;
  #flushed: (() => void) | undefined;

  constructor(
    private readonly url: string,
    private readonly request: RawRequest,
    /** What a good answer is: status 200, and for `resultCode0` a result code of 0 too. */
    private readonly expect: 'status200' | 'resultCode0',
  ) {}

  start(): void {
    this.#worker = new Worker(PROBE_WORKER, { eval: true, workerData: { url: this.url, request: this.request, expect: this.expect, gapMs: PROBE_GAP_MS } });
    this.#worker.on('message', (message: ProbeMessage) => {
      if (message.kind === 'sample') this.samples.push({ sent: message.sent, ms: message.ms });
      else if (message.kind === 'failure') this.failures.push(message.failure);
      else this.#flushed?.();
    });
    this.#worker.on('error', (error) => this.failures.push(`probe worker: ${error.message}`));
  }

  async stop(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = undefined;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.postMessage('stop');
    await exited;
  }

  /** Waits until every sample the worker took so far has arrived (its messages come in order). */
  async sync(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    await new Promise<void>((resolve) => {
      this.#flushed = resolve;
      worker.postMessage('sync');
    });
  }

  /** The longest wait of a probe sent in [from, to), and how many there were (call sync() first). */
  worstBetween(from: number, to: number): { ms: number; count: number } {
    const during = this.samples.filter((s) => s.sent >= from && s.sent < to);
    return { ms: Math.max(0, ...during.map((s) => s.ms)), count: during.length };
  }
}

type ProbeMessage = { kind: 'sample'; sent: number; ms: number } | { kind: 'failure'; failure: string } | { kind: 'synced' };

/** Absolute milliseconds, comparable between threads (each has its own performance.now()). */
const now = () => performance.timeOrigin + performance.now();

/** The probe's loop (plain JavaScript: workers do not get tsx's loader). */
const PROBE_WORKER = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const { url, request, expect, gapMs } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const now = () => performance.timeOrigin + performance.now();
let running = true;
parentPort.on('message', (message) => {
  if (message === 'stop') running = false;
  else parentPort.postMessage({ kind: 'synced' });
});
function send() {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(request.path, url), { method: request.method, headers: request.headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(request.body);
  });
}
(async () => {
  while (running) {
    const sent = now();
    try {
      const answer = await send();
      // The POST form's result element (no SOAP envelope): its first code attribute.
      const code = /\\bcode="([^"]*)"/.exec(answer.body)?.[1];
      const good = answer.status === 200 && (expect === 'status200' || code === '0');
      if (good) parentPort.postMessage({ kind: 'sample', sent, ms: now() - sent });
      else parentPort.postMessage({ kind: 'failure', failure: answer.status + ' ' + answer.body.slice(0, 200) });
    } catch (error) {
      parentPort.postMessage({ kind: 'failure', failure: error instanceof Error ? error.message : String(error) });
    }
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  agent.destroy();
  parentPort.close();
})();
`;

/** A request of the heavy account, on connections of its own (the probes have theirs). */
const heavyAgent = new http.Agent({ keepAlive: true, maxSockets: 2 });

function sendHeavy(baseUrl: string, request: RawRequest & { readonly rawBody?: Buffer; readonly rawMethod?: string }): Promise<Answer> {
  const url = new URL(request.path, baseUrl);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: request.rawMethod ?? request.method, headers: request.headers, agent: heavyAgent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(request.rawBody ?? request.body);
  });
}

export async function measureStalls(options: StallsOptions): Promise<StallsResult> {
  const { manifest } = options;
  const holdFile = path.join(options.runDir, 'logs', 'stalls-holds.txt');
  const service = await startService({ dataDir: options.dataDir, logFile: path.join(options.runDir, 'logs', 'stalls-service.log'), profileDir: options.profileDir, holdFile });
  const probes: Probe[] = [];
  try {
    const heavy = await login(service.url, BENCH_ACCOUNT, PASSWORD);
    const other = await login(service.url, SEARCH_ACCOUNT, PASSWORD);
    const call = async (session: Session, service_: 'FileService' | 'UserService', name: string, params: Record<string, string | number>, expectCode = 0) => {
      const text = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]));
      const answer = await sendHeavy(service.url, signedRequest('post', operation(service_, name), session, text));
      const body = answer.body.toString('utf8');
      if (answer.status !== 200 || resultCode(body) !== expectCode) throw new Error(`${name}: ${answer.status} ${body.slice(0, 400)}`);
      return { answer, result: resultOf(body) };
    };
    const idOf = (xml: string, element: 'folder' | 'file') => Number(attribute(xml.slice(xml.indexOf(`<${element}`)), 'id'));

    // ---- The worst cases, built through the service as a client would
    log('stalls: building a chain 255 deep with names of 255 characters, and 1,000 folders and files at depth 256');
    const chain: number[] = [];
    for (let level = 1; level < DEPTH; level++) {
      const { result } = await call(heavy, 'FileService', 'FolderAdd', { dirid: chain.at(-1) ?? 0, name: longName(`D${level}`) });
      chain.push(idOf(result, 'folder'));
    }
    const spineEnd = chain.at(-1)!;
    const content = Buffer.from('one file, added a thousand times');
    const hash = await upload(service.url, heavy, content);
    const leaves: number[] = [];
    const files: number[] = [];
    for (let i = 0; i < COMB; i++) {
      const { result } = await call(heavy, 'FileService', 'FolderAdd', { dirid: spineEnd, name: longName(`leaf ${i}`) });
      leaves.push(idOf(result, 'folder'));
      const added = await call(heavy, 'FileService', 'FileAdd', { name: `comb ${i}.txt`, ext: 'txt', size: content.length, dirid: leaves[i], hash });
      files.push(idOf(added.result, 'file'));
    }
    const side = idOf((await call(heavy, 'FileService', 'FolderAdd', { dirid: 0, name: 'Side' })).result, 'folder');
    const sideDeep = idOf((await call(heavy, 'FileService', 'FolderAdd', { dirid: side, name: 'Deeper' })).result, 'folder');

    // ---- The probes
    const health = new Probe(service.url, { method: 'GET', path: '/OAuthService.asmx', headers: {} }, 'status200');
    const otherFolder = await firstFolderOf(service.url, other);
    const getFiles = signedRequest('post', operation('UserService', 'GetFiles'), other, { dir: String(otherFolder), order: 'name', desc: '0' });
    const peer = new Probe(service.url, getFiles, 'resultCode0');
    probes.push(health, peer);
    health.start();
    peer.start();
    await sleep(1_000);
    await health.sync();
    await peer.sync();
    const idleTo = now();
    const idle = { eventLoopMs: health.worstBetween(0, idleTo).ms, otherAccountMs: peer.worstBetween(0, idleTo).ms };

    const figures: StallFigures[] = [];
    /** `work` measured `rounds` times; `before` and `after` each round, outside what is measured. */
    interface Measured {
      readonly rounds?: number;
      readonly before?: () => Promise<unknown>;
      readonly after?: () => Promise<unknown>;
    }
    const measure = async (label: string, size: string, work: () => Promise<Answer | Answer[]>, how: Measured = {}) => {
      const ms: number[] = [];
      let bytes = 0;
      let eventLoopMs = 0;
      let otherAccountMs = 0;
      let eventLoopCpuMs: number | null = null;
      let probes = 0;
      for (let round_ = 0; round_ < (how.rounds ?? options.rounds); round_++) {
        await how.before?.();
        // A quiet moment (a checkpoint of what came before may run), so that each call's probes are its own.
        await sleep(QUIET_MS);
        const from = now();
        const monoFrom = monotonicUs();
        const answers = [await work()].flat();
        const monoTo = monotonicUs();
        // A probe sent just before the end may still be waiting: let it come back.
        await sleep(PROBE_GAP_MS * 4);
        const to = now() - PROBE_GAP_MS * 4;
        await how.after?.();
        await health.sync();
        await peer.sync();
        ms.push(...answers.map((a) => a.ms));
        bytes = Math.max(bytes, ...answers.map((a) => a.body.length));
        const h = health.worstBetween(from, to);
        const p = peer.worstBetween(from, to);
        eventLoopMs = Math.max(eventLoopMs, h.ms);
        const cpu = longestStopCpuMs(holdFile, monoFrom, monoTo);
        if (cpu !== null) eventLoopCpuMs = Math.max(eventLoopCpuMs ?? 0, cpu);
        otherAccountMs = Math.max(otherAccountMs, p.ms);
        probes += h.count;
      }
      const f: StallFigures = { call: label, size, calls: ms.length, worstCallMs: Math.max(...ms), answerBytes: bytes, eventLoopMs, eventLoopCpuMs, otherAccountMs, probes };
      figures.push(f);
      const cpuText = eventLoopCpuMs === null ? '' : ` (${round(eventLoopCpuMs, 0)} ms of its CPU)`;
      log(`stalls: ${label} (${size}): call ${round(f.worstCallMs, 0)} ms; event loop held ${round(eventLoopMs, 0)} ms${cpuText}; another account waited ${round(otherAccountMs, 0)} ms`);
    };
    const ok = (name: string, service_: 'FileService' | 'UserService', params: Record<string, string | number>, expectCode = 0) => async () =>
      (await call(heavy, service_, name, params, expectCode)).answer;
    const listing = { order: 'name', desc: '0' };
    const leafIds = leaves.join(',');
    const fileIds = files.join(',');

    // Depth
    let added = 0;
    await measure('FolderAdd at the deepest level', 'depth 256, names of 255', async () => {
      const answer = await call(heavy, 'FileService', 'FolderAdd', { dirid: spineEnd, name: longName('one more') });
      added = idOf(answer.result, 'folder');
      return answer.answer;
    }, { after: () => call(heavy, 'FileService', 'FolderAndFileDelete', { dirids: added, fids: '', is_real: 1 }) });
    await measure('FolderAdd below the deepest level (413)', 'depth 257', ok('FolderAdd', 'FileService', { dirid: leaves[0], name: 'too deep' }, 413));
    await measure('GetFilesWhitPath of the deepest folder', 'depth 256', ok('GetFilesWhitPath', 'UserService', { dir: leaves[0], ...listing }));
    await measure('GetFiles of the deepest folder', 'depth 256', ok('GetFiles', 'UserService', { dir: leaves[0], ...listing }));
    await measure('GetFilesWhitPath of 1,000 folders with their paths', '1,000 × depth 256', ok('GetFilesWhitPath', 'UserService', { dir: spineEnd, ...listing }));
    await measure('FileSearch: 1,000 hits with their paths', '1,000 × depth 256', ok('FileSearch', 'UserService', { keyword: 'comb', ...listing }));
    await measure('Move of a subtree 255 deep (the room checked)', '255 levels, 1,256 folders', ok('Move', 'FileService', { dirids: chain[1], fids: '', todir: side }), {
      after: () => call(heavy, 'FileService', 'Move', { dirids: chain[1], fids: '', todir: chain[0] }),
    });
    await measure('Move of a subtree one level too deep (413)', '255 levels, 1,256 folders', ok('Move', 'FileService', { dirids: chain[1], fids: '', todir: sideDeep }, 413));

    // Id lists of 1,000, each item 256 deep
    await measure('Move of 1,000 folders', '1,000 ids × depth 256', ok('Move', 'FileService', { dirids: leafIds, fids: '', todir: side }), {
      after: () => call(heavy, 'FileService', 'Move', { dirids: leafIds, fids: '', todir: spineEnd }),
    });
    const toBin = () => call(heavy, 'FileService', 'FolderAndFileDelete', { dirids: leafIds, fids: '', is_real: 0 });
    const back = () => call(heavy, 'FileService', 'FolderAndFileRestore', { dirids: leafIds, fids: '' });
    await measure('FolderAndFileDelete of 1,000 folders to the bin', '1,000 ids × depth 256', async () => (await toBin()).answer, { after: back });
    await measure('FolderAndFileRestore of 1,000 folders', '1,000 ids × depth 256', async () => (await back()).answer, { before: toBin });
    await measure('GetRecycleFiles of 1,000 entries with their paths', '1,000 × depth 256', ok('GetRecycleFiles', 'UserService', listing), { before: toBin, after: back });
    await measure('FolderShare of 1,000 folders', '1,000 ids × depth 256', ok('FolderShare', 'FileService', { dirids: leafIds, downpwd: '', downValue: 0, description: '' }));
    await measure('GetShareFiles of 1,000 shares with their paths', '1,000 × depth 256', ok('GetShareFiles', 'UserService', listing));
    // Once: afterwards the files are in one folder.
    await measure('Move of 1,000 files out of 1,000 folders', '1,000 ids × depth 256', ok('Move', 'FileService', { dirids: '', fids: fileIds, todir: side }), { rounds: 1 });

    // Width (the populated database)
    const bench = manifest.bench;
    await measure('GetFiles of 100,000 items', '100,000 items', ok('GetFiles', 'UserService', { dir: bench.list100k, ...listing }));
    await measure('GetFiles of 100,000 items by time', '100,000 items', ok('GetFiles', 'UserService', { dir: bench.list100k, order: 'time', desc: '1' }));
    // The other orders no index serves (the database sorts them: in a worker thread on SQLite).
    await measure('GetFiles of 100,000 items by size', '100,000 items', ok('GetFiles', 'UserService', { dir: bench.list100k, order: 'size', desc: '0' }));
    await measure('GetFiles of 100,000 items by share', '100,000 items', ok('GetFiles', 'UserService', { dir: bench.list100k, order: 'share', desc: '1' }));
    await measure('GetFilesWhitPath of 100,000 items', '100,000 items', ok('GetFilesWhitPath', 'UserService', { dir: bench.list100k, ...listing }));
    await measure('FileSearch over 1,000,000 files, 1,000 hits', '1,000,000 files', async () => (await call(other, 'UserService', 'FileSearch', { keyword: 'report', ...listing })).answer);
    await measure('Move of a folder with 100,000 descendants', '100,000 descendants', ok('Move', 'FileService', { dirids: bench.tree100k, fids: '', todir: chain[200] }), {
      after: () => call(heavy, 'FileService', 'Move', { dirids: bench.tree100k, fids: '', todir: 0 }),
    });
    const treeToBin = () => call(heavy, 'FileService', 'FolderAndFileDelete', { dirids: bench.tree100k, fids: '', is_real: 0 });
    const treeBack = () => call(heavy, 'FileService', 'FolderAndFileRestore', { dirids: bench.tree100k, fids: '' });
    await measure('FolderAndFileDelete of 100,000 descendants to the bin', '100,000 descendants', async () => (await treeToBin()).answer, { after: treeBack });
    await measure('FolderAndFileRestore of 100,000 descendants', '100,000 descendants', async () => (await treeBack()).answer, { before: treeToBin });
    // Last, once: these take away what they measure.
    await measure(
      'FolderAndFileDelete for good of the chain and the comb',
      '1,256 folders, 1,000 files',
      ok('FolderAndFileDelete', 'FileService', { dirids: chain[0], fids: '', is_real: 1 }),
      { rounds: 1 },
    );
    await call(heavy, 'FileService', 'FolderAndFileDelete', { dirids: side, fids: '', is_real: 1 });
    await measure('RecycleEmpty of 100,000 descendants', '100,000 descendants', ok('RecycleEmpty', 'FileService', {}), { rounds: 1, before: treeToBin });

    await health.stop();
    await peer.stop();
    const failures = [...health.failures, ...peer.failures];
    if (failures.length > 0) throw new Error(`${failures.length} probe(s) failed, e.g. ${failures[0]}`);
    return { maxFolderDepth: DEPTH, maxNameLength: NAME_LENGTH, idle, calls: figures };
  } finally {
    // Also when a call failed: the probes would otherwise go on for ever, and the run never end.
    for (const probe of probes) await probe.stop();
    heavyAgent.destroy();
    await service.stop();
  }
}

/** CLOCK_MONOTONIC in µs, as bench/hold-monitor.cjs writes it in the service. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * The most CPU the service's main thread used in one stop (hold-monitor.cjs) that overlapped
 * [from, to] (µs); 0 when it never stopped for more than 10 ms, null when the monitor wrote nothing.
 */
function longestStopCpuMs(file: string, from: number, to: number): number | null {
  if (!existsSync(file)) return null;
  let worst = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [end, wallMs, cpuMs] = line.split(' ').map(Number);
    if (!Number.isFinite(cpuMs)) continue;
    if (end >= from && end - wallMs * 1000 <= to) worst = Math.max(worst, cpuMs);
  }
  return worst;
}

/** The id of the first folder the account's root lists. */
async function firstFolderOf(url: string, session: Session): Promise<number> {
  const answer = await sendHeavy(url, signedRequest('post', operation('UserService', 'GetFiles'), session, { dir: '0', order: 'name', desc: '0' }));
  const body = resultOf(answer.body.toString('utf8'));
  const id = Number(attribute(body.slice(body.indexOf('<folder')), 'id'));
  if (!Number.isSafeInteger(id) || id <= 0) throw new Error(`the search account lists no folder: ${body.slice(0, 300)}`);
  return id;
}

/** A tus upload of `bytes` in one PATCH; answers its SHA-256 for FileAdd. */
async function upload(url: string, session: Session, bytes: Buffer): Promise<string> {
  const auth = { 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${session.token}` };
  const created = await sendHeavy(url, { method: 'POST', path: '/upload/', headers: { ...auth, 'Upload-Length': String(bytes.length) } });
  const location = created.headers.location;
  if (created.status !== 201 || !location) throw new Error(`tus POST: ${created.status}`);
  const patched = await sendHeavy(url, {
    method: 'POST',
    rawMethod: 'PATCH',
    path: new URL(location, url).pathname,
    headers: { ...auth, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(bytes.length) },
    rawBody: bytes,
  });
  const sha256 = patched.headers['upload-sha256'];
  if (patched.status !== 204 || typeof sha256 !== 'string') throw new Error(`tus PATCH: ${patched.status}`);
  return sha256;
}

