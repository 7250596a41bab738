/**
 * Section 4: content. A file of `bytes` (1 GiB) goes up over tus on loopback as the web app sends
 * it (POST /upload/ naming the destination folder, then PATCH in 8 MiB chunks one after another,
 * then FileAdd with the SHA-256 the upload answered), and comes back down through a FileDownload
 * URL. Then the same with an encrypted file: FolderEncrypt of an empty folder, Unlock, the same
 * upload into it (encrypted as it arrives), and the time until the file is encrypted at rest (its
 * listing says encrypted="1"); then its download, which decrypts. The client checks every byte that comes back (SHA-256 against the upload's).
 *
 * The disk is the limit (disk.ts): just before each upload, the same number of bytes is written
 * durably (8 MiB writes, fsync) beside the data folder; just before each download, the blob it
 * serves is read cold (evicted from the page cache first), and evicted again, so the download reads
 * it cold too; each the best of two runs. An upload's clock stops at the last PATCH's answer: every
 * byte acknowledged is on disk then (docs/uploads-and-downloads.md §3). Each transfer is reported
 * as a ratio to its figure.
 *
 * Throughput is bytes / seconds, in MB/s (10^6 bytes). Memory is the service's peak resident
 * memory (VmHWM, reset before each transfer, and sampled) during each transfer.
 *
 * And a 1 MiB download while 32 clients loop Login (login-flood.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { attribute, callSigned, login, type Session } from './calls';
import { bestOf, blobOf, coldRead, durableWrite, evict, probeFolder, type DiskFigure } from './disk';
import { measureLoginFlood, type LoginFloodResult } from './login-flood';
import { PASSWORD, BENCH_ACCOUNT, type Manifest } from './populate';
import { startService, type ChildServer } from './service';
import { log, MiB, round, sleep } from './util';

export interface ContentOptions {
  readonly dataDir: string;
  readonly runDir: string;
  readonly manifest: Manifest;
  readonly bytes: number;
  /** Downloads of the login-flood figure, quiet and then under the flood. */
  readonly floodDownloads: number;
  readonly profileDir?: string;
}

export interface Transfer {
  readonly bytes: number;
  readonly seconds: number;
  readonly mbPerSecond: number;
  readonly peakRssBytes: number;
  /** The disk just before, in the same state: a durable write of as many bytes (uploads), a cold read of the blob served (downloads). */
  readonly disk: DiskFigure;
  /** mbPerSecond ÷ disk.mbPerSecond. */
  readonly ratioToDisk: number;
  /** Downloads: bytes of the blob still in the page cache after evicting it (NaN: fincore missing). */
  readonly cachedAtStartBytes?: number;
  /** CPU time during the transfer: the service's (all threads), this client's (sending, or hashing what comes back). */
  readonly cpuSeconds: CpuSeconds;
}

export interface CpuSeconds {
  readonly service: number;
  readonly client: number;
}

export interface ContentResult {
  readonly chunkBytes: number;
  readonly plain: { readonly upload: Transfer; readonly fileAddMs: number; readonly download: Transfer };
  readonly encrypted: {
    /** From the first byte sent to the file encrypted at rest (tus, FileAdd, the encryption job). */
    readonly upload: Transfer;
    /** The tus part alone. */
    readonly tusSeconds: number;
    readonly download: Transfer;
  };
  /** A 1 MiB download, quiet and while 32 clients loop Login. */
  readonly loginFlood: LoginFloodResult;
  readonly serviceRssBytes: { readonly start: number; readonly end: number };
}

const CHUNK = 8 * MiB;
/** Each disk figure is the best of this many runs (disk.ts bestOf). */
const DISK_RUNS = 2;
const ENCRYPTION_PASSWORD = 'bench-encryption-1';

const uploadAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request, its answer read whole (answers of the bench's uploads and thumbnails are small). */
export function request(url: URL, method: string, headers: Record<string, string>, body?: Buffer, agent = uploadAgent): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** tus creation with the whole of `bytes` in its POST, into `folder`; answers the SHA-256 the service computed. */
export async function createWithUpload(service: ChildServer, session: Session, folder: number, name: string, bytes: Buffer, agent?: http.Agent): Promise<string> {
  const created = await request(new URL('/upload/', service.url), 'POST', {
    'Tus-Resumable': '1.0.0',
    Authorization: `Bearer ${session.token}`,
    'Upload-Length': String(bytes.length),
    'Upload-Metadata': `filename ${Buffer.from(name).toString('base64')},folder ${Buffer.from(String(folder)).toString('base64')}`,
    'Content-Type': 'application/offset+octet-stream',
  }, bytes, agent);
  if (created.status !== 201 || Number(created.headers['upload-offset']) !== bytes.length) throw new Error(`tus POST of ${name}: ${created.status} ${created.text}`);
  return String(created.headers['upload-sha256'] ?? '');
}

/** CPU time of process `pid` so far (all its threads, user and system), seconds; NaN without /proc. */
function cpuSecondsOf(pid: number): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
const CLOCK_TICKS = 100;

/** Watches the service's memory during `work`: its peak resident memory, bytes; and the CPU time the service and this client spent. */
export async function withPeak<T>(service: ChildServer, work: () => Promise<T>): Promise<{ value: T; peak: number; cpu: CpuSeconds }> {
  const reset = service.resetPeak();
  let sampled = service.rss();
  const sampler = setInterval(() => (sampled = Math.max(sampled, service.rss())), 20);
  const serviceBefore = cpuSecondsOf(service.pid);
  const clientBefore = process.cpuUsage();
  try {
    const value = await work();
    const client = process.cpuUsage(clientBefore);
    const cpu = { service: cpuSecondsOf(service.pid) - serviceBefore, client: (client.user + client.system) / 1e6 };
    return { value, peak: Math.max(sampled, reset ? service.peak() : 0), cpu };
  } finally {
    clearInterval(sampler);
  }
}

/**
 * The file's bytes, chunk by chunk: random, each chunk made distinct by its index and a run nonce.
 * Written into one of two buffers in turn (a chunk's request has ended before the chunk after the
 * next one is written), so that making a chunk costs the client 20 bytes, not a copy of 8 MiB.
 */
class FileChunks {
  readonly #buffers: [Buffer, Buffer];

  constructor(
    private readonly bytes: number,
    private readonly nonce = randomBytes(16),
  ) {
    const base = randomBytes(CHUNK);
    this.#buffers = [base, Buffer.from(base)];
  }

  get count(): number {
    return Math.ceil(this.bytes / CHUNK);
  }

  chunk(index: number): Buffer {
    const buffer = this.#buffers[index % 2];
    this.nonce.copy(buffer, 0);
    buffer.writeUInt32BE(index, this.nonce.length);
    return buffer.subarray(0, Math.min(CHUNK, this.bytes - index * CHUNK));
  }

  /** The SHA-256 of the whole file, as the service must answer it. */
  sha256(): string {
    const hash = createHash('sha256');
    for (let index = 0; index < this.count; index++) hash.update(this.chunk(index));
    return hash.digest('hex');
  }
}

/** tus upload of `bytes` bytes; answers the SHA-256 the service answered (checked against the client's). */
export async function upload(service: ChildServer, session: Session, bytes: number, name: string, folder: number): Promise<{ sha256: string; seconds: number; startedAt: number }> {
  const file = new FileChunks(bytes);
  // Known before the clock starts, as a client sending a file it has does not hash it while sending.
  const sha256 = file.sha256();
  const auth = { 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${session.token}` };
  const started = performance.now();
  const created = await request(new URL('/upload/', service.url), 'POST', {
    ...auth,
    'Upload-Length': String(bytes),
    // The destination folder, as the web app names it: an encrypted one's upload is encrypted as it arrives.
    'Upload-Metadata': `filename ${Buffer.from(name).toString('base64')},folder ${Buffer.from(String(folder)).toString('base64')}`,
  });
  if (created.status !== 201 || !created.headers.location) throw new Error(`tus POST: ${created.status} ${created.text}`);
  const location = new URL(created.headers.location, service.url);
  let offset = 0;
  let answered = '';
  for (let index = 0; offset < bytes; index++) {
    const chunk = file.chunk(index);
    const patched = await request(location, 'PATCH', {
      ...auth,
      'Upload-Offset': String(offset),
      'Content-Type': 'application/offset+octet-stream',
      'Content-Length': String(chunk.length),
    }, chunk);
    if (patched.status !== 204) throw new Error(`tus PATCH at ${offset}: ${patched.status} ${patched.text}`);
    offset += chunk.length;
    answered = String(patched.headers['upload-sha256'] ?? '');
  }
  const seconds = (performance.now() - started) / 1000;
  if (answered !== sha256) throw new Error(`the upload answered SHA-256 ${answered}, the client sent ${sha256}`);
  return { sha256, seconds, startedAt: started };
}

/** Downloads through a FileDownload URL; checks size and SHA-256. */
async function download(session: Session, service: ChildServer, fileId: number, bytes: number, sha256: string): Promise<number> {
  const url = attribute(await callSigned(service.url, session, 'FileService', 'FileDownload', { fid: fileId }), 'url');
  if (!url) throw new Error('FileDownload answered no url');
  const started = performance.now();
  const hash = createHash('sha256');
  let received = 0;
  await new Promise<void>((resolve, reject) => {
    http
      .get(new URL(url, service.url), { agent: uploadAgent }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`download: ${res.statusCode}`));
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          hash.update(chunk);
        });
        res.on('end', resolve);
        res.on('error', reject);
      })
      .on('error', reject);
  });
  const seconds = (performance.now() - started) / 1000;
  if (received !== bytes || hash.digest('hex') !== sha256) throw new Error(`the download gave ${received} bytes that differ from the upload`);
  return seconds;
}

function transfer(bytes: number, seconds: number, watched: { peak: number; cpu: CpuSeconds }, disk: DiskFigure, cachedAtStartBytes?: number): Transfer {
  const mbPerSecond = bytes / 1e6 / seconds;
  return {
    bytes,
    seconds,
    mbPerSecond,
    peakRssBytes: watched.peak,
    disk,
    ratioToDisk: mbPerSecond / disk.mbPerSecond,
    ...(cachedAtStartBytes === undefined ? {} : { cachedAtStartBytes }),
    cpuSeconds: watched.cpu,
  };
}

/** The disk's cold read of file `fileId`'s blob, then the blob evicted again for the download: both figures. */
async function coldReadThenEvict(dataDir: string, fileId: number): Promise<{ read: DiskFigure; cachedAtStartBytes: number }> {
  const blob = blobOf(dataDir, fileId);
  const read = await bestOf(DISK_RUNS, () => coldRead(blob));
  const cachedAtStartBytes = await evict(blob);
  log(`content: the disk read the blob cold at ${read.runsMbPerSecond?.map((v) => round(v, 0)).join(', ')} MB/s (cached after eviction: ${read.cachedAfterEviction} B, then ${cachedAtStartBytes} B)`);
  return { read, cachedAtStartBytes: Math.max(read.cachedAfterEviction, cachedAtStartBytes) };
}

async function durableWriteOf(dataDir: string, bytes: number): Promise<DiskFigure> {
  const write = await bestOf(DISK_RUNS, () => durableWrite(probeFolder(dataDir), bytes));
  log(`content: the disk wrote ${round(bytes / 2 ** 20, 0)} MiB durably at ${write.runsMbPerSecond?.map((v) => round(v, 0)).join(', ')} MB/s`);
  return write;
}

export async function fileAdd(service: ChildServer, session: Session, folder: number, name: string, bytes: number, sha256: string): Promise<number> {
  const xml = await callSigned(service.url, session, 'FileService', 'FileAdd', { name, ext: 'bin', size: bytes, dirid: folder, hash: sha256 });
  const id = Number(attribute(xml.slice(xml.indexOf('<file')), 'id'));
  if (!Number.isSafeInteger(id) || id <= 0) throw new Error(`FileAdd answered ${xml}`);
  return id;
}

export async function measureContent(options: ContentOptions): Promise<ContentResult> {
  const { manifest, bytes } = options;
  const service = await startService({
    dataDir: options.dataDir,
    logFile: path.join(options.runDir, 'logs', 'content-service.log'),
    profileDir: options.profileDir,
    // The login flood's clients each name an address of their own (X-Forwarded-For), as behind a proxy.
    env: { FSS_TRUSTED_PROXIES: '127.0.0.1' },
  });
  const rssStart = service.rss();
  try {
    const session = await login(service.url, BENCH_ACCOUNT, PASSWORD);
    const size = `${round(bytes / 2 ** 30, 2)} GiB`;

    // ---- plaintext
    const plainWrite = await durableWriteOf(options.dataDir, bytes);
    const up = await withPeak(service, () => upload(service, session, bytes, 'plain.bin', manifest.bench.uploads));
    const addStarted = performance.now();
    const plainId = await fileAdd(service, session, manifest.bench.uploads, 'plain.bin', bytes, up.value.sha256);
    const fileAddMs = performance.now() - addStarted;
    const plainRead = await coldReadThenEvict(options.dataDir, plainId);
    const down = await withPeak(service, () => download(session, service, plainId, bytes, up.value.sha256));
    const plain = {
      upload: transfer(bytes, up.value.seconds, up, plainWrite),
      fileAddMs,
      download: transfer(bytes, down.value, down, plainRead.read, plainRead.cachedAtStartBytes),
    };
    log(
      `content: ${size} plaintext: upload ${round(plain.upload.mbPerSecond, 0)} MB/s (${round(plain.upload.ratioToDisk, 2)}× the durable write), ` +
        `download ${round(plain.download.mbPerSecond, 0)} MB/s (${round(plain.download.ratioToDisk, 2)}× the cold read)`,
    );

    // ---- a 1 MiB download while 32 clients loop Login
    const small = await upload(service, session, MiB, 'flood.bin', manifest.bench.uploads);
    const smallId = await fileAdd(service, session, manifest.bench.uploads, 'flood.bin', MiB, small.sha256);
    const loginFlood = await measureLoginFlood({
      url: service.url,
      account: BENCH_ACCOUNT,
      password: PASSWORD,
      fileBytes: MiB,
      times: options.floodDownloads,
      download: () => download(session, service, smallId, MiB, small.sha256),
    });
    const { logins } = loginFlood;
    log(
      `content: 1 MiB download ${round(loginFlood.quietMedianMs, 1)} ms quiet, ${round(loginFlood.floodMedianMs, 1)} ms (worst ${round(loginFlood.floodWorstMs, 1)} ms) ` +
        `while ${loginFlood.clients} clients loop Login (${logins.tokens} tokens, ${logins.invalid} invalid, ${logins.throttled} throttled in ${round(logins.seconds, 1)} s)`,
    );

    // ---- encrypted
    const folder = manifest.bench.encrypted;
    await callSigned(service.url, session, 'FileService', 'FolderEncrypt', { dirid: folder, password: ENCRYPTION_PASSWORD, password_tip: 'bench' });
    await callSigned(service.url, session, 'FileService', 'Unlock', { dirid: folder, fid: 0, password: ENCRYPTION_PASSWORD });
    const GetFiles = { dir: String(folder), order: 'name', desc: '0' };
    const encryptedWrite = await durableWriteOf(options.dataDir, bytes);
    const encUp = await withPeak(service, async () => {
      const sent = await upload(service, session, bytes, 'secret.bin', folder);
      // From the upload's first request, as for the plaintext figure: the client's hashing before it is not the service's time.
      const started = sent.startedAt;
      const id = await fileAdd(service, session, folder, 'secret.bin', bytes, sent.sha256);
      // Encrypted at rest once its listing says so (the job that encrypts it runs in the background).
      for (;;) {
        const listing = await callSigned(service.url, session, 'UserService', 'GetFiles', GetFiles);
        const element = new RegExp(`<file [^>]*id="${id}"[^>]*>`).exec(listing)?.[0] ?? '';
        if (attribute(element, 'encrypted') === '1') break;
        if (performance.now() - started > 600_000) throw new Error('the encrypted upload was not encrypted within 10 minutes');
        await sleep(50);
      }
      return { id, sha256: sent.sha256, tusSeconds: sent.seconds, seconds: (performance.now() - started) / 1000 };
    });
    const encryptedRead = await coldReadThenEvict(options.dataDir, encUp.value.id);
    const encDown = await withPeak(service, () => download(session, service, encUp.value.id, bytes, encUp.value.sha256));
    const encrypted = {
      upload: transfer(bytes, encUp.value.seconds, encUp, encryptedWrite),
      tusSeconds: encUp.value.tusSeconds,
      download: transfer(bytes, encDown.value, encDown, encryptedRead.read, encryptedRead.cachedAtStartBytes),
    };
    log(
      `content: ${size} encrypted: upload ${round(encrypted.upload.mbPerSecond, 0)} MB/s (${round(encrypted.upload.ratioToDisk, 2)}×), ` +
        `download ${round(encrypted.download.mbPerSecond, 0)} MB/s (${round(encrypted.download.ratioToDisk, 2)}×)`,
    );
    return { chunkBytes: CHUNK, plain, encrypted, loginFlood, serviceRssBytes: { start: rssStart, end: service.rss() } };
  } finally {
    await service.stop();
  }
}
