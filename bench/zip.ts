/**
 * Section 9: ZIP download (issue 22). 1 GiB in 1,000 files of distinct content (one random MiB,
 * each file stamped with its index) goes up over tus into a new folder of the bench account; then
 * ZipDownload of the folder from a freshly started service, and its /z/ URL read to the last byte by a client that keeps nothing
 * but the archive's last MiBs, while the service's memory is watched (VmHWM reset before, and
 * sampled). Throughput is the archive's bytes / the time to its last byte, in MB/s. The archive is
 * checked from its end: the (ZIP64) end of central directory and the central directory itself give
 * the entry count and the total size of the entries, which must be the files uploaded.
 *
 * A > 4 GiB entry (full run only): one file of 4.5 GiB up over tus, its ZIP streamed to a file
 * under .tmp/bench-run/, checked by Python's zipfile (testzip(): every entry's CRC and size), then
 * deleted. Skipped when the disk has less than 15 GB free.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { rm, stat, statfs } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { attribute, callSigned, login, type Session } from './calls';
import { createWithUpload, fileAdd, upload, withPeak } from './content';
import { PASSWORD, BENCH_ACCOUNT } from './populate';
import { startService, type ChildServer } from './service';
import { GiB, log, MiB, round } from './util';

export interface ZipOptions {
  readonly dataDir: string;
  readonly runDir: string;
  /** Whether to check a > 4 GiB entry (the full run). */
  readonly largeEntry: boolean;
}

export interface ZipResult {
  readonly files: number;
  readonly fileBytes: number;
  readonly uploadSeconds: number;
  /** The uploading service's RSS after the uploads (the ZIP is served by a fresh one). */
  readonly rssAfterUploadsBytes: number;
  readonly archiveBytes: number;
  readonly seconds: number;
  readonly mbPerSecond: number;
  readonly peakRssBytes: number;
  /** The service's RSS just before the GET (after the uploads). */
  readonly rssBeforeBytes: number;
  /** What the archive's central directory says: entries (files and folders), files, their total size. */
  readonly check: ZipDirectory;
  /** The > 4 GiB entry: checked, or why not. */
  readonly large: LargeEntry | { readonly skipped: string };
}

export interface LargeEntry {
  readonly bytes: number;
  readonly archiveBytes: number;
  /** Streaming the ZIP to a file on the same disk. */
  readonly seconds: number;
  readonly peakRssBytes: number;
  /** Python's zipfile: its verdict on the archive (testzip() and the entry's size). */
  readonly verdict: string;
  readonly ok: boolean;
}

export interface ZipDirectory {
  readonly entries: number;
  readonly files: number;
  readonly fileBytes: number;
  readonly zip64: boolean;
}

const FILES = 1000;
const FILE_BYTES = Math.ceil(GiB / FILES);
const LARGE_BYTES = 4.5 * GiB;
const LARGE_FREE_BYTES = 15e9;
/** The archive's last bytes kept by the client: its central directory of 1,000 entries is about 80 KB. */
const TAIL_BYTES = 4 * MiB;

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** 1,000 files into `folder`, two at a time: tus creation with the whole file in the POST, then FileAdd. */
async function uploadFiles(service: ChildServer, session: Session, folder: number): Promise<void> {
  const base = randomBytes(FILE_BYTES);
  let next = 0;
  const uploader = async () => {
    // A buffer per uploader: stamping it with the index makes each file's content distinct at no cost.
    const bytes = Buffer.from(base);
    while (next < FILES) {
      const index = next++;
      bytes.writeUInt32BE(index, 0);
      const name = `part ${String(index).padStart(4, '0')}.bin`;
      const sha256 = await createWithUpload(service, session, folder, name, bytes, agent);
      await fileAdd(service, session, folder, name, bytes.length, sha256);
    }
  };
  await Promise.all([uploader(), uploader()]);
}

/** GETs a /z/ URL to its end, handing each chunk to `sink`; answers the bytes and the seconds to the last byte. */
function readZip(service: ChildServer, url: string, sink: (chunk: Buffer) => void | Promise<void>): Promise<{ bytes: number; seconds: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(new URL(url, service.url), { agent }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}`));
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          const pending = sink(chunk);
          if (pending) {
            res.pause();
            pending.then(() => res.resume(), reject);
          }
        });
        res.on('end', () => resolve({ bytes, seconds: (performance.now() - started) / 1000 }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** Keeps the last `limit` bytes of a stream. */
class Tail {
  #chunks: Buffer[] = [];
  #bytes = 0;
  constructor(private readonly limit: number) {}
  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#bytes - this.#chunks[0].length >= this.limit) this.#bytes -= this.#chunks.shift()!.length;
  }
  get bytes(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}

/**
 * Reads the central directory from the archive's end (`tail`, the last bytes of an archive of
 * `total` bytes): the end record, the ZIP64 one where the count, size or offset needs it, and each
 * central header with its ZIP64 sizes. Throws where the records do not agree with each other.
 */
export function readCentralDirectory(tail: Buffer, total: number): ZipDirectory {
  const end = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0 || end + 22 > tail.length) throw new Error('no end of central directory record in the archive’s last bytes');
  let entries = tail.readUInt16LE(end + 10);
  let size = tail.readUInt32LE(end + 12);
  let offset = tail.readUInt32LE(end + 16);
  let directoryEnd = end;
  const zip64 = tail.readUInt32LE(end - 20) === 0x07064b50;
  if (zip64) {
    const record = Number(tail.readBigUInt64LE(end - 20 + 8)) - (total - tail.length);
    if (record < 0 || tail.readUInt32LE(record) !== 0x06064b50) throw new Error('the ZIP64 locator points to no ZIP64 end record');
    entries = Number(tail.readBigUInt64LE(record + 32));
    size = Number(tail.readBigUInt64LE(record + 40));
    offset = Number(tail.readBigUInt64LE(record + 48));
    directoryEnd = record;
  }
  let at = offset - (total - tail.length);
  if (at < 0) throw new Error(`the central directory (${size} bytes) is longer than the ${tail.length} bytes kept`);
  if (at + size !== directoryEnd) throw new Error('the central directory does not end where its end record begins');
  let files = 0;
  let fileBytes = 0;
  for (let i = 0; i < entries; i++) {
    if (tail.readUInt32LE(at) !== 0x02014b50) throw new Error(`central header ${i} is not where the one before ends`);
    let uncompressed = tail.readUInt32LE(at + 24);
    const nameLength = tail.readUInt16LE(at + 28);
    const extraLength = tail.readUInt16LE(at + 30);
    const commentLength = tail.readUInt16LE(at + 32);
    const name = tail.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    if (uncompressed === 0xffffffff) {
      // The ZIP64 extra field (0x0001): its first field is the uncompressed size when the header's is 0xFFFFFFFF.
      for (let x = at + 46 + nameLength; x < at + 46 + nameLength + extraLength; x += 4 + tail.readUInt16LE(x + 2)) {
        if (tail.readUInt16LE(x) === 0x0001) uncompressed = Number(tail.readBigUInt64LE(x + 4));
      }
      if (uncompressed === 0xffffffff) throw new Error(`entry ${name} has no ZIP64 size`);
    }
    if (!name.endsWith('/')) {
      files++;
      fileBytes += uncompressed;
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  if (at !== directoryEnd) throw new Error('the central headers do not fill the central directory');
  return { entries, files, fileBytes, zip64 };
}

async function zipUrl(service: ChildServer, session: Session, dirids: string, fids: string): Promise<string> {
  const url = attribute(await callSigned(service.url, session, 'FileService', 'ZipDownload', { dirids, fids }), 'url');
  if (!url) throw new Error('ZipDownload answered no url');
  return url;
}

async function folderAdd(service: ChildServer, session: Session, name: string): Promise<number> {
  const xml = await callSigned(service.url, session, 'FileService', 'FolderAdd', { dirid: 0, name });
  return Number(attribute(xml.slice(xml.indexOf('<folder')), 'id'));
}

/** The > 4 GiB entry: a 4.5 GiB file zipped to disk and checked by Python's zipfile. */
async function checkLargeEntry(service: ChildServer, session: Session, runDir: string): Promise<LargeEntry | { skipped: string }> {
  const disk = await statfs(runDir);
  const free = disk.bavail * disk.bsize;
  if (free < LARGE_FREE_BYTES) return { skipped: `skipped: ${round(free / 1e9, 1)} GB free under .tmp/, < ${LARGE_FREE_BYTES / 1e9} GB` };
  const folder = await folderAdd(service, session, `Zip large ${Date.now()}`);
  const sent = await upload(service, session, LARGE_BYTES, 'large.bin', folder);
  const id = await fileAdd(service, session, folder, 'large.bin', LARGE_BYTES, sent.sha256);
  log(`zip: 4.5 GiB uploaded in ${round(sent.seconds, 1)} s; zipping it to disk`);
  const file = path.join(runDir, 'large-entry.zip');
  try {
    const url = await zipUrl(service, session, '', String(id));
    const started = performance.now();
    const streamed = await withPeak(service, async () => {
      const answer = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(new URL(url, service.url), { agent }, resolve).on('error', reject));
      if (answer.statusCode !== 200) throw new Error(`GET ${url}: ${answer.statusCode}`);
      await pipeline(answer, createWriteStream(file));
    });
    const seconds = (performance.now() - started) / 1000;
    const check = `import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip()
info = z.infolist()
print(f"{len(info)} entry, {info[0].file_size} bytes, testzip: {bad or 'all CRCs good'}")
sys.exit(0 if bad is None and len(info) == 1 and info[0].file_size == int(sys.argv[2]) else 1)`;
    let verdict: string;
    let ok = true;
    try {
      verdict = execFileSync('python3', ['-c', check, file, String(LARGE_BYTES)], { encoding: 'utf8' }).trim();
    } catch (error) {
      ok = false;
      verdict = String((error as { stdout?: string }).stdout ?? error).trim();
    }
    const archiveBytes = (await stat(file)).size;
    log(`zip: the 4.5 GiB entry's ZIP (${round(archiveBytes / 1e9, 2)} GB) in ${round(seconds, 1)} s; zipfile: ${verdict}`);
    return { bytes: LARGE_BYTES, archiveBytes, seconds, peakRssBytes: streamed.peak, verdict, ok };
  } finally {
    await rm(file, { force: true });
    await callSigned(service.url, session, 'FileService', 'FolderAndFileDelete', { dirids: folder, fids: '', is_real: 1 });
  }
}

export async function measureZip(options: ZipOptions): Promise<ZipResult> {
  const start = (name: string) => startService({ dataDir: options.dataDir, logFile: path.join(options.runDir, 'logs', `zip-${name}-service.log`) });
  const uploader = await start('upload');
  let folder: number;
  let uploadSeconds: number;
  let rssAfterUploadsBytes: number;
  try {
    const session = await login(uploader.url, BENCH_ACCOUNT, PASSWORD);
    folder = await folderAdd(uploader, session, `Zip ${Date.now()}`);
    const uploadStarted = performance.now();
    await uploadFiles(uploader, session, folder);
    uploadSeconds = (performance.now() - uploadStarted) / 1000;
    rssAfterUploadsBytes = uploader.rss();
    log(`zip: ${FILES} files of ${round(FILE_BYTES / MiB, 2)} MiB uploaded in ${round(uploadSeconds, 1)} s (service RSS then ${round(rssAfterUploadsBytes / 1e6, 0)} MB)`);
  } finally {
    await uploader.stop();
  }
  // A service of its own for the ZIP: its memory is the ZIP's, not what 1,000 uploads left behind.
  const service = await start('zip');
  try {
    const session = await login(service.url, BENCH_ACCOUNT, PASSWORD);
    const url = await zipUrl(service, session, String(folder), '');
    const tail = new Tail(TAIL_BYTES);
    const rssBeforeBytes = service.rss();
    const read = await withPeak(service, () => readZip(service, url, (chunk) => tail.push(chunk)));
    const { bytes: archiveBytes, seconds } = read.value;
    const check = readCentralDirectory(tail.bytes, archiveBytes);
    if (check.files !== FILES || check.fileBytes !== FILES * FILE_BYTES) {
      throw new Error(`the ZIP holds ${check.files} files of ${check.fileBytes} bytes, not ${FILES} of ${FILES * FILE_BYTES}`);
    }
    const mbPerSecond = archiveBytes / 1e6 / seconds;
    log(`zip: ${round(archiveBytes / 1e9, 2)} GB archive in ${round(seconds, 2)} s (${round(mbPerSecond, 0)} MB/s), peak RSS ${round(read.peak / 1e6, 0)} MB (${round(rssBeforeBytes / 1e6, 0)} MB before); ${check.entries} entries checked`);
    const large = options.largeEntry ? await checkLargeEntry(service, session, options.runDir) : { skipped: 'not measured (--quick)' };
    return { files: FILES, fileBytes: FILES * FILE_BYTES, uploadSeconds, rssAfterUploadsBytes, archiveBytes, seconds, mbPerSecond, peakRssBytes: read.peak, rssBeforeBytes, check, large };
  } finally {
    await service.stop();
  }
}
