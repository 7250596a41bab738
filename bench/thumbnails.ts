/**
 * Section 8: thumbnails (issue 21). A folder of 1,000 distinct 12 MP JPEGs (4000 × 3000, about
 * 3.3 MB each: smooth colour fields with grain, made with sharp once and cached in
 * .tmp/bench-cache/thumbnail-photos-v1/; see ensurePhotos) is uploaded over tus into the bench account; then, in
 * Debian's headless Chromium (both CPUs, as section 5) with the service on CPU 0:
 * - first screen of thumbnails: a fresh context opens the folder in the grid; the time from
 *   navigation start until every tile on screen shows its thumbnail (its <img> complete, with
 *   pixels), twice: with nothing made, the service making them as they are asked for (a service
 *   with FSS_IMAGES_AHEAD=0), and right after the upload of another 1,000 photos to a service on its
 *   defaults, which makes thumbnails in the background as uploads complete (first visit);
 * - the same in a new page of the same context (next visit: the browser's cache);
 * - making rate: the large thumbnails of `makeCount` photos the browser did not ask for, requested
 *   in order from Node (4 in flight, a 503 tried again after its Retry-After), photos per second
 *   with the service pinned to one CPU, the browser closed and this client on the other CPU; the
 *   service's peak RSS meanwhile (VmHWM, reset before).
 * - preview: in a new page of the same context, `previewCount` photos of the first screen opened as
 *   a user does (a click selects the tile, Enter opens the viewer), each for the first time: the
 *   time from the Enter's keydown to the frame where the viewer's image is loaded with pixels (its
 *   <img> complete, naturalWidth > 0: the scaled rendition the service sends for a large photo).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from '@playwright/test';
import sharp from 'sharp';
import { buildWebApp, LAUNCH, loggedInContext } from './app';
import { createWithUpload, request } from './content';
import { cpuByThread, cpuSeconds } from './load';
import { attribute, callSigned, login, type Session } from './calls';
import { PASSWORD, BENCH_ACCOUNT } from './populate';
import { startService, type ChildServer } from './service';
import { CACHE_DIR, log, median, pinSelf, round, seededRandom, sleep } from './util';

export const PHOTO_COUNT = 1000;
const WIDTH = 4000;
const HEIGHT = 3000;
const PHOTO_DIR = path.join(CACHE_DIR, 'thumbnail-photos-v1');
const photoName = (index: number) => `photo ${String(index).padStart(4, '0')}.jpg`;

export interface ThumbnailsOptions {
  readonly dataDir: string;
  readonly runDir: string;
  /** Photos whose large thumbnail is requested for the making rate. */
  readonly makeCount: number;
  /** Photos opened in the viewer. */
  readonly previewCount: number;
  /** Where the service's CPU profile goes (--profile). */
  readonly profileDir?: string;
}

export interface ScreenFigure {
  readonly ms: number;
  /** Tiles on screen, and thumbnail requests the page made until they all showed. */
  readonly tiles: number;
  readonly requests: number;
  /** From navigation start: DOMContentLoaded's end (the app's scripts run), the two calls (sent, last byte), the first frame with tiles. */
  readonly steps: { readonly scriptsRun: number; readonly listing: readonly number[] | null; readonly prefix: readonly number[] | null; readonly tilesAt: number };
}

export interface ThumbnailsResult {
  readonly chromium: string;
  readonly photos: number;
  readonly photoBytes: number;
  readonly uploadSeconds: number;
  /** Nothing made: the service makes each thumbnail when the page asks for it. */
  readonly firstVisit: ScreenFigure;
  /** A folder opened right after its upload, thumbnails made ahead in the background (the default). */
  readonly afterUpload: {
    readonly screen: ScreenFigure;
    readonly uploadSeconds: number;
    /** Photos with both thumbnails stored when the upload ended, and when the screen was opened. */
    readonly madeAtUploadEnd: number;
    readonly madeAtScreen: number;
    /** From the upload's end until every photo had both (null: not within two minutes). */
    readonly allMadeSeconds: number | null;
    /** The service's peak RSS over the upload and the making ahead. */
    readonly peakRssBytes: number;
  };
  readonly nextVisit: ScreenFigure;
  /** Enter to the viewer's image shown, per photo; the width of the image shown (a scaled rendition or the original). */
  readonly preview: { readonly ms: number[]; readonly medianMs: number; readonly worstMs: number; readonly widths: number[] };
  readonly making: {
    readonly photos: number;
    readonly seconds: number;
    readonly perSecond: number;
    readonly retries: number;
    readonly peakRssBytes: number;
    /** The service's CPU time (all threads) over the making's wall time, and per photo. */
    readonly cpuShare: number;
    readonly cpuMsPerPhoto: number;
  };
}

/** Distinct pictures; the 1,000 files are these, each with a comment segment of its own. */
const PICTURES = 50;

/**
 * The 1,000 photos, made once and cached; answers their paths. Making a 12 MP picture takes about
 * a second here, so 50 pictures are drawn and each file is one of them with its own JPEG comment
 * (COM) segment: 1,000 distinct contents, each decoded in full by whoever makes its thumbnail.
 */
export async function ensurePhotos(): Promise<string[]> {
  const paths = Array.from({ length: PHOTO_COUNT }, (_, index) => path.join(PHOTO_DIR, photoName(index)));
  if (existsSync(path.join(PHOTO_DIR, 'complete'))) return paths;
  log(`thumbnails: making ${PHOTO_COUNT} photos of ${WIDTH} × ${HEIGHT} (once; cached in ${path.relative(process.cwd(), PHOTO_DIR)})`);
  await mkdir(PHOTO_DIR, { recursive: true });
  const random = seededRandom(21);
  // Grain shared by all pictures, read at a different offset by each: what makes a JPEG of a camera's size.
  const grain = new Int8Array(WIDTH * HEIGHT * 3 + 65_536);
  for (let i = 0; i < grain.length; i++) grain[i] = Math.round((random() - 0.5) * 36);
  for (let picture = 0; picture < PICTURES; picture++) {
    const own = seededRandom(1000 + picture);
    const seed = Buffer.from(Array.from({ length: 32 * 24 * 3 }, () => Math.floor(own() * 256)));
    const pixels = await sharp(seed, { raw: { width: 32, height: 24, channels: 3 } }).resize(WIDTH, HEIGHT, { kernel: 'cubic' }).raw().toBuffer();
    const offset = Math.floor(own() * 65_536);
    for (let i = 0; i < pixels.length; i++) pixels[i] = Math.max(0, Math.min(255, pixels[i] + grain[i + offset]));
    const jpeg = await sharp(pixels, { raw: { width: WIDTH, height: HEIGHT, channels: 3 } }).jpeg({ quality: 88 }).toBuffer();
    for (let index = picture; index < PHOTO_COUNT; index += PICTURES) {
      const comment = Buffer.from(`fss bench photo ${index}`);
      const segment = Buffer.concat([Buffer.from([0xff, 0xfe, 0, comment.length + 2]), comment]);
      await writeFile(paths[index], Buffer.concat([jpeg.subarray(0, 2), segment, jpeg.subarray(2)]));
    }
    if (picture % 10 === 9) log(`thumbnails: ${picture + 1} of ${PICTURES} pictures made`);
  }
  await writeFile(path.join(PHOTO_DIR, 'complete'), '');
  return paths;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

interface UploadedPhoto {
  readonly id: number;
  readonly sha256: string;
  readonly size: number;
}

/** tus creation with upload (the whole photo in the POST), then FileAdd. */
async function uploadPhoto(service: ChildServer, session: Session, folder: number, name: string, bytes: Buffer): Promise<UploadedPhoto> {
  const hash = await createWithUpload(service, session, folder, name, bytes, agent);
  const xml = await callSigned(service.url, session, 'FileService', 'FileAdd', { name, ext: 'jpg', size: bytes.length, dirid: folder, hash });
  const id = Number(attribute(xml.slice(xml.indexOf('<file')), 'id'));
  if (!Number.isSafeInteger(id) || id <= 0) throw new Error(`FileAdd answered ${xml}`);
  return { id, sha256: hash, size: bytes.length };
}

/** `jpeg` with its comment segment (right after SOI, see ensurePhotos) saying `text`: other content, the same picture. */
function withComment(jpeg: Buffer, text: string): Buffer {
  const comment = Buffer.from(text);
  const segment = Buffer.concat([Buffer.from([0xff, 0xfe, 0, comment.length + 2]), comment]);
  return Buffer.concat([jpeg.subarray(0, 2), segment, jpeg.subarray(4 + jpeg.readUInt16BE(4))]);
}

/** The photos uploaded into a new folder, two at a time; `tag` makes their contents differ from other folders'. */
async function uploadFolder(service: ChildServer, session: Session, photos: readonly string[], tag: string) {
  const folderXml = await callSigned(service.url, session, 'FileService', 'FolderAdd', { dirid: 0, name: `Photos ${tag} ${Date.now()}` });
  const folder = Number(attribute(folderXml.slice(folderXml.indexOf('<folder')), 'id'));
  const started = performance.now();
  const uploaded: UploadedPhoto[] = new Array(photos.length);
  let bytes = 0;
  let next = 0;
  const uploader = async () => {
    while (next < photos.length) {
      const index = next++;
      const photo = withComment(await readFile(photos[index]), `fss bench photo ${index} ${tag}`);
      bytes += photo.length;
      uploaded[index] = await uploadPhoto(service, session, folder, photoName(index), photo);
    }
  };
  await Promise.all([uploader(), uploader()]);
  const seconds = (performance.now() - started) / 1000;
  log(`thumbnails: ${photos.length} photos (${round(bytes / 1e9, 2)} GB) uploaded in ${round(seconds, 1)} s (${tag})`);
  return { folder, uploaded, bytes, seconds };
}

/** How many of the photos have both thumbnails stored (the local disk store: content/derived/…). */
function madeCount(dataDir: string, photos: readonly UploadedPhoto[]): number {
  const stored = (photo: UploadedPhoto, variant: string) =>
    existsSync(path.join(dataDir, 'content', 'derived', photo.sha256.slice(0, 2), photo.sha256.slice(2, 4), `${photo.sha256}-${photo.size}-${variant}.webp`));
  return photos.filter((photo) => stored(photo, 'large') && stored(photo, 'small')).length;
}

/**
 * In the page: resolves with performance.now() once every tile on screen (an option intersecting
 * the list) shows a loaded thumbnail, and with the thumbnail requests made so far; and where the
 * time went (steps, ms from navigation start; Resource Timing for the two calls).
 */
const SCREEN_SHOWN = `new Promise((resolve) => {
  let tilesAt;
  const call = (name) => { const e = performance.getEntriesByType('resource').find((e) => e.name.includes('/' + name)); return e ? [Math.round(e.startTime), Math.round(e.responseEnd)] : null; };
  const check = () => {
    const list = document.querySelector('[role="listbox"]');
    const box = list && list.getBoundingClientRect();
    const tiles = list ? [...list.querySelectorAll('[role="option"]')].filter((tile) => {
      const r = tile.getBoundingClientRect();
      return r.bottom > box.top && r.top < box.bottom;
    }) : [];
    if (tiles.length > 0) tilesAt ??= Math.round(performance.now());
    const shown = tiles.filter((tile) => { const img = tile.querySelector('img'); return img && img.complete && img.naturalWidth > 0; });
    if (tiles.length > 0 && shown.length === tiles.length) {
      const requests = performance.getEntriesByType('resource').filter((e) => e.name.includes('/t/')).length;
      const scriptsRun = Math.round(performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd);
      resolve({ ms: performance.now(), tiles: tiles.length, requests, steps: { scriptsRun, listing: call('GetFilesWhitPath'), prefix: call('ThumbnailBase'), tilesAt } });
    } else requestAnimationFrame(check);
  };
  check();
})`;

async function timeScreen(context: BrowserContext, folder: number): Promise<ScreenFigure> {
  const page = await context.newPage();
  try {
    await page.goto(`/folder/${folder}`, { waitUntil: 'commit' });
    return (await page.evaluate(SCREEN_SHOWN)) as ScreenFigure;
  } finally {
    await page.close();
  }
}

/** In the page, before Enter is pressed: the keydown's time, then the frame where the viewer's image `name` has pixels. */
const PREVIEW_ARMED = `window.__enterAt = undefined;
document.addEventListener('keydown', (e) => { if (e.key === 'Enter') window.__enterAt = e.timeStamp; }, { capture: true, once: true });`;
const previewShown = (name: string) => `new Promise((resolve) => {
  const check = () => {
    const img = [...document.querySelectorAll('dialog[open] img')].find((i) => i.alt === ${JSON.stringify(name)});
    if (window.__enterAt !== undefined && img && img.complete && img.naturalWidth > 0) resolve({ ms: performance.now() - window.__enterAt, width: img.naturalWidth });
    else requestAnimationFrame(check);
  };
  check();
})`;

/** Opens `count` photos of the first screen in the viewer, one after another, each for the first time. */
async function timePreviews(context: BrowserContext, folder: number, count: number): Promise<ThumbnailsResult['preview']> {
  const page = await context.newPage();
  try {
    await page.goto(`/folder/${folder}`);
    const ms: number[] = [];
    const widths: number[] = [];
    for (let i = 0; i < count; i++) {
      // Every other tile of the first screen: none of them previewed before.
      const name = photoName(2 * i + 1);
      await page.getByRole('option', { name: new RegExp(name.replace('.', '\\.')) }).click();
      await page.evaluate(PREVIEW_ARMED);
      await page.keyboard.press('Enter');
      const shown = (await page.evaluate(previewShown(name))) as { ms: number; width: number };
      ms.push(shown.ms);
      widths.push(shown.width);
      await page.keyboard.press('Escape');
      await page.locator('dialog[open]').waitFor({ state: 'detached' });
    }
    return { ms, medianMs: median(ms), worstMs: Math.max(...ms), widths };
  } finally {
    await page.close();
  }
}

export async function measureThumbnails(options: ThumbnailsOptions): Promise<ThumbnailsResult> {
  const photos = await ensurePhotos();
  const webRoot = await buildWebApp(options.runDir);
  const nothingMade = await measureNothingMade(options, photos, webRoot);
  const afterUpload = await measureAfterUpload(options, photos, webRoot);
  return { ...nothingMade, afterUpload };
}

/** A service that makes thumbnails only when asked (FSS_IMAGES_AHEAD=0): first and next visit, previews, the making rate. */
async function measureNothingMade(options: ThumbnailsOptions, photos: readonly string[], webRoot: string): Promise<Omit<ThumbnailsResult, 'afterUpload'>> {
  const logFile = path.join(options.runDir, 'logs', 'thumbnails-service.log');
  const service = await startService({ dataDir: options.dataDir, webRoot, logFile, profileDir: options.profileDir, env: { FSS_IMAGES_AHEAD: '0' } });
  let browser: Browser | undefined = await chromium.launch(LAUNCH);
  try {
    const chromiumVersion = browser.version();
    const session = await login(service.url, BENCH_ACCOUNT, PASSWORD);
    const { folder, uploaded, bytes: photoBytes, seconds: uploadSeconds } = await uploadFolder(service, session, photos, 'asked');
    const ids = uploaded.map((photo) => photo.id);

    const context = await loggedInContext(browser, service.url, session);
    await context.addInitScript(`localStorage.setItem('fss.view', 'grid');`);
    const firstVisit = await timeScreen(context, folder);
    const nextVisit = await timeScreen(context, folder);
    const preview = await timePreviews(context, folder, options.previewCount);
    await context.close();
    await browser.close();
    browser = undefined;
    log(`thumbnails: preview of a photo shown ${preview.ms.map((v) => round(v, 0)).join(', ')} ms after Enter (images ${[...new Set(preview.widths)].join(', ')} px wide)`);
    log(`thumbnails: first screen (${firstVisit.tiles} tiles) ${round(firstVisit.ms, 0)} ms on the first visit with nothing made, ${round(nextVisit.ms, 0)} ms on the next`);
    for (const [visit, { steps }] of [['first', firstVisit], ['next', nextVisit]] as const) {
      log(`thumbnails: ${visit} visit: scripts run ${steps.scriptsRun} ms, GetFilesWhitPath ${steps.listing?.join('–')} ms, ThumbnailBase ${steps.prefix?.join('–')} ms, tiles in the page ${steps.tilesAt} ms`);
    }

    // The making rate, on photos the browser never asked for (the grid shows the first ones); the
    // browser is closed and this client leaves CPU 0 to the service, as the throughput section does.
    pinSelf('1');
    const prefix = attribute(await callSigned(service.url, session, 'FileService', 'ThumbnailBase', {}), 'url');
    if (!prefix) throw new Error('ThumbnailBase answered no url');
    const todo = ids.slice(-options.makeCount);
    let peak = 0;
    service.resetPeak();
    const sampler = setInterval(() => (peak = Math.max(peak, service.rss())), 10);
    let retries = 0;
    let position = 0;
    const makeStarted = performance.now();
    const cpuBefore = cpuSeconds(service.pid);
    const threadsBefore = cpuByThread(service.pid);
    const maker = async () => {
      while (position < todo.length) {
        const fid = todo[position++];
        for (;;) {
          const answer = await request(new URL(`${prefix}${fid}/large`, service.url), 'GET', {}, undefined, agent);
          if (answer.status === 200) break;
          if (answer.status !== 503) throw new Error(`the large thumbnail of ${fid}: ${answer.status}`);
          retries++;
          await sleep(Number(answer.headers['retry-after'] ?? 1) * 1000);
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, maker));
    const seconds = (performance.now() - makeStarted) / 1000;
    const cpu = cpuSeconds(service.pid) - cpuBefore;
    const threadsAfter = cpuByThread(service.pid);
    log(`thumbnails: making, CPU ms per photo by thread: ${[...threadsAfter].map(([name, s]) => `${name} ${round(((s - (threadsBefore.get(name) ?? 0)) * 1000) / todo.length, 1)}`).join(', ')}`);
    clearInterval(sampler);
    const making = { photos: todo.length, seconds, perSecond: todo.length / seconds, retries, peakRssBytes: Math.max(peak, service.peak()), cpuShare: cpu / seconds, cpuMsPerPhoto: (cpu * 1000) / todo.length };
    log(`thumbnails: made ${todo.length} large thumbnails in ${round(seconds, 1)} s (${round(making.perSecond, 1)}/s, service CPU ${round(making.cpuShare * 100, 0)} %, ${round(making.cpuMsPerPhoto, 1)} ms CPU per photo, ${retries} retries), peak RSS ${round(making.peakRssBytes / 1e6, 0)} MB`);
    return { chromium: chromiumVersion, photos: photos.length, photoBytes, uploadSeconds, firstVisit, nextVisit, preview, making };
  } finally {
    await browser?.close();
    pinSelf(`0-${os.cpus().length - 1}`);
    await service.stop();
  }
}

/** A service on its defaults: another 1,000 photos uploaded, then their folder opened at once, as a user who just uploaded them does. */
async function measureAfterUpload(options: ThumbnailsOptions, photos: readonly string[], webRoot: string): Promise<ThumbnailsResult['afterUpload']> {
  const service = await startService({ dataDir: options.dataDir, webRoot, logFile: path.join(options.runDir, 'logs', 'thumbnails-ahead-service.log') });
  const browser = await chromium.launch(LAUNCH);
  try {
    const session = await login(service.url, BENCH_ACCOUNT, PASSWORD);
    service.resetPeak();
    const { folder, uploaded, seconds: uploadSeconds } = await uploadFolder(service, session, photos, 'ahead');
    const madeAtUploadEnd = madeCount(options.dataDir, uploaded);
    const uploadEnded = performance.now();
    const context = await loggedInContext(browser, service.url, session);
    await context.addInitScript(`localStorage.setItem('fss.view', 'grid');`);
    const madeAtScreen = madeCount(options.dataDir, uploaded);
    const screen = await timeScreen(context, folder);
    await context.close();
    let allMadeSeconds: number | null = null;
    while (allMadeSeconds === null && performance.now() - uploadEnded < 120_000) {
      if (madeCount(options.dataDir, uploaded) === uploaded.length) allMadeSeconds = (performance.now() - uploadEnded) / 1000;
      else await sleep(250);
    }
    const peakRssBytes = service.peak();
    log(`thumbnails: first screen (${screen.tiles} tiles) ${round(screen.ms, 0)} ms right after the upload (${madeAtScreen} of ${uploaded.length} photos made ahead by then, ${madeAtUploadEnd} when the upload ended; all ${allMadeSeconds === null ? 'not within 120 s' : `${round(allMadeSeconds, 1)} s after it`}), peak RSS ${round(peakRssBytes / 1e6, 0)} MB`);
    log(`thumbnails: after the upload: scripts run ${screen.steps.scriptsRun} ms, GetFilesWhitPath ${screen.steps.listing?.join('–')} ms, ThumbnailBase ${screen.steps.prefix?.join('–')} ms, tiles in the page ${screen.steps.tilesAt} ms`);
    return { screen, uploadSeconds, madeAtUploadEnd, madeAtScreen, allMadeSeconds, peakRssBytes };
  } finally {
    await browser.close();
    await service.stop();
  }
}
