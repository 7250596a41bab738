/**
 * ThumbnailBase, ShareThumbnailBase and the /t/ route through the whole service over HTTP (real
 * images made with sharp, PDFs written by hand; content on the local disk, or S3 in the "s3" project):
 * the image and its headers, 304, who may see which thumbnail, expiry, bad images and PDFs, a full
 * queue, and the request log.
 */
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation } from '../../src/catalog/operations';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { pagePdf } from '../helpers/pdfs';
import { callInForm, resultXml } from '../helpers/requests';
import { insertTestFile, storeTestContent } from '../helpers/stored-files';
import { addFolder } from '../helpers/tree';

const ThumbnailBase = findOperation('FileService', 'ThumbnailBase')!;
const ShareThumbnailBase = findOperation('ShareService', 'ShareThumbnailBase')!;
const FolderShare = findOperation('FileService', 'FolderShare')!;
const Unshare = findOperation('FileService', 'Unshare')!;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let app: TestApp;
let aliceId: number;
let bobId: number;
let alice: Session;
let bob: Session;

beforeAll(async () => {
  app = await startTestApp();
  aliceId = await addAccount(app, 'alice', 'alice-password-1');
  bobId = await addAccount(app, 'bob', 'bob-password-1');
  alice = await logIn(app, 'post', 'alice', 'alice-password-1');
  bob = await logIn(app, 'post', 'bob', 'bob-password-1');
});
afterAll(() => app.close());

const photo = (width: number, height: number, colour = 'orange') =>
  sharp({ create: { width, height, channels: 3, background: colour } })
    .jpeg()
    .toBuffer();

async function addImage(accountId: number, name: string, bytes: Buffer, folderId = 0): Promise<number> {
  const services = app.app.services;
  const existing = await services.db.selectFrom('content').select(['id', 'size']).where('sha256', '=', sha256(bytes)).executeTakeFirst();
  const content = existing ? { contentId: existing.id, size: existing.size } : await storeTestContent(services, bytes);
  return insertTestFile(services, { accountId, name, contentId: content.contentId, sha256: sha256(bytes), size: content.size, folderId });
}

function resultOf(xml: string): Record<string, string> {
  const match = /<result((?:\s+[\w:]+="[^"]*")*)\s*\/?>/.exec(xml);
  return element(`<result${match![1]}/>`, 'result')!.attrs;
}

async function prefixOf(session: Session): Promise<string> {
  const result = resultOf(resultXml(await callSigned(app, 'post', ThumbnailBase, session, {}), ThumbnailBase));
  expect(result.code).toBe('0');
  return result.url;
}

async function sharePrefix(code: string, downpwd: string): Promise<Record<string, string>> {
  return resultOf(resultXml(await callInForm(app.url, 'post', ShareThumbnailBase, { code, downpwd }), ShareThumbnailBase));
}

async function shareFolder(folderId: number, downpwd: string): Promise<string> {
  const xml = resultXml(await callSigned(app, 'post', FolderShare, alice, { dirids: String(folderId), downpwd, downValue: 0, description: '' }), FolderShare);
  return element(xml, 'folder')!.attrs.code;
}

async function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await fetch(url, { method, headers });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) };
}

describe('thumbnails of an owner', () => {
  it('ThumbnailBase answers {base}/t/{key}/, valid until the end of the next UTC day', async () => {
    const result = resultOf(resultXml(await callSigned(app, 'post', ThumbnailBase, alice, {}), ThumbnailBase));
    expect(result.url).toMatch(new RegExp(`^${app.url}/t/[^/]+/$`));
    const expires = new Date(result.expires).getTime();
    const midnight = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    expect(expires).toBe(midnight + 2 * 24 * 3600_000);
  });

  it('serves a WebP that fits the box, with caching headers, nosniff and the sandbox; If-None-Match → 304', async () => {
    const bytes = await photo(1000, 500);
    const fid = await addImage(aliceId, 'wide.jpg', bytes);
    const url = `${await prefixOf(alice)}${fid}/large`;
    const answer = await get(url);
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({
      'content-type': 'image/webp',
      'cache-control': 'private, max-age=86400',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      etag: `"${sha256(bytes)}-large"`,
      'content-length': String(answer.body.length),
    });
    expect(await sharp(answer.body).metadata()).toMatchObject({ format: 'webp', width: 384, height: 192 });
    expect((await get(`${await prefixOf(alice)}${fid}/small`)).headers.etag).toBe(`"${sha256(bytes)}-small"`);

    const again = await get(url, { 'If-None-Match': answer.headers.etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const head = await get(url, {}, 'HEAD');
    expect([head.status, head.headers['content-length'], head.body.length]).toEqual([200, String(answer.body.length), 0]);
  });

  it("a PDF's thumbnail is its first page, served like an image's", async () => {
    const bytes = pagePdf({ mediaBox: [300, 600], rgb: [1, 0, 0] });
    const fid = await addImage(aliceId, 'letter.pdf', bytes);
    const answer = await get(`${await prefixOf(alice)}${fid}/large`);
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({ 'content-type': 'image/webp', 'cache-control': 'private, max-age=86400', etag: `"${sha256(bytes)}-large"` });
    const { data, info } = await sharp(answer.body).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([192, 384]);
    expect(data[0]).toBeGreaterThan(230);
    expect(data[2]).toBeLessThan(25);
  });

  it('two files with the same content share one stored thumbnail', async () => {
    const bytes = await photo(300, 300, 'purple');
    const first = await addImage(aliceId, 'one.jpg', bytes);
    const second = await addImage(bobId, 'two.jpg', bytes);
    const a = await get(`${await prefixOf(alice)}${first}/small`);
    const b = await get(`${await prefixOf(bob)}${second}/small`);
    expect(b.body.equals(a.body)).toBe(true);
    const keys: string[] = [];
    const { contentStoreFor } = await import('../../src/storage/content/stores');
    for await (const key of contentStoreFor(app.config).listDerivedKeys(sha256(bytes))) keys.push(key);
    expect(keys).toHaveLength(1);
  });

  it("another account's file, a binned file, an unknown id or variant → 404", async () => {
    const bytes = await photo(64, 64, 'green');
    const bobs = await addImage(bobId, 'bobs.jpg', bytes);
    const prefix = await prefixOf(alice);
    expect((await get(`${prefix}${bobs}/small`)).status).toBe(404);
    const binned = await insertTestFile(app.app.services, { accountId: aliceId, name: 'b.jpg', contentId: (await storeTestContent(app.app.services, await photo(65, 65))).contentId, sha256: 'x', size: 1, deletedAt: 1 });
    expect((await get(`${prefix}${binned}/small`)).status).toBe(404);
    expect((await get(`${prefix}99999999/small`)).status).toBe(404);
    expect((await get(`${prefix}${bobs}/huge`)).status).toBe(404);
  });

  it('a key that is not genuine → 403; an expired one → 410', async () => {
    const fid = await addImage(aliceId, 'k.jpg', await photo(50, 50, 'navy'));
    const prefix = await prefixOf(alice);
    const key = prefix.split('/').at(-2)!;
    const forged = key.replace(/^u\d+/, `u${bobId}`);
    expect((await get(`${app.url}/t/${forged}/${fid}/small`)).status).toBe(403);
    expect((await get(`${app.url}/t/nonsense/${fid}/small`)).status).toBe(403);
    const realNow = app.app.services.now;
    Object.assign(app.app.services, { now: () => new Date(Date.now() + 3 * 24 * 3600_000) });
    try {
      expect((await get(`${prefix}${fid}/small`)).status).toBe(410);
    } finally {
      Object.assign(app.app.services, { now: realNow });
    }
  });

  it('the request log names the route only, never the key', async () => {
    const fid = await addImage(aliceId, 'log.jpg', await photo(40, 40, 'teal'));
    const prefix = await prefixOf(alice);
    await get(`${prefix}${fid}/small`);
    const key = prefix.split('/').at(-2)!;
    expect(app.logLines.some((line) => line.includes('"path":"/t/…"'))).toBe(true);
    expect(app.logLines.some((line) => line.includes(key))).toBe(false);
  });
});

describe('thumbnails of a share visitor', () => {
  it('work inside the share only, and stop when the code changes or the share ends', async () => {
    const folder = await addFolder(app.app.services, aliceId, 0, 'Holiday');
    const inside = await addImage(aliceId, 'beach.jpg', await photo(200, 100, 'yellow'), folder.id);
    const outside = await addImage(aliceId, 'private.jpg', await photo(200, 100, 'black'));
    const code = await shareFolder(folder.id, 'sesame');

    expect(await sharePrefix(code, '')).toMatchObject({ code: '403', reason: 'downpwd-required' });
    expect(await sharePrefix(code, 'wrong')).toMatchObject({ code: '403', reason: 'downpwd-wrong' });
    const prefix = (await sharePrefix(code, 'sesame')).url;
    expect((await get(`${prefix}${inside}/small`)).status).toBe(200);
    expect((await get(`${prefix}${outside}/small`)).status).toBe(404);

    await shareFolder(folder.id, 'another');
    expect((await get(`${prefix}${inside}/small`)).status).toBe(404);
    const renewed = (await sharePrefix(code, 'another')).url;
    expect((await get(`${renewed}${inside}/small`)).status).toBe(200);

    await callSigned(app, 'post', Unshare, alice, { dirids: String(folder.id), fids: '' });
    expect((await get(`${renewed}${inside}/small`)).status).toBe(404);
  });
});

describe('bad images and PDFs', () => {
  const truncatedJpeg = async () => (await photo(900, 700, 'red')).subarray(0, 2000);
  const bomb = () => {
    // 20,000 × 20,000 (400 MP) declared in the header, a few KB of file: refused before decoding.
    return sharp({ create: { width: 200, height: 200, channels: 3, background: 'white' } })
      .png()
      .toBuffer()
      .then((png) => {
        const patched = Buffer.from(png);
        patched.writeUInt32BE(20_000, 16);
        patched.writeUInt32BE(20_000, 20);
        const crc = patched.subarray(12, 29);
        patched.writeUInt32BE(crc32(crc), 29);
        return patched;
      });
  };
  const cases: Array<[string, string, () => Promise<Buffer> | Buffer]> = [
    ['a truncated JPEG', 'cut.jpg', truncatedJpeg],
    ['a 20,000 × 20,000 PNG of a few KB', 'bomb.png', bomb],
    ['a .png that is HTML', 'page.png', () => Buffer.from('<html><body><script>alert(1)</script></body></html>')],
    ['an SVG with a script', 'evil.svg', () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"><script>alert(1)</script></svg>')],
    ['a truncated PDF', 'cut.pdf', () => pagePdf().subarray(0, 300)],
    ['a password-protected PDF', 'locked.pdf', () => pagePdf({ userPassword: 'secret' })],
  ];
  for (const [what, name, bytes] of cases) {
    it(`${what} → 404 and a log line; the service still answers`, async () => {
      const data = await bytes();
      const fid = await addImage(aliceId, name, data);
      const prefix = await prefixOf(alice);
      expect((await get(`${prefix}${fid}/large`)).status).toBe(404);
      expect(app.logLines.some((line) => line.includes('"level":"warn"') && line.includes(sha256(data)))).toBe(true);
      const good = await addImage(aliceId, `fine-${name}.jpg`, await photo(30, 20, '#123456'));
      expect((await get(`${prefix}${good}/small`)).status).toBe(200);
    });
  }
});

describe('a full queue', () => {
  it('answers 503 with Retry-After: 1 rather than waiting', async () => {
    const busy = await startTestApp({ FSS_IMAGE_MAKERS: '1', FSS_IMAGE_QUEUE: '0' });
    try {
      const owner = await addAccount(busy, 'carol', 'carol-password-1');
      const session = await logIn(busy, 'post', 'carol', 'carol-password-1');
      const fids: number[] = [];
      for (let i = 0; i < 4; i++) {
        const pixels = Buffer.alloc(1600 * 1200 * 3, i * 40 + 7);
        for (let j = 0; j < pixels.length; j += 7) pixels[j] = (j * 31 + i) & 255;
        const bytes = await sharp(pixels, { raw: { width: 1600, height: 1200, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
        const content = await storeTestContent(busy.app.services, bytes);
        fids.push(await insertTestFile(busy.app.services, { accountId: owner, name: `n${i}.jpg`, ...content }));
      }
      const prefix = resultOf(resultXml(await callSigned(busy, 'post', ThumbnailBase, session, {}), ThumbnailBase)).url;
      const answers = await Promise.all(fids.map((fid) => get(`${prefix}${fid}/large`)));
      const refused = answers.filter((a) => a.status === 503);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.every((a) => a.headers['retry-after'] === '1')).toBe(true);
      expect(answers.every((a) => a.status === 200 || a.status === 503)).toBe(true);
    } finally {
      await busy.close();
    }
  });
});
