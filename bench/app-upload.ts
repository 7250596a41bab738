/**
 * Section 7: the browser's upload (issue 19). A file of `bytes` (1 GiB) is picked in the web app
 * (setInputFiles on the hidden picker of the Uploads folder's page, in Debian's headless Chromium
 * with the e2e tests' flags) and timed until the upload panel shows it done; next to it, in the
 * same run and on the same service, a bare tus client in Node sends a file of the same size: POST,
 * PATCH in 8 MiB chunks one after another (each read from the file), FileAdd with the
 * Upload-SHA256 the last one answered. Each upload, the app's or the client's, sends a file of its
 * own, written just before (so in the page cache for both), with content nobody has yet: the app's
 * instant upload cannot apply, and the service stores every one. A third figure places the
 * browser's own ceiling: the same bare tus client written in the page (XMLHttpRequest PATCHes of
 * 8 MiB slices of a picked File, with upload progress, as the app sends them; no hashing, no
 * engine, no panel), timed from its POST to the last PATCH's answer, its upload deleted after.
 *
 * In the page (performance.now()): the picker's change event, the first PATCH's requestStart
 * (Resource Timing: when its first bytes went on the wire) and the moment the item's data-state
 * becomes "done". First byte = requestStart − change; the app's time = done − change. The client's
 * time = from its POST to FileAdd's answer. The browser and the client get both CPUs (as on a
 * user's machine), the service CPU 0, as in section 5.
 */
import { randomBytes } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { buildWebApp, LAUNCH, loggedInContext } from './app';
import { attribute, callSigned, login, type Session } from './calls';
import { PASSWORD, BENCH_ACCOUNT, type Manifest } from './populate';
import { startService, type ChildServer } from './service';
import { log, median, MiB, round } from './util';

export interface AppUploadOptions {
  readonly dataDir: string;
  readonly runDir: string;
  readonly manifest: Manifest;
  readonly bytes: number;
  /** Rounds of (client, app), one after the other. */
  readonly rounds: number;
}

export interface AppUploadRound {
  /** The bare tus client: POST to FileAdd's answer. */
  readonly clientSeconds: number;
  /** The bare tus client in the page: POST to the last PATCH's answer. */
  readonly pageSeconds: number;
  /** The app: the picker's change event to the panel's done state. */
  readonly appSeconds: number;
  /** The picker's change event to the first PATCH's requestStart. */
  readonly firstByteMs: number;
  /** FileAdd requests the app sent: 1 when hashing stopped before the end (the usual case here), 2 with a FileAdd by hash mid-transfer. */
  readonly appFileAdds: number;
}

export interface AppUploadResult {
  readonly chromium: string;
  readonly bytes: number;
  readonly chunkBytes: number;
  readonly rounds: AppUploadRound[];
  /** Medians over the rounds, MB/s (10^6 bytes). */
  readonly clientMbPerSecond: number;
  readonly pageMbPerSecond: number;
  readonly appMbPerSecond: number;
  /** App ÷ the bare client in Node (the goal), and ÷ the bare client in the page. */
  readonly ratio: number;
  readonly ratioToPage: number;
  /** The worst first byte of the rounds. */
  readonly firstByteMs: number;
}

const CHUNK = 8 * MiB;

/** Marks, in the page, the picker's change event and the moment an upload item is done; keeps every resource timing. */
const WATCH_UPLOAD = `
  performance.setResourceTimingBufferSize(100000);
  window.__upload = { pickedMs: null, doneMs: null };
  document.addEventListener('change', (event) => {
    if (event.target instanceof Element && event.target.matches('[data-testid="upload-files-input"]')) window.__upload.pickedMs = performance.now();
  }, true);
  new MutationObserver(() => {
    if (window.__upload.doneMs === null && document.querySelector('[data-testid="upload-item"][data-state="done"]')) window.__upload.doneMs = performance.now();
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'] });
`;

/** The first request to an upload's URL (`/upload/<32 hex>`): a new upload's first PATCH. */
const FIRST_PATCH_START = `Math.min(...performance.getEntriesByType('resource')
  .filter((e) => /^\\/upload\\/[0-9a-f]{32}$/.test(new URL(e.name).pathname))
  .map((e) => e.requestStart || e.startTime))`;

/** The bare tus client in the page, on the File of the input #bench-file; answers seconds. */
const PAGE_CLIENT = `(async () => {
  const file = document.getElementById('bench-file').files[0];
  const session = JSON.parse(sessionStorage.getItem('fss.session'));
  const auth = { 'Tus-Resumable': '1.0.0', Authorization: 'Bearer ' + session.token };
  const started = performance.now();
  const created = await fetch('/upload/', { method: 'POST', headers: { ...auth, 'Upload-Length': String(file.size) } });
  const url = created.headers.get('Location');
  if (created.status !== 201 || !url) throw new Error('tus POST: ' + created.status);
  for (let offset = 0; offset < file.size; offset += ${CHUNK}) {
    await new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('PATCH', url);
      for (const [name, value] of Object.entries({ ...auth, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' })) xhr.setRequestHeader(name, value);
      xhr.upload.onprogress = () => {};
      xhr.onload = () => (xhr.status === 204 ? resolve() : reject(new Error('tus PATCH: ' + xhr.status)));
      xhr.onerror = () => reject(new Error('tus PATCH failed'));
      xhr.send(file.slice(offset, Math.min(file.size, offset + ${CHUNK})));
    });
  }
  const seconds = (performance.now() - started) / 1000;
  await fetch(url, { method: 'DELETE', headers: auth });
  return seconds;
})()`;

/** Writes `bytes` of random content nobody has yet (each 8 MiB chunk made distinct by a nonce and its index). */
async function writeFreshFile(file: string, bytes: number): Promise<void> {
  const nonce = randomBytes(16);
  const chunk = randomBytes(CHUNK);
  const handle = await open(file, 'w');
  try {
    for (let offset = 0, index = 0; offset < bytes; offset += CHUNK, index++) {
      nonce.copy(chunk, 0);
      chunk.writeUInt32BE(index, nonce.length);
      await handle.write(chunk, 0, Math.min(CHUNK, bytes - offset));
    }
  } finally {
    await handle.close();
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function request(url: URL, method: string, headers: Record<string, string>, body?: Buffer): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The bare tus client: the file read chunk by chunk and sent as it is read; FileAdd with the service's hash. Answers seconds. */
async function clientUpload(service: ChildServer, session: Session, file: string, bytes: number, folder: number): Promise<number> {
  const auth = { 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${session.token}` };
  const handle = await open(file, 'r');
  const buffer = Buffer.alloc(CHUNK);
  try {
    const started = performance.now();
    const name = path.basename(file);
    const created = await request(new URL('/upload/', service.url), 'POST', {
      ...auth,
      'Upload-Length': String(bytes),
      'Upload-Metadata': `filename ${Buffer.from(name).toString('base64')},folder ${Buffer.from(String(folder)).toString('base64')}`,
    });
    if (created.status !== 201 || !created.headers.location) throw new Error(`tus POST: ${created.status}`);
    const location = new URL(created.headers.location, service.url);
    let sha256 = '';
    for (let offset = 0; offset < bytes; ) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, bytes - offset), offset);
      const patched = await request(
        location,
        'PATCH',
        { ...auth, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(bytesRead) },
        buffer.subarray(0, bytesRead),
      );
      if (patched.status !== 204) throw new Error(`tus PATCH at ${offset}: ${patched.status}`);
      offset += bytesRead;
      sha256 = String(patched.headers['upload-sha256'] ?? '');
    }
    const xml = await callSigned(service.url, session, 'FileService', 'FileAdd', { name, ext: 'bin', size: bytes, dirid: folder, hash: sha256 });
    if (!attribute(xml.slice(xml.indexOf('<file')), 'id')) throw new Error(`FileAdd answered ${xml}`);
    return (performance.now() - started) / 1000;
  } finally {
    await handle.close();
  }
}

export async function measureAppUpload(options: AppUploadOptions): Promise<AppUploadResult> {
  const { bytes, manifest } = options;
  const folder = manifest.bench.uploads;
  const webRoot = await buildWebApp(options.runDir);
  const service = await startService({ dataDir: options.dataDir, webRoot, logFile: path.join(options.runDir, 'logs', 'app-upload-service.log') });
  const browser = await chromium.launch(LAUNCH);
  const size = `${round(bytes / 2 ** 30, 2)} GiB`;
  try {
    const session = await login(service.url, BENCH_ACCOUNT, PASSWORD);
    const rounds: AppUploadRound[] = [];
    for (let round_ = 1; round_ <= options.rounds; round_++) {
      const clientFile = path.join(options.runDir, `client-upload-${round_}.bin`);
      await writeFreshFile(clientFile, bytes);
      const clientSeconds = await clientUpload(service, session, clientFile, bytes, folder);
      await rm(clientFile, { force: true });

      const pageFile = path.join(options.runDir, `page-upload-${round_}.bin`);
      await writeFreshFile(pageFile, bytes);
      let pageSeconds: number;
      const pageContext = await loggedInContext(browser, service.url, session);
      try {
        const page = await pageContext.newPage();
        await page.goto(`/folder/${folder}`);
        await page.evaluate(`{ const input = document.createElement('input'); input.type = 'file'; input.id = 'bench-file'; document.body.append(input); }`);
        await page.locator('#bench-file').setInputFiles(pageFile);
        pageSeconds = (await page.evaluate(PAGE_CLIENT)) as number;
      } finally {
        await pageContext.close();
        await rm(pageFile, { force: true });
      }

      const appFile = path.join(options.runDir, `app-upload-${round_}.bin`);
      await writeFreshFile(appFile, bytes);
      const context = await loggedInContext(browser, service.url, session);
      try {
        await context.addInitScript(WATCH_UPLOAD);
        const page = await context.newPage();
        let fileAdds = 0;
        page.on('request', (req) => {
          if (req.url().includes('FileAdd')) fileAdds++;
        });
        await page.goto(`/folder/${folder}`);
        const input = page.getByTestId('upload-files-input');
        await input.waitFor({ state: 'attached' });
        // The engine is fetched just after the first render; a user picks a file later than that.
        await page.waitForLoadState('networkidle');
        await input.setInputFiles(appFile);
        await page.waitForFunction('window.__upload.doneMs !== null', undefined, { timeout: 600_000, polling: 100 });
        const error = await page.locator('[data-testid="upload-item"][data-state="error"]').count();
        if (error) throw new Error('the app failed the upload');
        const marks = (await page.evaluate(`({ ...window.__upload, firstPatchMs: ${FIRST_PATCH_START} })`)) as { pickedMs: number; doneMs: number; firstPatchMs: number };
        rounds.push({
          clientSeconds,
          pageSeconds,
          appSeconds: (marks.doneMs - marks.pickedMs) / 1000,
          firstByteMs: marks.firstPatchMs - marks.pickedMs,
          appFileAdds: fileAdds,
        });
      } finally {
        await context.close();
        await rm(appFile, { force: true });
      }
      const last = rounds[rounds.length - 1];
      log(
        `app upload: ${size}: bare tus client ${round(bytes / 1e6 / last.clientSeconds, 0)} MB/s in Node, ${round(bytes / 1e6 / last.pageSeconds, 0)} MB/s in the page; app ${round(bytes / 1e6 / last.appSeconds, 0)} MB/s ` +
          `(first byte ${round(last.firstByteMs, 0)} ms after the pick, ${last.appFileAdds} FileAdd)`,
      );
    }
    const clientMbPerSecond = bytes / 1e6 / median(rounds.map((r) => r.clientSeconds));
    const pageMbPerSecond = bytes / 1e6 / median(rounds.map((r) => r.pageSeconds));
    const appMbPerSecond = bytes / 1e6 / median(rounds.map((r) => r.appSeconds));
    return {
      chromium: browser.version(),
      bytes,
      chunkBytes: CHUNK,
      rounds,
      clientMbPerSecond,
      pageMbPerSecond,
      appMbPerSecond,
      ratio: appMbPerSecond / clientMbPerSecond,
      ratioToPage: appMbPerSecond / pageMbPerSecond,
      firstByteMs: Math.max(...rounds.map((r) => r.firstByteMs)),
    };
  } finally {
    await browser.close();
    await service.stop();
  }
}
