/**
 * sharp (libvips), set up once for the whole process, and the WebP renditions made with it
 * (docs/uploads-and-downloads.md §9). Each image is decoded with one libvips thread on one thread of
 * libuv's pool; how many run at once is bounded by MakingQueue, so the pool keeps threads for files
 * and password hashes, and the event loop only ever waits on a promise.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { Sharp, SharpOptions } from 'sharp';

type SharpOf = (input: Buffer, options?: SharpOptions) => Sharp;
let loading: Promise<SharpOf> | undefined;

/**
 * sharp, loaded on first use (libvips costs some 20 MB that a service which never sees an image
 * should not pay). Only the loaders of the image formats the service reads run in this process,
 * whatever the bytes claim: PNG, JPEG, GIF, WebP, HEIF/AVIF and SVG (librsvg never runs scripts).
 */
export function loadSharp(): Promise<SharpOf> {
  loading ??= import('sharp').then(({ default: sharp }) => {
    sharp.concurrency(1);
    sharp.cache(false);
    sharp.block({ operation: ['VipsForeignLoad'] });
    sharp.unblock({
      operation: [
        'VipsForeignLoadPngBuffer',
        'VipsForeignLoadJpegBuffer',
        'VipsForeignLoadNsgifBuffer',
        'VipsForeignLoadWebpBuffer',
        'VipsForeignLoadHeifBuffer',
        'VipsForeignLoadSvgBuffer',
      ],
    });
    return sharp;
  });
  return loading;
}

export type ImageVariant = 'small' | 'large' | 'view';

/** The box each variant fits in (aspect kept, never enlarged). */
export const VARIANT_SIDES: Readonly<Record<ImageVariant, number>> = { small: 96, large: 384, view: 2048 };

/** Images with more pixels are refused from their header, before a pixel is decoded. */
export const MAX_INPUT_PIXELS = 100_000_000;
/** Content larger than this is not read for a rendition. */
export const MAX_INPUT_BYTES = 128 * 1024 ** 2;
const MAKING_TIMEOUT_SECONDS = 20;
const READABLE_FORMATS: ReadonlySet<string> = new Set(['png', 'jpeg', 'gif', 'webp', 'heif', 'svg']);
/** What an SVG may not hold to be drawn: scripts, event handlers, foreign content, entities, outside references. */
const UNSAFE_SVG = /<script|<foreignObject|<!ENTITY|\son[a-z]+\s*=|javascript:|(?:href|src)\s*=\s*["']?\s*(?:https?:|file:|data:text)/i;

/** Why bytes give no rendition (for the log line). */
export class UnreadableImage extends Error {}

/** The WebP rendition of `input` for `variant`, EXIF orientation applied; throws UnreadableImage. */
export async function makeRendition(input: Buffer, variant: ImageVariant): Promise<Buffer> {
  const sharp = await loadSharp();
  const options: SharpOptions = { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS, sequentialRead: true };
  let format: string | undefined;
  try {
    format = (await sharp(input, options).metadata()).format;
  } catch (error) {
    throw new UnreadableImage(error instanceof Error ? error.message : String(error));
  }
  if (!format || !READABLE_FORMATS.has(format)) throw new UnreadableImage(`not an image format read here (${format ?? 'unknown'})`);
  if (format === 'svg' && UNSAFE_SVG.test(input.toString('latin1'))) throw new UnreadableImage('an SVG with scripts or outside references');
  return webpOf(sharp(input, options).autoOrient(), variant);
}

/** `image` fitted in the box of `variant` and encoded as WebP; throws UnreadableImage. */
export async function webpOf(image: Sharp, variant: ImageVariant): Promise<Buffer> {
  const side = VARIANT_SIDES[variant];
  try {
    return await image
      .resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true })
      .timeout({ seconds: MAKING_TIMEOUT_SECONDS })
      .webp({ quality: variant === 'view' ? 82 : 75, effort: 2 })
      .toBuffer();
  } catch (error) {
    throw new UnreadableImage(error instanceof Error ? error.message : String(error));
  } finally {
    lowerMakersPriority();
  }
}

/** The nice value of libvips' threads, which decode and encode: on a busy CPU, making yields to calls and transfers. */
const MAKERS_NICE = 10;
const threadsSeen = new Set<string>();

/**
 * Lowers the priority of libvips' worker threads not seen before. Linux keeps a nice value per thread
 * and libvips keeps its threads, so from the second making on every decode runs at MAKERS_NICE. A
 * no-op without /proc.
 */
function lowerMakersPriority(): void {
  let threads: string[];
  try {
    threads = readdirSync('/proc/self/task');
  } catch {
    return;
  }
  for (const tid of threads) {
    if (threadsSeen.has(tid)) continue;
    threadsSeen.add(tid);
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').startsWith('libvips worker')) setPriority(Number(tid), MAKERS_NICE);
    } catch {
      // The thread ended meanwhile.
    }
  }
}

/** What openDerivedImage throws when the making queue is full: the route answers 503, Retry-After: 1. */
export class MakingQueueFull extends Error {
  constructor() {
    super('too many images are being made at once');
    this.name = 'MakingQueueFull';
  }
}

/**
 * At most `slots` makings at once, up to `maxWaiting` more in line, first come first served; and a
 * line of up to `maxAhead` makings nobody waits for (made ahead of their first use), each started
 * only when a slot is free and no request waits.
 */
export class MakingQueue {
  #running = 0;
  readonly #waiting: Array<() => void> = [];
  readonly #ahead: Array<() => Promise<void>> = [];

  constructor(
    readonly slots: number,
    readonly maxWaiting: number,
    readonly maxAhead = 0,
  ) {}

  /** Runs `task` in a slot; throws MakingQueueFull at once when every slot is taken and the line is full. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running < this.slots) this.#running++;
    else if (this.#waiting.length >= this.maxWaiting) throw new MakingQueueFull();
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  /** Runs `task` in a slot when nothing else wants it; false when the line ahead is full (then it is not run). `task` must not throw. */
  runWhenIdle(task: () => Promise<void>): boolean {
    if (this.#ahead.length >= this.maxAhead) return false;
    this.#ahead.push(task);
    if (this.#running < this.slots) {
      this.#running++;
      this.#release();
    }
    return true;
  }

  /** Hands the slot just freed to a request in line, else to a making ahead, else frees it. */
  #release(): void {
    const next = this.#waiting.shift();
    if (next) return next();
    const ahead = this.#ahead.shift();
    // A making ahead logs its own failure; nobody waits for its result.
    if (ahead) return void ahead().catch(() => undefined).finally(() => this.#release());
    this.#running--;
  }
}
