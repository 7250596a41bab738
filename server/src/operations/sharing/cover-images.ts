/**
 * Cover images decoded and encoded anew (docs/sharing.md §4): the bytes sent are never stored. Decoding
 * shares libuv's threadpool with file I/O and scrypt, so one image at a time, with one libvips thread.
 */
import type { Metadata, OutputInfo } from 'sharp';
import { loadSharp } from '../previews/image-making';
import { invalidArgument, tooLarge } from '../errors';

/** The longest side of a stored cover, in pixels: twice what a share page or a link preview shows. */
export const COVER_MAX_SIDE = 1600;

/** More pixels than this (read from the header) are refused undecoded: a few KB of PNG can claim 400 million. */
export const COVER_MAX_INPUT_PIXELS = 50_000_000;

/** A decode this slow is an image built to be slow (a sane one takes well under a second). */
const DECODE_TIMEOUT_SECONDS = 20;

/** The formats decoded: what ShareImageUpload accepts (and nothing else libvips could read: SVG, TIFF, PDF…). */
const ACCEPTED_FORMATS: ReadonlySet<string> = new Set(['png', 'jpeg', 'gif', 'webp']);

type SharpOf = Awaited<ReturnType<typeof loadSharp>>;

export interface CoverImage {
  readonly bytes: Buffer;
  readonly contentType: 'image/jpeg' | 'image/png';
  readonly width: number;
  readonly height: number;
}

const UNREADABLE = 'the image cannot be read: it is damaged, truncated, or not a PNG, JPEG, GIF or WebP image';

/** The decode that runs last: each waits for the one before it, so one runs at a time, in order. */
let lastDecode: Promise<unknown> = Promise.resolve();

function oneDecodeAtATime<T>(task: () => Promise<T>): Promise<T> {
  const run = lastDecode.then(task);
  lastDecode = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

/** The header's facts, without decoding a pixel; null when the bytes are no image sharp can read. */
async function headerOf(sharp: SharpOf, input: Buffer): Promise<Metadata | null> {
  try {
    return await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    return null;
  }
}

/** The cover to store for `input` (checked: not empty, ≤ 5 MiB); 400 when not a whole accepted image, 413 past the pixel limit. */
export function reencodeCover(input: Buffer): Promise<CoverImage> {
  return oneDecodeAtATime(async () => {
    const sharp = await loadSharp();
    const header = await headerOf(sharp, input);
    if (!header || !header.format || !ACCEPTED_FORMATS.has(header.format) || !header.width || !header.height) throw invalidArgument('image-unreadable', UNREADABLE);
    if (header.width * header.height > COVER_MAX_INPUT_PIXELS) {
      throw tooLarge('image-too-large', `the image has more than ${COVER_MAX_INPUT_PIXELS / 1_000_000} million pixels (it is ${header.width} × ${header.height})`);
    }
    let resized: { data: Buffer; info: OutputInfo };
    try {
      // failOn 'error': a truncated or corrupt image is refused rather than stored half grey.
      resized = await sharp(input, { failOn: 'error', limitInputPixels: COVER_MAX_INPUT_PIXELS, sequentialRead: true })
        .autoOrient()
        .resize({ width: COVER_MAX_SIDE, height: COVER_MAX_SIDE, fit: 'inside', withoutEnlargement: true })
        .timeout({ seconds: DECODE_TIMEOUT_SECONDS })
        .raw()
        .toBuffer({ resolveWithObject: true });
    } catch {
      throw invalidArgument('image-unreadable', UNREADABLE);
    }
    const { width, height, channels } = resized.info;
    const pixels = () => sharp(resized.data, { raw: { width, height, channels } });
    // A GIF always decodes with an alpha channel: only one that is used makes a PNG.
    const transparent = (channels === 2 || channels === 4) && !(await pixels().stats()).isOpaque;
    const bytes = transparent ? await pixels().png({ palette: true, quality: 90 }).toBuffer() : await pixels().removeAlpha().jpeg({ quality: 85 }).toBuffer();
    return { bytes, contentType: transparent ? 'image/png' : 'image/jpeg', width, height };
  });
}
