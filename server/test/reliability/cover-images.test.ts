/**
 * Cover images as an attacker sends them (issue 18, finding 3), over the wire against the whole
 * service (docs/sharing.md §4, docs/protocol.md §10.6):
 *
 * A cover is given to a share that exists (ShareImageUpload takes no sign, so it never shares a
 * file: docs/protocol.md §5.6): every file here is shared first with a signed FileShare.
 *
 * - a corpus of hostile images (bytes that only start like an image, truncated images,
 *   decompression bombs, pages and scripts that claim to be images, a real image carrying a page
 *   after its end) is refused with 400 or 413 in every call form, and changes nothing: no share
 *   gets a cover, no byte is counted, no blob is left in the store;
 * - what is stored and served is never the bytes sent: a real image decoded and encoded anew,
 *   at most 1600 px a side, with no metadata and nothing after it, as a JPEG or (transparent) PNG,
 *   served with that type and `nosniff`;
 * - the stored bytes count against the owner's quota (the probe's 1,000-byte quota refuses them),
 *   replacing a cover counts only the difference, and they leave the used bytes with the cover;
 * - concurrent uploads never overrun the quota or the per-account cap (FSS_MAX_COVER_IMAGES);
 * - images are decoded one at a time, so that libuv's threadpool keeps threads for file I/O and
 *   logins.
 *
 * The images are made here, with sharp; nothing is read from disk.
 */
import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, type OperationSpec, type ServiceName } from '../../src/catalog/operations';
import { setQuota } from '../../src/operations/accounts/accounts';
import { removeUnreferencedContent } from '../../src/operations/content/content-removal';
import { checkIntegrity, describeReport } from '../../src/operations/admin/integrity';
import { contentStoreFor } from '../../src/storage/content/stores';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { callInForm, resultXml, type Form, type HttpAnswer } from '../helpers/requests';
import { insertTestFile, storeTestContent } from '../helpers/stored-files';

const op = (service: ServiceName, name: string): OperationSpec => findOperation(service, name)!;
const ShareImageUpload = op('FileService', 'ShareImageUpload');
const FileShare = op('FileService', 'FileShare');
const Unshare = op('FileService', 'Unshare');
const FolderAndFileDelete = op('FileService', 'FolderAndFileDelete');
const GetFiles = op('UserService', 'GetFiles');

const MiB = 1024 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// ---- Images --------------------------------------------------------------------------------------

/** A photo-like image (a gradient with noise, so that it does not compress to nothing). */
async function photo(width: number, height: number): Promise<Sharp> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i += 3) {
    const x = (i / 3) % width;
    pixels[i] = (x * 255) / width;
    pixels[i + 1] = Math.floor(Math.random() * 256);
    pixels[i + 2] = 128;
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } });
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A whole, valid black-and-white PNG of width × height: all zeros, so a few KB claim any size. */
function bombPng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const scanlines = zlib.deflateSync(Buffer.alloc(height * (1 + Math.ceil(width / 8))), { level: 9 });
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', header), pngChunk('IDAT', scanlines), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A JPEG whose frame header claims width × height (only the header: the decoder never gets further). */
async function bombJpeg(width: number, height: number): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).jpeg().toBuffer();
  const sof = jpeg.findIndex((byte, i) => byte === 0xff && (jpeg[i + 1] === 0xc0 || jpeg[i + 1] === 0xc2));
  const bomb = Buffer.from(jpeg);
  bomb.writeUInt16BE(height, sof + 5);
  bomb.writeUInt16BE(width, sof + 7);
  return bomb;
}

interface Images {
  readonly png: Buffer;
  readonly jpeg: Buffer;
  readonly bigJpeg: Buffer;
  readonly rotated: Buffer;
  readonly withPage: Buffer;
  readonly jpegBomb: Buffer;
}

let images: Images;

/** Hostile images, each with the refusal it gets: never stored, never counted. */
function hostileImages(): ReadonlyArray<readonly [string, () => Buffer, '400' | '413']> {
  const { png, jpeg } = images;
  return [
    ['the probe: a PNG signature and 5 MiB of random bytes', () => Buffer.concat([PNG_SIGNATURE, randomBytes(5 * MiB - PNG_SIGNATURE.length)]), '400'],
    ['a PNG signature and 64 KiB of random bytes', () => Buffer.concat([PNG_SIGNATURE, randomBytes(64 * 1024)]), '400'],
    ['a JPEG start and random bytes', () => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(64 * 1024)]), '400'],
    ['a GIF header and random bytes', () => Buffer.concat([Buffer.from('GIF89a'), randomBytes(4096)]), '400'],
    ['a WebP header and random bytes', () => Buffer.concat([Buffer.from('RIFF'), Buffer.from([0, 0x10, 0, 0]), Buffer.from('WEBPVP8 '), randomBytes(4096)]), '400'],
    ['a JPEG cut in half', () => jpeg.subarray(0, Math.floor(jpeg.length / 2)), '400'],
    ['a PNG cut in half', () => png.subarray(0, Math.floor(png.length / 2)), '400'],
    ['a PNG whose image data is damaged', () => damagedPng(png), '400'],
    ['a PNG of 20,000 × 20,000 pixels in a few KB (a decompression bomb)', () => bombPng(20_000, 20_000), '413'],
    ['a PNG of 1 × 60,000,000 pixels', () => bombPng(60_000_000, 1), '413'],
    ['a JPEG whose header claims 65,000 × 65,000 pixels', () => images.jpegBomb, '413'],
    ['an HTML page named cover.png', () => Buffer.from('<!doctype html><html><body><script>alert(document.cookie)</script></body></html>'), '400'],
    ['an SVG with a script', () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="10" height="10"/></svg>'), '400'],
    ['a PNG signature followed by an HTML page', () => Buffer.concat([PNG_SIGNATURE, Buffer.from('<html><script>alert(1)</script></html>')]), '400'],
    ['a PNG signature alone', () => PNG_SIGNATURE, '400'],
  ];
}

/** The PNG with bytes in the middle of its image data overwritten (its CRC no longer matches). */
function damagedPng(png: Buffer): Buffer {
  const damaged = Buffer.from(png);
  const idat = damaged.indexOf('IDAT');
  damaged.fill(0x55, idat + 20, idat + 60);
  return damaged;
}

// ---- The service ---------------------------------------------------------------------------------

let app: TestApp;
let aliceId: number;
let alice: Session;

beforeAll(async () => {
  const real = await photo(640, 480);
  images = {
    png: await sharp({ create: { width: 320, height: 200, channels: 4, background: { r: 20, g: 120, b: 220, alpha: 0.5 } } }).png().toBuffer(),
    jpeg: await real.clone().jpeg({ quality: 90 }).toBuffer(),
    bigJpeg: await (await photo(2400, 1800)).jpeg({ quality: 70 }).toBuffer(),
    // A portrait photo stored sideways with EXIF orientation 6, and a description and GPS position.
    rotated: await (await photo(300, 200))
      .jpeg()
      .withMetadata({ orientation: 6 })
      .withExif({ IFD0: { ImageDescription: 'EXIF-MARKER-the-office' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1' } })
      .toBuffer(),
    withPage: Buffer.concat([await real.clone().png().toBuffer(), Buffer.from('<html><script>alert("PAGE-MARKER")</script></html>')]),
    jpegBomb: await bombJpeg(65_000, 65_000),
  };
  app = await startTestApp({ FSS_MAX_COVER_IMAGES: '3' });
  aliceId = await addAccount(app, 'alice', 'alice-password-1');
  alice = await logIn(app, 'post', 'alice', 'alice-password-1');
}, 60_000);
afterAll(() => app?.close());

let emptyContent: Promise<{ contentId: number; sha256: string }> | undefined;

/** A file of 0 bytes (the probe's files) of the session's account: what it holds does not matter to its cover. */
async function addFile(session: Session, name: string): Promise<number> {
  emptyContent ??= storeTestContent(app.app.services, Buffer.alloc(0));
  const { contentId, sha256 } = await emptyContent;
  return insertTestFile(app.app.services, { accountId: session.uid, name, contentId, sha256, size: 0 });
}

/** A file of 0 bytes, shared (open, no limit) by its owner's signed FileShare: what a cover may be given to. */
async function addSharedFile(session: Session, name: string): Promise<number> {
  const fid = await addFile(session, name);
  const answer = await callSigned(app, 'post', FileShare, session, { fids: String(fid), downpwd: '', downValue: 0, description: '' });
  expect(element(resultXml(answer, FileShare), 'result')?.attrs.code, answer.body.slice(0, 300)).toBe('0');
  return fid;
}

/** ShareImageUpload's string result: the URL, or `ERROR <code> <message>`. */
async function upload(fid: number, bytes: Buffer, form: Form = 'post', session = alice): Promise<string> {
  const sent = form === 'soap11' || form === 'soap12' ? bytes : bytes.toString('base64');
  const answer: HttpAnswer = await callInForm(app.url, form, ShareImageUpload, { uid: session.uid, token: session.token, fid, ImagefileName: 'cover.png', byteFileStream: sent });
  expect(answer.status, answer.body.slice(0, 300)).toBe(200);
  const xml = resultXml(answer, ShareImageUpload);
  return (/^<string[^>]*>([\s\S]*)<\/string>$/.exec(xml)?.[1] ?? xml).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

async function fetchImage(url: string): Promise<{ status: number; type: string | null; nosniff: string | null; body: Buffer }> {
  const answer = await fetch(`${app.url}${new URL(url).pathname}`);
  return { status: answer.status, type: answer.headers.get('content-type'), nosniff: answer.headers.get('x-content-type-options'), body: Buffer.from(await answer.arrayBuffer()) };
}

/**
 * sharp's tasks queued for or running on libuv's threadpool. sharp.counters() reads its two
 * counters one after the other while a worker thread moves a task from one to the other, so a
 * single reading can count that task twice: two equal readings in a row are one that did not.
 */
function sharpTasksInThreadpool(): number {
  let reading = sharp.counters();
  for (;;) {
    const again = sharp.counters();
    if (again.queue === reading.queue && again.process === reading.process) return reading.queue + reading.process;
    reading = again;
  }
}

async function usedBytes(accountId: number): Promise<number> {
  const row = await app.app.services.db.selectFrom('accounts').select('used_bytes').where('id', '=', accountId).executeTakeFirstOrThrow();
  return Number(row.used_bytes);
}

/** Every blob in the store with its size, once content removal has run: what the data folder holds. */
async function storedBlobs(): Promise<Map<string, number>> {
  await removeUnreferencedContent(app.app.services);
  const store = contentStoreFor(app.config);
  const blobs = new Map<string, number>();
  for await (const key of store.listKeys()) blobs.set(key, (await store.stat(key))!.size);
  return blobs;
}

/** What a refused upload must leave as it was: the account's shares and covers, its used bytes, the store. */
async function snapshot(accountId: number) {
  const shares = await app.app.services.db.selectFrom('shares').select(['item_id', 'image_key', 'image_bytes']).where('account_id', '=', accountId).orderBy('id').execute();
  return { shares, used: await usedBytes(accountId), blobs: [...(await storedBlobs()).entries()].sort() };
}

async function newAccount(name: string, quotaBytes: number): Promise<{ id: number; session: Session }> {
  const id = await addAccount(app, name, `${name}-password-1`);
  await setQuota(app.app.services, name, quotaBytes);
  return { id, session: await logIn(app, 'post', name, `${name}-password-1`) };
}

// ---- Tests ---------------------------------------------------------------------------------------

describe('hostile images are refused and change nothing', () => {
  it.each(['post', 'soap12'] as const)('over %s: each is refused with its code; no cover, no byte counted, no blob left', async (form) => {
    const fid = await addSharedFile(alice, `hostile ${form}.txt`);
    const before = await snapshot(aliceId);
    for (const [label, make, code] of hostileImages()) {
      expect(await upload(fid, make(), form), label).toMatch(new RegExp(`^ERROR ${code} `));
    }
    expect(await snapshot(aliceId)).toEqual(before);
    // The service still answers an ordinary call.
    const listing = await callSigned(app, 'post', GetFiles, alice, { dir: '0', order: 'name', desc: '0' });
    expect(element(resultXml(listing, GetFiles), 'result')?.attrs.code).toBe('0');
  }, 120_000);

  it('the probe: five 5 MiB "covers" of random bytes on 0-byte files under a 1,000-byte quota store nothing', async () => {
    const { id, session } = await newAccount('prober', 1000);
    const before = await snapshot(id);
    const blobBytes = [...(await storedBlobs()).values()].reduce((a, b) => a + b, 0);
    for (let i = 0; i < 5; i++) {
      const fid = await addSharedFile(session, `empty ${i}.bin`);
      expect(await upload(fid, Buffer.concat([PNG_SIGNATURE, randomBytes(5 * MiB - 8)]), 'soap11', session)).toMatch(/^ERROR 400 /);
    }
    expect([...(await storedBlobs()).values()].reduce((a, b) => a + b, 0)).toBe(blobBytes);
    expect((await snapshot(id)).used).toBe(before.used);
  }, 120_000);
});

describe('a cover needs a share its owner made', () => {
  it('a real image for a file that is not shared is 409: no share made, no byte counted, no blob left', async () => {
    const { id, session } = await newAccount('unshared', 100 * MiB);
    const fid = await addFile(session, 'unshared.txt');
    const before = await snapshot(id);
    expect(await upload(fid, images.jpeg, 'post', session)).toMatch(/^ERROR 409 /);
    expect(await snapshot(id)).toEqual(before);
  });
});

describe('what is stored is the image decoded and encoded anew', () => {
  it('a real JPEG and a real transparent PNG are stored and served as a JPEG and a PNG of the same size, with nosniff', async () => {
    const { session } = await newAccount('decoded', 100 * MiB);
    for (const [bytes, type, format, width, height] of [
      [images.jpeg, 'image/jpeg', 'jpeg', 640, 480],
      [images.png, 'image/png', 'png', 320, 200],
    ] as const) {
      const url = await upload(await addSharedFile(session, `real ${format}.txt`), bytes, 'post', session);
      expect(url).toMatch(/^http:\/\/.*\/image\//);
      const served = await fetchImage(url);
      expect(served).toMatchObject({ status: 200, type, nosniff: 'nosniff' });
      expect(await sharp(served.body).metadata()).toMatchObject({ format, width, height });
    }
  });

  it('a large photo is made at most 1600 px on its longest side, keeping its proportions', async () => {
    const { session } = await newAccount('large', 100 * MiB);
    const url = await upload(await addSharedFile(session, 'large.txt'), images.bigJpeg, 'post', session);
    const served = await fetchImage(url);
    expect(await sharp(served.body).metadata()).toMatchObject({ format: 'jpeg', width: 1600, height: 1200 });
  });

  it('an EXIF-rotated photo is stored upright, without its EXIF (description, GPS position)', async () => {
    expect(images.rotated.includes('EXIF-MARKER')).toBe(true);
    const { session } = await newAccount('rotated', 100 * MiB);
    const url = await upload(await addSharedFile(session, 'rotated.txt'), images.rotated, 'post', session);
    const served = await fetchImage(url);
    const metadata = await sharp(served.body).metadata();
    expect(metadata).toMatchObject({ width: 200, height: 300 });
    expect(metadata.exif).toBeUndefined();
    expect(metadata.orientation).toBeUndefined();
    expect(served.body.includes('EXIF-MARKER')).toBe(false);
  });

  it('a real image with a page after its end is stored without the page', async () => {
    const { session } = await newAccount('polyglot', 100 * MiB);
    const url = await upload(await addSharedFile(session, 'polyglot.txt'), images.withPage, 'post', session);
    const served = await fetchImage(url);
    expect(served.status).toBe(200);
    expect(served.body.includes('PAGE-MARKER')).toBe(false);
    expect(served.body.includes('<script')).toBe(false);
  });
});

describe('decoding shares the threadpool', () => {
  it('one image at a time: three uploads at once never put more than one decode into libuv\'s threadpool, and a login between them answers', async () => {
    const { session } = await newAccount('crowded', 100 * MiB);
    const fids = await Promise.all(Array.from({ length: 3 }, (_, i) => addSharedFile(session, `crowded ${i}.bin`)));
    let most = 0;
    let sampling = true;
    const sample = () => {
      most = Math.max(most, sharpTasksInThreadpool());
      if (sampling) setImmediate(sample);
    };
    sample();
    const uploads = Promise.all(fids.map((fid) => upload(fid, images.bigJpeg, 'post', session)));
    // scrypt runs on the same threadpool: a login is answered while the covers decode.
    await logIn(app, 'post', 'crowded', 'crowded-password-1');
    const answers = await uploads;
    sampling = false;
    expect(answers.every((answer) => answer.startsWith('http'))).toBe(true);
    expect(most).toBe(1);
  }, 60_000);
});

describe('cover bytes count against the quota', () => {
  it('the stored size is counted; a cover that does not fit is 413 and changes nothing', async () => {
    const { id, session } = await newAccount('counted', 10 * MiB);
    const fid = await addSharedFile(session, 'report.bin');
    const url = await upload(fid, images.jpeg, 'post', session);
    const stored = (await fetchImage(url)).body.length;
    expect(await usedBytes(id)).toBe(stored);

    await setQuota(app.app.services, 'counted', stored + 100);
    const other = await addSharedFile(session, 'other.bin');
    const before = await snapshot(id);
    expect(await upload(other, images.jpeg, 'post', session)).toMatch(/^ERROR 413 /);
    expect(await snapshot(id)).toEqual(before);
  });

  it('replacing a cover counts only the difference, even at the quota; Unshare and deletion give the bytes back; fsck agrees', async () => {
    const { id, session } = await newAccount('replacer', 10 * MiB);
    const first = await addSharedFile(session, 'first.bin');
    const second = await addSharedFile(session, 'second.bin');
    const big = (await fetchImage(await upload(first, images.bigJpeg, 'post', session))).body.length;
    // With the quota exactly full, a smaller cover in place of the big one is still accepted.
    await setQuota(app.app.services, 'replacer', big);
    const small = (await fetchImage(await upload(first, images.png, 'post', session))).body.length;
    expect(await usedBytes(id)).toBe(small);
    await setQuota(app.app.services, 'replacer', 10 * MiB);
    await upload(second, images.jpeg, 'post', session);
    const both = await usedBytes(id);
    expect(both).toBeGreaterThan(small);

    await callSigned(app, 'post', Unshare, session, { dirids: '', fids: String(first) });
    expect(await usedBytes(id)).toBe(both - small);
    await callSigned(app, 'post', FolderAndFileDelete, session, { dirids: '', fids: String(second), is_real: 1 });
    expect(await usedBytes(id)).toBe(0);
    const report = await checkIntegrity(app.app.services);
    expect(describeReport(report).filter((line) => line.startsWith('account '))).toEqual([]);
  });

  it('concurrent uploads never overrun the quota: exactly the covers that fit are stored', async () => {
    const { id, session } = await newAccount('racer', 10 * MiB);
    const probe = await addSharedFile(session, 'probe.bin');
    const size = (await fetchImage(await upload(probe, images.jpeg, 'post', session))).body.length;
    await callSigned(app, 'post', Unshare, session, { dirids: '', fids: String(probe) });
    // Room for two and a half covers (the cap is 3); six try at once.
    await setQuota(app.app.services, 'racer', Math.floor(size * 2.5));
    const fids = await Promise.all(Array.from({ length: 6 }, (_, i) => addSharedFile(session, `race ${i}.bin`)));
    const answers = await Promise.all(fids.map((fid, i) => upload(fid, images.jpeg, i % 2 === 0 ? 'post' : 'soap11', session)));
    expect(answers.filter((answer) => answer.startsWith('http'))).toHaveLength(2);
    expect(answers.filter((answer) => answer.startsWith('ERROR 413 '))).toHaveLength(4);
    expect(await usedBytes(id)).toBe(2 * size);
  });
});

describe('covers per account (FSS_MAX_COVER_IMAGES, 3 here)', () => {
  it('a cover beyond the cap is 413; replacing one is not; after an Unshare there is room again', async () => {
    const { id, session } = await newAccount('capped', 100 * MiB);
    const fids = await Promise.all([0, 1, 2, 3].map((i) => addSharedFile(session, `capped ${i}.bin`)));
    for (const fid of fids.slice(0, 3)) expect(await upload(fid, images.png, 'post', session)).toMatch(/^http/);
    const before = await snapshot(id);
    expect(await upload(fids[3], images.png, 'post', session)).toMatch(/^ERROR 413 /);
    expect(await snapshot(id)).toEqual(before);
    expect(await upload(fids[0], images.jpeg, 'post', session)).toMatch(/^http/);
    await callSigned(app, 'post', Unshare, session, { dirids: '', fids: String(fids[1]) });
    expect(await upload(fids[3], images.png, 'post', session)).toMatch(/^http/);
  });

  it('concurrent uploads never pass the cap', async () => {
    const { id, session } = await newAccount('crowd', 100 * MiB);
    const fids = await Promise.all(Array.from({ length: 8 }, (_, i) => addSharedFile(session, `crowd ${i}.bin`)));
    const answers = await Promise.all(fids.map((fid) => upload(fid, images.png, 'post', session)));
    expect(answers.filter((answer) => answer.startsWith('http'))).toHaveLength(3);
    const covers = await app.app.services.db.selectFrom('shares').select('id').where('account_id', '=', id).where('image_key', 'is not', null).execute();
    expect(covers).toHaveLength(3);
  });
});
