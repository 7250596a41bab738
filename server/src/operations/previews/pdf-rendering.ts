/**
 * The first page of a PDF as a WebP thumbnail (docs/uploads-and-downloads.md §9). pdf.js (pdfjs-dist,
 * drawing on @napi-rs/canvas) may run JavaScript for seconds on a hostile file, so it runs in worker
 * threads, never on the event loop: one per making in progress (MakingQueue bounds them), kept 30 s
 * for the next, with a memory limit, and terminated when a page takes too long or the worker fails.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { loadSharp, UnreadableImage, VARIANT_SIDES, webpOf, type ImageVariant } from './image-making';

const RENDER_TIMEOUT_MS = 10_000;
const IDLE_WORKER_MS = 30_000;
/** Images inside a page with more pixels are not decoded (pdf.js leaves them out). */
const MAX_IMAGE_PIXELS = 16_000_000;

const pdfjsDir = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));

/**
 * What each worker runs (CommonJS, as an eval'd worker is). pdf.js gets the bytes and nothing else:
 * no eval, no fonts of the system, no URLs; only its own font, CMap and decoder files beside it.
 */
const WORKER_SOURCE = `
const { parentPort, workerData: dir } = require('node:worker_threads');
const loading = import(require('node:url').pathToFileURL(dir + '/legacy/build/pdf.mjs').href);
parentPort.on('message', async ({ pdf, side, maxImageSize }) => {
  let task;
  try {
    const { getDocument } = await loading;
    task = getDocument({
      data: pdf, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, stopAtErrors: true,
      enableXfa: false, maxImageSize, verbosity: 0, standardFontDataUrl: dir + '/standard_fonts/',
      cMapUrl: dir + '/cmaps/', wasmUrl: dir + '/wasm/', iccUrl: dir + '/iccs/',
    });
    const document = await task.promise;
    const page = await document.getPage(1);
    const whole = page.getViewport({ scale: 1 });
    const viewport = page.getViewport({ scale: side / Math.max(whole.width, whole.height) });
    const width = Math.max(1, Math.round(viewport.width)), height = Math.max(1, Math.round(viewport.height));
    const { canvas, context } = document.canvasFactory.create(width, height);
    await page.render({ canvas, canvasContext: context, viewport }).promise;
    parentPort.postMessage({ width, height, pixels: context.getImageData(0, 0, width, height).data });
  } catch (error) {
    parentPort.postMessage({ error: error?.name === 'PasswordException' ? 'a password-protected PDF' : 'PDF: ' + (error?.message ?? String(error)) });
  } finally {
    await task?.destroy();
  }
});
`;

interface PagePixels {
  readonly width: number;
  readonly height: number;
  readonly pixels: Uint8ClampedArray;
}

const idleWorkers: Worker[] = [];
const idleTimers = new WeakMap<Worker, NodeJS.Timeout>();

function takeWorker(): Worker {
  const worker = idleWorkers.pop();
  if (worker) {
    clearTimeout(idleTimers.get(worker));
    return worker;
  }
  const started = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: pdfjsDir,
    resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32 },
    stdout: true,
    stderr: true,
  });
  started.stdout.resume(); // pdf.js's console lines are not the service's log
  started.stderr.resume();
  started.on('error', () => undefined); // reported by the making in progress, if any
  started.on('exit', () => idleWorkers.includes(started) && idleWorkers.splice(idleWorkers.indexOf(started), 1));
  started.unref();
  return started;
}

function keepWorker(worker: Worker): void {
  idleWorkers.push(worker);
  const timer = setTimeout(() => void worker.terminate(), IDLE_WORKER_MS);
  idleTimers.set(worker, timer.unref());
}

/** The first page of `pdf` drawn so that its longer side is `side` pixels, as RGBA; throws UnreadableImage. */
export function renderFirstPage(pdf: Buffer, side: number, timeoutMs = RENDER_TIMEOUT_MS): Promise<PagePixels> {
  const worker = takeWorker();
  return new Promise<PagePixels>((resolve, reject) => {
    const settle = (outcome: { error: string } | PagePixels, reusable: boolean) => {
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (reusable) keepWorker(worker);
      else void worker.terminate();
      if ('error' in outcome) reject(new UnreadableImage(outcome.error));
      else resolve(outcome);
    };
    const timer = setTimeout(() => settle({ error: `a PDF page that takes longer than ${timeoutMs / 1000} s to draw` }, false), timeoutMs);
    const onMessage = (answer: { error: string } | PagePixels) => settle(answer, true);
    const onError = (error: Error) => settle({ error: `the PDF renderer failed: ${error.message}` }, false);
    const onExit = (code: number) => settle({ error: `the PDF renderer stopped (exit code ${code})` }, false);
    worker.once('message', onMessage).once('error', onError).once('exit', onExit);
    worker.postMessage({ pdf, side, maxImageSize: MAX_IMAGE_PIXELS });
  });
}

/** The WebP rendition of a PDF's first page for `variant`; throws UnreadableImage. */
export async function makePdfRendition(pdf: Buffer, variant: ImageVariant): Promise<Buffer> {
  const page = await renderFirstPage(pdf, VARIANT_SIDES[variant]);
  const sharp = await loadSharp();
  return webpOf(sharp(Buffer.from(page.pixels.buffer, page.pixels.byteOffset, page.pixels.byteLength), { raw: { width: page.width, height: page.height, channels: 4 } }), variant);
}
