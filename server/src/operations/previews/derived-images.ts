/**
 * Derived images (docs/uploads-and-downloads.md §9): the WebP thumbnails (small, large) and view
 * renditions of plaintext image content (and of a PDF's first page, pdf-rendering.ts), kept in the content store under derived keys by the
 * content's SHA-256 and size (content-store.ts derivedKeyFor), so made once however many files share
 * the content. The thumbnails of new content are made ahead, when an upload completes, whenever no
 * request waits for a making (makeThumbnailsAhead); anything else on first use. Both in bounded
 * concurrency (image-making.ts MakingQueue, per configuration), one making per content and variant
 * however many ask at once.
 *
 * A content that gives no image (not an image, damaged, too many pixels, an unsafe SVG) gets one
 * warn line and a marker object, `…-unreadable` holding the reason, so that it is never read again;
 * the marker goes with the content like the images. Encrypted content never has derived images.
 */
import { Readable } from 'node:stream';
import type { Config } from '../../config';
import { createLogger } from '../../log';
import { ContentMissingError, derivedKeyFor, parseDerivedKey } from '../../storage/content/content-store';
import { contentStoreFor } from '../../storage/content/stores';
import { findPlaintextContent, plaintextContentAmong } from '../../storage/db/repositories/content-repository';
import type { Services } from '../context';
import { sniff } from './content-sniffing';
import { MakingQueue, MAX_INPUT_BYTES, makeRendition, UnreadableImage, type ImageVariant } from './image-making';
import { makePdfRendition } from './pdf-rendering';

export { MakingQueueFull, type ImageVariant } from './image-making';

/** A content row as found with its file (content-repository.ts LiveFileContent has these fields). */
export interface ContentRef {
  readonly sha256: string;
  readonly size: number;
  readonly storageKey: string;
  readonly encrypted: boolean;
}

export interface DerivedImage {
  readonly body: Readable;
  readonly size: number;
  /** Strong: the content's SHA-256 and the variant. */
  readonly etag: string;
}

const UNREADABLE = 'unreadable';

interface Makings {
  readonly queue: MakingQueue;
  readonly inFlight: Map<string, Promise<Buffer | undefined>>;
  /** Input buffers of the slots, reused: a fresh one per photo kept V8's collector busy (some 15 ms a 12 MP photo). */
  readonly spareInputs: Buffer[];
}

/** An input larger than this is read into a buffer of its own, not kept for the next. */
const SPARE_INPUT_BYTES = 8 * 1024 ** 2;
const makingsByConfig = new WeakMap<Config, Makings>();

function makingsFor(config: Config): Makings {
  let makings = makingsByConfig.get(config);
  if (!makings) {
    makings = { queue: new MakingQueue(config.imageMakers, config.imageQueue, config.imagesAhead), inFlight: new Map(), spareInputs: [] };
    makingsByConfig.set(config, makings);
  }
  return makings;
}

/**
 * The stored WebP of a content for a variant, made on first use; undefined when the content is
 * encrypted or gives no image. Throws MakingQueueFull when it has to be made and the queue is full.
 */
export async function openDerivedImage(services: Services, content: ContentRef, variant: ImageVariant): Promise<DerivedImage | undefined> {
  if (content.encrypted) return undefined;
  const store = contentStoreFor(services.config);
  const key = derivedKeyFor(content.sha256, content.size, `${variant}.webp`);
  const etag = `"${content.sha256}-${variant}"`;
  const makings = makingsFor(services.config);
  let making = makings.inFlight.get(key);
  if (!making) {
    const stored = await store.stat(key);
    if (stored) {
      try {
        return { body: await store.read(key), size: stored.size, etag };
      } catch (error) {
        if (!(error instanceof ContentMissingError) && (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    making = makeOnce(services, content, variant, (task) => makings.queue.run(task));
  }
  const bytes = await making;
  return bytes && { body: Readable.from([bytes]), size: bytes.length, etag };
}

/** Runs a making in a slot of the queue (a request), or at once (a making ahead already holds one). */
type InSlot = <T>(task: () => Promise<T>) => Promise<T>;

/** The making of `variant`, joined when one is in flight; made from `from` (a larger rendition) when given, else from the content. */
function makeOnce(services: Services, content: ContentRef, variant: ImageVariant, inSlot: InSlot, from?: Buffer): Promise<Buffer | undefined> {
  const { inFlight } = makingsFor(services.config);
  const key = derivedKeyFor(content.sha256, content.size, `${variant}.webp`);
  let making = inFlight.get(key);
  if (!making) {
    making = make(services, content, variant, key, inSlot, from).finally(() => inFlight.delete(key));
    inFlight.set(key, making);
  }
  return making;
}

async function make(services: Services, content: ContentRef, variant: ImageVariant, key: string, inSlot: InSlot, from?: Buffer): Promise<Buffer | undefined> {
  const store = contentStoreFor(services.config);
  const marker = derivedKeyFor(content.sha256, content.size, UNREADABLE);
  if (await store.stat(marker)) return undefined;
  const refuse = async (reason: string) => {
    createLogger(services.config.log).warn('no image made of this content', { sha256: content.sha256, size: content.size, variant, reason });
    await store.putDerived(marker, Buffer.from(reason.slice(0, 500), 'utf8'));
    return undefined;
  };
  if (content.size > MAX_INPUT_BYTES) return refuse(`larger than ${MAX_INPUT_BYTES} bytes`);
  // The slot bounds the reading and the making (CPU and the input's memory); the small result is stored after it,
  // so that the next making does not wait for this one's sync.
  const render = (input: Buffer) => (sniff(input)?.kind === 'pdf' ? makePdfRendition(input, variant) : makeRendition(input, variant));
  const made = await inSlot(() => unlessUnreadable(from ? render(from) : withContentBytes(services, content, render)));
  if ('unreadable' in made) return refuse(made.unreadable);
  await store.putDerived(key, made.bytes);
  return made.bytes;
}

async function unlessUnreadable(making: Promise<Buffer>): Promise<{ bytes: Buffer } | { unreadable: string }> {
  try {
    return { bytes: await making };
  } catch (error) {
    if (error instanceof UnreadableImage) return { unreadable: error.message };
    throw error;
  }
}

/** `use` given the content's bytes, read into one of the slots' spare buffers when they fit. */
async function withContentBytes<T>(services: Services, content: ContentRef, use: (input: Buffer) => Promise<T>): Promise<T> {
  const { spareInputs } = makingsFor(services.config);
  const buffer = content.size <= SPARE_INPUT_BYTES ? (spareInputs.pop() ?? Buffer.allocUnsafe(SPARE_INPUT_BYTES)) : Buffer.allocUnsafe(content.size);
  try {
    return await use(await readWhole(await contentStoreFor(services.config).read(content.storageKey), buffer.subarray(0, content.size)));
  } finally {
    if (buffer.length === SPARE_INPUT_BYTES) spareInputs.push(buffer);
  }
}

/** Leading bytes read to tell an image or a PDF (content-sniffing.ts sniff needs no more). */
const HEAD_BYTES = 4096;

/**
 * Queues the making of new content's thumbnails, large (the grid's) then small from it, to run when
 * no request waits for a making (FSS_IMAGES_AHEAD: how many may wait; when full, first use makes
 * them). Only for plaintext content whose first bytes are an image or a PDF; never throws.
 */
export async function makeThumbnailsAhead(services: Services, content: ContentRef): Promise<void> {
  if (content.encrypted || content.size === 0 || content.size > MAX_INPUT_BYTES || services.config.imagesAhead === 0) return;
  const store = contentStoreFor(services.config);
  const failed = (error: unknown) =>
    createLogger(services.config.log).warn('thumbnails not made ahead', { sha256: content.sha256, size: content.size, error: error instanceof Error ? error.message : String(error) });
  try {
    const headBytes = Math.min(content.size, HEAD_BYTES);
    const kind = sniff(await readWhole(await store.read(content.storageKey, { start: 0, end: headBytes - 1 }), Buffer.allocUnsafe(headBytes)))?.kind;
    if (kind !== 'image' && kind !== 'pdf') return;
  } catch (error) {
    return failed(error);
  }
  const { queue, inFlight } = makingsFor(services.config);
  queue.runWhenIdle(async () => {
    try {
      let large: Buffer | undefined;
      for (const variant of ['large', 'small'] as const) {
        const key = derivedKeyFor(content.sha256, content.size, `${variant}.webp`);
        if (inFlight.has(key) || (await store.stat(key))) continue;
        large = await makeOnce(services, content, variant, (task) => task(), large);
        if (!large) return; // no image of this content: the marker says so
      }
    } catch (error) {
      failed(error);
    }
  });
}

/** `blob` read into `target`, whose length is the blob's size (a local file straight into it, no Buffer per read). */
async function readWhole(blob: Readable & { readInto?(target: Buffer): Promise<number> }, target: Buffer): Promise<Buffer> {
  let at = 0;
  try {
    if (blob.readInto) {
      for (let read = -1; at < target.length && read !== 0; at += read) read = await blob.readInto(target.subarray(at));
    } else {
      for await (const chunk of blob as AsyncIterable<Buffer>) {
        if (chunk.length > target.length - at) throw new Error(`content of ${target.length} bytes is longer`);
        at += chunk.copy(target, at);
      }
    }
  } finally {
    blob.destroy();
  }
  if (at !== target.length) throw new Error(`content of ${target.length} bytes read as ${at}`);
  return target;
}

/**
 * Deletes the derived images of the content whose blob `storageKey` was (content-removal.ts), unless
 * plaintext content with those bytes is still stored under another key.
 */
export async function removeDerivedImagesOf(services: Services, storageKey: string): Promise<void> {
  const sha256 = /^[0-9a-f]{2}\/[0-9a-f]{2}\/([0-9a-f]{64})-/.exec(storageKey)?.[1];
  if (!sha256 || (await findPlaintextContent(services.db, sha256))) return;
  const store = contentStoreFor(services.config);
  for await (const key of store.listDerivedKeys(sha256)) await store.delete(key);
}

/** Derived objects whose content is gone (`fss fsck`); deleted with `repair` (they are only ever remade). */
export async function auditDerivedImages(services: Services, options: { readonly repair?: boolean } = {}): Promise<string[]> {
  const store = contentStoreFor(services.config);
  const orphans: string[] = [];
  const checkBatch = async (keys: string[]) => {
    const live = await plaintextContentAmong(services.db, [...new Set(keys.map((key) => parseDerivedKey(key)!.sha256))]);
    for (const key of keys) {
      const { sha256, size } = parseDerivedKey(key)!;
      if (!live.has(`${sha256}-${size}`)) orphans.push(key);
    }
  };
  let pending: string[] = [];
  for await (const key of store.listDerivedKeys()) {
    pending.push(key);
    if (pending.length === 500) {
      await checkBatch(pending);
      pending = [];
    }
  }
  await checkBatch(pending);
  if (options.repair) for (const key of orphans) await store.delete(key);
  return orphans;
}
