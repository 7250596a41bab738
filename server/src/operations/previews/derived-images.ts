/**
 * Derived images (docs/uploads-and-downloads.md §9): the WebP thumbnails (small, large) and view
 * renditions of plaintext image content (and of a PDF's first page, pdf-rendering.ts), kept in the content store under derived keys by the
 * content's SHA-256 and size (content-store.ts derivedKeyFor), so made once however many files share
 * the content. Made on first use, in bounded concurrency (image-making.ts MakingQueue, per
 * configuration), one making per content and variant however many requests ask at once.
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
    makings = { queue: new MakingQueue(config.imageMakers, config.imageQueue), inFlight: new Map(), spareInputs: [] };
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
    making = makings.inFlight.get(key);
    if (!making) {
      making = make(services, content, variant, key).finally(() => makings.inFlight.delete(key));
      makings.inFlight.set(key, making);
    }
  }
  const bytes = await making;
  return bytes && { body: Readable.from([bytes]), size: bytes.length, etag };
}

async function make(services: Services, content: ContentRef, variant: ImageVariant, key: string): Promise<Buffer | undefined> {
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
  const { queue, spareInputs } = makingsFor(services.config);
  const made = await queue.run(async (): Promise<{ bytes: Buffer } | { unreadable: string }> => {
    const buffer = content.size <= SPARE_INPUT_BYTES ? (spareInputs.pop() ?? Buffer.allocUnsafe(SPARE_INPUT_BYTES)) : Buffer.allocUnsafe(content.size);
    try {
      const input = await readWhole(await store.read(content.storageKey), buffer.subarray(0, content.size));
      return { bytes: sniff(input)?.kind === 'pdf' ? await makePdfRendition(input, variant) : await makeRendition(input, variant) };
    } catch (error) {
      if (error instanceof UnreadableImage) return { unreadable: error.message };
      throw error;
    } finally {
      if (buffer.length === SPARE_INPUT_BYTES) spareInputs.push(buffer);
    }
  });
  if ('unreadable' in made) return refuse(made.unreadable);
  await store.putDerived(key, made.bytes);
  return made.bytes;
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
