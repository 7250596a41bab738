/**
 * The derived-image store (operations/previews/derived-images.ts): WebP thumbnails and renditions
 * made with sharp from real images and from PDFs written by hand (their first page, drawn by pdf.js),
 * stored in the content store (local disk, or S3 in the "s3" project), once per content, with a
 * marker for content that gives no image.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { deflateSync, crc32 } from 'node:zlib';
import type { Readable } from 'node:stream';
import sharp from 'sharp';
import { describe, expect, test, vi } from 'vitest';
import { auditDerivedImages, makeThumbnailsAhead, MakingQueueFull, openDerivedImage, type ContentRef } from '../../src/operations/previews/derived-images';
import { MakingQueue } from '../../src/operations/previews/image-making';
import { completeUpload } from '../../src/operations/content/uploads';
import { removeUnreferencedContent } from '../../src/operations/content/content-removal';
import { checkIntegrity, describeReport } from '../../src/operations/admin/integrity';
import { derivedKeyFor } from '../../src/storage/content/content-store';
import { contentStoreFor } from '../../src/storage/content/stores';
import { openTestServices, type TestServices } from '../helpers/database';
import { pagePdf } from '../helpers/pdfs';
import { insertTestAccount, insertTestFile, stageTestUpload, storeTestContent } from '../helpers/stored-files';

async function bytesOf(stream: Readable): Promise<Buffer> {
  return Buffer.concat(await stream.toArray());
}

/** A JPEG `width` × `height` as stored, its left half red and right half blue, with an EXIF orientation. */
async function photo(width: number, height: number, orientation = 1): Promise<Buffer> {
  const half = await sharp({ create: { width: width / 2, height, channels: 3, background: 'blue' } }).png().toBuffer();
  return sharp({ create: { width, height, channels: 3, background: 'red' } })
    .composite([{ input: half, left: width / 2, top: 0 }])
    .jpeg()
    .withMetadata({ orientation })
    .toBuffer();
}

/** Random pixels, slow to encode: a making that takes a while. */
async function noisyPhoto(seed: number): Promise<Buffer> {
  const pixels = Buffer.alloc(2000 * 1500 * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 2654435761 + seed * 97) >>> 24;
  return sharp(pixels, { raw: { width: 2000, height: 1500, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A whole, valid PNG of 20,000 × 20,000 black pixels (1 bit each) in about 50 KB: a decompression bomb. */
function pngBomb(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(20_000, 0);
  header.writeUInt32BE(20_000, 4);
  header[8] = 1; // bit depth 1, colour type 0 (grey)
  const rows = deflateSync(Buffer.alloc(20_000 * 2_501), { level: 9 });
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), pngChunk('IHDR', header), pngChunk('IDAT', rows), pngChunk('IEND', Buffer.alloc(0))]);
}

async function stored(services: TestServices, bytes: Buffer): Promise<ContentRef & { contentId: number }> {
  const content = await storeTestContent(services, bytes);
  return { ...content, storageKey: content.key, encrypted: false };
}

async function derivedKeys(services: TestServices): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of contentStoreFor(services.config).listDerivedKeys()) keys.push(key);
  return keys.sort();
}

function withLog(): { services: Promise<TestServices>; lines: string[] } {
  const lines: string[] = [];
  return { services: openTestServices({ config: { log: (line) => lines.push(line) } }), lines };
}

describe('making derived images', () => {
  test('a thumbnail is a WebP that fits its box, turned upright by the EXIF orientation', async () => {
    const services = await openTestServices();
    // Stored 800 × 400, red left and blue right; orientation 6 says: turn 90° clockwise to show it.
    const content = await stored(services, await photo(800, 400, 6));
    const image = await openDerivedImage(services, content, 'large');
    const bytes = await bytesOf(image!.body);
    expect(image!.size).toBe(bytes.length);
    const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
    expect((await sharp(bytes).metadata()).format).toBe('webp');
    expect([info.width, info.height]).toEqual([192, 384]);
    // Upright: the red half is now on top, the blue half below.
    const pixel = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
    expect(pixel(96, 20)[0]).toBeGreaterThan(200);
    expect(pixel(96, 360)[2]).toBeGreaterThan(200);
    expect(image!.etag).toBe(`"${content.sha256}-large"`);
  });

  test('makings one after another each read their own content whole, a small photo after a larger one too', async () => {
    const services = await openTestServices();
    const large = await stored(services, await noisyPhoto(1));
    const small = await stored(services, await photo(800, 400));
    await openDerivedImage(services, large, 'small');
    const { data, info } = await sharp(await bytesOf((await openDerivedImage(services, small, 'large'))!.body))
      .raw()
      .toBuffer({ resolveWithObject: true });

    expect([info.width, info.height]).toEqual([384, 192]);
    const pixel = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
    expect(pixel(20, 96)[0]).toBeGreaterThan(200);
    expect(pixel(360, 96)[2]).toBeGreaterThan(200);
  });

  test('each variant fits its box: small 96, large 384, view 2048 on the long edge, never enlarged', async () => {
    const services = await openTestServices();
    const content = await stored(services, await photo(3000, 1000));
    const sizeOf = async (variant: 'small' | 'large' | 'view') => {
      const meta = await sharp(await bytesOf((await openDerivedImage(services, content, variant))!.body)).metadata();
      return [meta.width, meta.height];
    };
    expect(await sizeOf('small')).toEqual([96, 32]);
    expect(await sizeOf('large')).toEqual([384, 128]);
    expect(await sizeOf('view')).toEqual([2048, 683]);
    const tiny = await stored(services, await photo(40, 20));
    expect((await sharp(await bytesOf((await openDerivedImage(services, tiny, 'view'))!.body)).metadata()).width).toBe(40);
  });

  test('made once and stored by content: later calls and concurrent calls read the same object', async () => {
    const services = await openTestServices();
    const content = await stored(services, await photo(600, 400));
    const first = await Promise.all([1, 2, 3].map(() => openDerivedImage(services, content, 'small')));
    const bodies = await Promise.all(first.map((image) => bytesOf(image!.body)));
    expect(new Set(bodies.map((b) => b.toString('base64'))).size).toBe(1);
    expect(await derivedKeys(services)).toEqual([derivedKeyFor(content.sha256, content.size, 'small.webp')]);
    const again = await openDerivedImage(services, content, 'small');
    expect((await bytesOf(again!.body)).equals(bodies[0])).toBe(true);
  });

  test('encrypted content never gets a derived image', async () => {
    const services = await openTestServices();
    const content = await stored(services, await photo(100, 100));
    expect(await openDerivedImage(services, { ...content, encrypted: true }, 'small')).toBeUndefined();
    expect(await derivedKeys(services)).toEqual([]);
  });

  test('a making beyond the queue is refused at once with MakingQueueFull', async () => {
    const services = await openTestServices({ config: { imageMakers: 1, imageQueue: 0 } });
    const contents = await Promise.all([1, 2, 3].map(async (seed) => stored(services, await noisyPhoto(seed))));
    const results = await Promise.allSettled(contents.map((content) => openDerivedImage(services, content, 'view')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof MakingQueueFull)).toHaveLength(2);
  });
});

describe('thumbnails made ahead of their first look', () => {
  test('an uploaded photo gets its large and small thumbnails once its upload completes, with no request', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const bytes = await photo(1200, 800);
    const { sha256 } = await completeUpload(services, alice, await stageTestUpload(services, alice, bytes));
    const keys = [derivedKeyFor(sha256, bytes.length, 'large.webp'), derivedKeyFor(sha256, bytes.length, 'small.webp')];
    await vi.waitFor(async () => expect(await derivedKeys(services)).toEqual(keys), { timeout: 20_000, interval: 50 });
    const store = contentStoreFor(services.config);
    expect(await sharp(await bytesOf(await store.read(keys[0]))).metadata()).toMatchObject({ format: 'webp', width: 384, height: 256 });
    expect(await sharp(await bytesOf(await store.read(keys[1]))).metadata()).toMatchObject({ format: 'webp', width: 96, height: 64 });
  });

  // One making slot: a request's making runs only after whatever ran ahead in it has finished, so what is stored then is all that was made.
  let asks = 0;
  const afterARequest = async (services: TestServices) => {
    // Content of its own each time: two services of one test share a PostgreSQL database.
    const asked = await stored(services, await photo(60, 40 + asks++));
    await openDerivedImage(services, asked, 'small');
    return derivedKeys(services).then((keys) => keys.filter((key) => key !== derivedKeyFor(asked.sha256, asked.size, 'small.webp')));
  };

  test('text, encrypted content and FSS_IMAGES_AHEAD=0 get nothing made ahead, not even a marker', async () => {
    const services = await openTestServices({ config: { imageMakers: 1 } });
    await makeThumbnailsAhead(services, await stored(services, Buffer.from('just some words\n')));
    await makeThumbnailsAhead(services, { ...(await stored(services, await photo(200, 100))), encrypted: true });
    expect(await afterARequest(services)).toEqual([]);

    const off = await openTestServices({ config: { imageMakers: 1, imagesAhead: 0 } });
    await makeThumbnailsAhead(off, await stored(off, await photo(100, 200)));
    expect(await afterARequest(off)).toEqual([]);
  });

  test('a damaged image gets its marker ahead, and no second warn line when it is asked for', async () => {
    const { services: opened, lines } = withLog();
    const services = await opened;
    const content = await stored(services, (await photo(800, 600)).subarray(0, 3000));
    await makeThumbnailsAhead(services, content);
    expect(await afterARequest(services)).toEqual([derivedKeyFor(content.sha256, content.size, 'unreadable')]);
    expect(await openDerivedImage(services, content, 'large')).toBeUndefined();
    expect(lines.filter((line) => line.includes('"level":"warn"'))).toHaveLength(1);
  });

  test.runIf(existsSync('/proc/self/task'))("libvips' threads, which decode and encode, run at nice 10 after a making, below calls and transfers", async () => {
    const services = await openTestServices();
    const ownNice = getPriority(process.pid);
    await openDerivedImage(services, await stored(services, await photo(800, 600)), 'large');
    const makers = readdirSync('/proc/self/task').filter((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').startsWith('libvips worker'));
    expect(makers.length).toBeGreaterThan(0);
    expect(makers.filter((tid) => getPriority(Number(tid)) < 10)).toEqual([]);
    expect(getPriority(process.pid)).toBe(ownNice);
  });

  test('a request waiting for a slot goes before every making ahead', async () => {
    const queue = new MakingQueue(1, 16, 16);
    const order: string[] = [];
    let finishFirst = () => {};
    const first = queue.run(() => new Promise<void>((resolve) => (finishFirst = resolve)));
    for (const name of ['ahead 1', 'ahead 2']) expect(queue.runWhenIdle(async () => void order.push(name))).toBe(true);
    const asked = queue.run(async () => void order.push('request'));
    finishFirst();
    await Promise.all([first, asked]);
    await vi.waitFor(() => expect(order).toEqual(['request', 'ahead 1', 'ahead 2']));
  });

  test('the line ahead is bounded: beyond it a making is declined, to be made on first use', async () => {
    const queue = new MakingQueue(1, 16, 1);
    let finish = () => {};
    const busy = queue.run(() => new Promise<void>((resolve) => (finish = resolve)));
    expect(queue.runWhenIdle(async () => {})).toBe(true);
    expect(queue.runWhenIdle(async () => {})).toBe(false);
    finish();
    await busy;
  });
});

describe('content that gives no image', () => {
  const cases: Array<[string, () => Promise<Buffer> | Buffer]> = [
    ['a truncated JPEG', async () => (await photo(800, 600)).subarray(0, 3000)],
    ['a 20,000 × 20,000 PNG of a few KB', pngBomb],
    ['HTML named .png', () => Buffer.from('<!doctype html><html><body><script>alert(1)</script></body></html>')],
    ['an SVG with a script', () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="50" height="50"><script>alert(1)</script><rect width="50" height="50"/></svg>')],
    ['plain text', () => Buffer.from('just some words\n')],
    ['a truncated PDF', () => pagePdf().subarray(0, 300)],
    ['a password-protected PDF', () => pagePdf({ userPassword: 'secret' })],
  ];
  for (const [what, bytes] of cases) {
    test(`${what}: undefined, one warn line without a stack, and a marker so it is not read again`, async () => {
      const { services: opened, lines } = withLog();
      const services = await opened;
      const content = await stored(services, await bytes());
      expect(await openDerivedImage(services, content, 'small')).toBeUndefined();
      expect(await openDerivedImage(services, content, 'large')).toBeUndefined();
      const warnings = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ event: 'no image made of this content', sha256: content.sha256 });
      expect(JSON.stringify(warnings[0])).not.toMatch(/\n\s+at /);
      expect(await derivedKeys(services)).toEqual([derivedKeyFor(content.sha256, content.size, 'unreadable')]);
    });
  }

  test('an SVG without scripts is drawn', async () => {
    const services = await openTestServices();
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><rect width="200" height="100" fill="green"/></svg>');
    const image = await openDerivedImage(services, await stored(services, svg), 'small');
    expect(await sharp(await bytesOf(image!.body)).metadata()).toMatchObject({ format: 'webp', width: 96, height: 48 });
  });
});

describe('PDFs', () => {
  test("a PDF's first page becomes the thumbnail: a WebP of its colours that fits the box", async () => {
    const services = await openTestServices();
    const content = await stored(services, pagePdf({ mediaBox: [400, 200], rgb: [0, 0, 1] }));
    const large = await bytesOf((await openDerivedImage(services, content, 'large'))!.body);
    const { data, info } = await sharp(large).raw().toBuffer({ resolveWithObject: true });
    expect((await sharp(large).metadata()).format).toBe('webp');
    expect([info.width, info.height]).toEqual([384, 192]);
    expect([...data.subarray(0, 3)].map((value) => Math.round(value / 16))).toEqual([0, 0, 16]);
    const small = await openDerivedImage(services, content, 'small');
    expect(await sharp(await bytesOf(small!.body)).metadata()).toMatchObject({ width: 96, height: 48 });
    expect(await derivedKeys(services)).toEqual([derivedKeyFor(content.sha256, content.size, 'large.webp'), derivedKeyFor(content.sha256, content.size, 'small.webp')]);
  });

  test('a page of 200,000 × 200,000 points is drawn at the size of the box, not its own', async () => {
    const services = await openTestServices();
    const image = await openDerivedImage(services, await stored(services, pagePdf({ mediaBox: [200_000, 200_000] })), 'small');
    expect(await sharp(await bytesOf(image!.body)).metadata()).toMatchObject({ format: 'webp', width: 96, height: 96 });
  });

  test('a password-protected PDF: the log line says why', async () => {
    const { services: opened, lines } = withLog();
    const services = await opened;
    expect(await openDerivedImage(services, await stored(services, pagePdf({ userPassword: 'secret' })), 'small')).toBeUndefined();
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toContainEqual(expect.objectContaining({ level: 'warn', reason: 'a password-protected PDF' }));
  });
});

describe('derived images and the content they come from', () => {
  test('removed with their content, kept while a file still has it', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const kept = await stored(services, await photo(200, 100));
    await insertTestFile(services, { accountId: alice, name: 'kept.jpg', ...kept });
    const gone = await stored(services, await photo(100, 200));
    await openDerivedImage(services, kept, 'small');
    await openDerivedImage(services, gone, 'small');
    await openDerivedImage(services, gone, 'large');
    await removeUnreferencedContent(services);
    expect(await derivedKeys(services)).toEqual([derivedKeyFor(kept.sha256, kept.size, 'small.webp')]);
  });

  test('fsck reports a derived object whose content is gone, and --repair removes it', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const live = await stored(services, await photo(200, 100));
    await insertTestFile(services, { accountId: alice, name: 'live.jpg', ...live });
    await openDerivedImage(services, live, 'small');
    const orphan = derivedKeyFor('ab'.repeat(32), 1234, 'small.webp');
    await contentStoreFor(services.config).putDerived(orphan, Buffer.from('left behind'));

    const report = await checkIntegrity(services);
    expect(report.derivedOrphans).toEqual([orphan]);
    expect(describeReport(report)).toContain(`orphan derived image ${orphan}: its content is gone`);
    await checkIntegrity(services, { repair: true });
    expect(await derivedKeys(services)).toEqual([derivedKeyFor(live.sha256, live.size, 'small.webp')]);
    expect(await auditDerivedImages(services)).toEqual([]);
  });
});
