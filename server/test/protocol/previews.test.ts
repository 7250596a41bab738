/**
 * FilePreview, SharePreview and the /v/ route over HTTP on loopback (docs/security.md "Safe
 * serving"): each allowlisted kind typed from its bytes, Range on a video, lying extensions refused
 * with 415, the safety headers on every answer, the grant rules of /d/, encrypted files, and what a
 * share visitor's previews do to the share's download limit.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, type OperationSpec, type ServiceName } from '../../src/catalog/operations';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { callInForm, resultXml, type Value } from '../helpers/requests';
import { insertTestFile, storeTestContent } from '../helpers/stored-files';
import { addFolder } from '../helpers/tree';

const op = (service: ServiceName, name: string): OperationSpec => findOperation(service, name)!;
const FilePreview = op('FileService', 'FilePreview');
const FileDownload = op('FileService', 'FileDownload');
const FileShare = op('FileService', 'FileShare');
const FileEncrypt = op('FileService', 'FileEncrypt');
const Unlock = op('FileService', 'Unlock');
const Logout = op('OAuthService', 'Logout');
const SharePreview = op('ShareService', 'SharePreview');
const ShareOpen = op('ShareService', 'ShareOpen');

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const bytesOf = (...parts: Array<string | number[] | Buffer>) =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))));
/** An ISO media file's opening: the ftyp box with a major brand and compatible brands, then some payload. */
const ftyp = (major: string, ...compatible: string[]) => {
  const box = bytesOf([0, 0, 0, 16 + 4 * compatible.length], 'ftyp', major, [0, 0, 0, 0], ...compatible);
  return bytesOf(box, [0, 0, 0, 8], 'free', Buffer.alloc(4096, 7));
};
/** A 2×2 24-bit BMP: file header, BITMAPINFOHEADER, pixel rows padded to 4 bytes. */
function bmp(): Buffer {
  const header = Buffer.alloc(54);
  header.write('BM', 0, 'latin1');
  header.writeUInt32LE(54 + 16, 2);
  header.writeUInt32LE(54, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(2, 18);
  header.writeInt32LE(2, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(24, 28);
  return Buffer.concat([header, Buffer.alloc(16, 0x80)]);
}

let app: TestApp;
let alice: Session;
let bob: Session;
const samples: Record<string, Buffer> = {};

beforeAll(async () => {
  app = await startTestApp();
  await addAccount(app, 'alice', 'alice-password-1');
  await addAccount(app, 'bob', 'bob-password-1');
  alice = await logIn(app, 'post', 'alice', 'alice-password-1');
  bob = await logIn(app, 'post', 'bob', 'bob-password-1');
  const tiny = sharp({ create: { width: 4, height: 3, channels: 3, background: '#3a7' } });
  Object.assign(samples, {
    'photo.jpg': await tiny.clone().jpeg().toBuffer(),
    'diagram.png': await tiny.clone().png().toBuffer(),
    'loop.gif': await tiny.clone().gif().toBuffer(),
    'picture.webp': await tiny.clone().webp().toBuffer(),
    'picture.avif': await tiny.clone().avif().toBuffer(),
    'scan.bmp': bmp(),
    'clip.mp4': ftyp('isom', 'isom', 'iso2', 'avc1', 'mp41'),
    'song.m4a': ftyp('M4A ', 'M4A ', 'mp42', 'isom'),
    'clip.webm': bytesOf([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84], 'webm', Buffer.alloc(512, 1)),
    'song.mp3': bytesOf('ID3', [4, 0, 0, 0, 0, 0, 0], Buffer.alloc(512, 0x55)),
    'frames.mp3': bytesOf([0xff, 0xfb, 0x90, 0x64], Buffer.alloc(512, 0x55)),
    'song.aac': bytesOf([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc], Buffer.alloc(512, 0x21)),
    'song.ogg': bytesOf('OggS', [0, 2], Buffer.alloc(512, 3)),
    'sound.wav': bytesOf('RIFF', [0x24, 0, 0, 0], 'WAVEfmt ', Buffer.alloc(512, 0)),
    'sound.flac': bytesOf('fLaC', [0, 0, 0, 0x22], Buffer.alloc(512, 9)),
    'paper.pdf': bytesOf('%PDF-1.7\n%âãÏÓ\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n'),
    'notes.txt': bytesOf('plain notes\nsecond line\n'),
    'readme.md': bytesOf('# Title\n\n<script>alert(1)</script>\n'),
    'page.html': bytesOf('<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>'),
    'feed.xml': bytesOf('<?xml version="1.0"?><rss/>'),
  });
});
afterAll(() => app.close());

const EXPECTED_TYPES: Record<string, string> = {
  'photo.jpg': 'image/jpeg',
  'diagram.png': 'image/png',
  'loop.gif': 'image/gif',
  'picture.webp': 'image/webp',
  'picture.avif': 'image/avif',
  'scan.bmp': 'image/bmp',
  'clip.mp4': 'video/mp4',
  'song.m4a': 'audio/mp4',
  'clip.webm': 'video/webm',
  'song.mp3': 'audio/mpeg',
  'frames.mp3': 'audio/mpeg',
  'song.aac': 'audio/aac',
  'song.ogg': 'audio/ogg',
  'sound.wav': 'audio/wav',
  'sound.flac': 'audio/flac',
  'paper.pdf': 'application/pdf',
  'notes.txt': 'text/plain',
  'readme.md': 'text/plain',
  'page.html': 'text/plain',
  'feed.xml': 'text/plain',
};

let folders = 0;

/** A file of the account, in a folder of its own (names repeat across tests). */
async function addStoredFile(accountId: number, name: string, bytes: Buffer): Promise<number> {
  const services = app.app.services;
  const folder = await addFolder(services, accountId, 0, `f${++folders}`);
  const existing = await services.db.selectFrom('content').select(['id', 'size']).where('sha256', '=', sha256(bytes)).where('encrypted', '=', 0).executeTakeFirst();
  const content = existing ? { contentId: existing.id, size: existing.size } : await storeTestContent(services, bytes);
  return insertTestFile(services, { accountId, name, contentId: content.contentId, sha256: sha256(bytes), size: content.size, folderId: folder.id });
}

/** The <result> attributes of a call. */
async function signed(operation: OperationSpec, params: Record<string, Value>, session = alice): Promise<Record<string, string>> {
  const answer = await callSigned(app, 'post', operation, session, params);
  return element(resultXml(answer, operation), 'result')!.attrs;
}

async function anonymous(operation: OperationSpec, params: Record<string, Value>): Promise<Record<string, string>> {
  const answer = await callInForm(app.url, 'post', operation, params);
  const xml = resultXml(answer, operation);
  return element(xml, 'result')!.attrs;
}

async function previewUrl(fid: number, session = alice): Promise<string> {
  const result = await signed(FilePreview, { fid }, session);
  expect(result.code).toBe('0');
  return result.url;
}

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  const { pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    http
      .request(`${app.url}${pathname}`, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject)
      .end();
  });
}

function expectSafetyHeaders(answer: Answer): void {
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(answer.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
  expect(answer.headers['content-disposition']).toMatch(/^inline\b/);
  expect(answer.headers['cache-control']).toBe('private, no-cache');
}

async function preview(name: string, bytes = samples[name]): Promise<Answer> {
  return get(await previewUrl(await addStoredFile(alice.uid, name, bytes)));
}

describe('FilePreview', () => {
  it('returns an absolute URL /v/{token}/{name}, valid 4 hours (a long video is seeked through it), that carries no session token', async () => {
    const fid = await addStoredFile(alice.uid, 'notes.txt', samples['notes.txt']);
    const result = await signed(FilePreview, { fid });
    expect(result.code).toBe('0');
    expect(result.url).toMatch(new RegExp(`^${app.url}/v/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}/notes\\.txt$`));
    expect(result.url).not.toContain(alice.token);
    const lifetime = Date.parse(result.expires) - Date.now();
    expect(lifetime).toBeGreaterThan(4 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(4 * 3600_000 + 1000);
  });

  it('another account’s file and an unknown id get the not-found fault of FileDownload', async () => {
    const fid = await addStoredFile(alice.uid, 'notes.txt', samples['notes.txt']);
    expect((await signed(FilePreview, { fid }, bob)).code).toBe('404');
    expect((await signed(FileDownload, { fid }, bob)).code).toBe('404');
    expect((await signed(FilePreview, { fid: 987_654 })).code).toBe('404');
  });
});

describe('the preview URL', () => {
  it.each(Object.entries(EXPECTED_TYPES))('%s is served inline as %s, the bytes unchanged', async (name, type) => {
    const answer = await preview(name);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe(type);
    expect(answer.body.equals(samples[name])).toBe(true);
    expect(answer.headers.etag).toBe(`"${sha256(samples[name])}"`);
    expect(answer.headers['content-disposition']).toBe(`inline; filename="${name}"; filename*=UTF-8''${name}`);
    expectSafetyHeaders(answer);
  });

  it('Range on a video: 206 with the bytes asked for, from anywhere in the file (seeking)', async () => {
    const video = Buffer.concat([ftyp('mp42', 'isom', 'mp42'), Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251))]);
    const url = await previewUrl(await addStoredFile(alice.uid, 'long.mp4', video));
    for (const [start, end] of [[0, 1], [150_000, 160_000], [video.length - 10, video.length - 1]]) {
      const answer = await get(url, { Range: `bytes=${start}-${end}` });
      expect(answer.status).toBe(206);
      expect(answer.headers['content-type']).toBe('video/mp4');
      expect(answer.headers['content-range']).toBe(`bytes ${start}-${end}/${video.length}`);
      expect(answer.body.equals(video.subarray(start, end + 1))).toBe(true);
      expectSafetyHeaders(answer);
    }
  });

  it('a PNG that is really HTML: 415 with a short text, never the page', async () => {
    const answer = await preview('cat.png', samples['page.html']);
    expect(answer.status).toBe(415);
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.body.toString()).not.toContain('<script>');
    expectSafetyHeaders(answer);
  });

  it.each([
    ['a text file holding a PNG', 'secret.txt', 'diagram.png'],
    ['a PDF holding a video', 'paper.pdf', 'clip.mp4'],
    ['a video holding a PDF', 'clip.mp4', 'paper.pdf'],
    ['an image holding audio', 'photo.jpg', 'song.ogg'],
    ['an unknown extension', 'data.bin', 'notes.txt'],
    ['a text file with a NUL byte', 'binary.txt', 'nul'],
    ['an empty video', 'empty.mp4', 'empty'],
  ])('%s: 415', async (_, name, sample) => {
    const bytes = sample === 'nul' ? bytesOf('text\0more') : sample === 'empty' ? Buffer.alloc(0) : samples[sample];
    expect((await preview(name, bytes)).status).toBe(415);
  });

  it('an .html, .htm or .svg file never comes back as text/html or image/svg+xml', async () => {
    const svg = bytesOf('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    for (const [name, bytes] of [['page.html', samples['page.html']], ['page.htm', samples['page.html']], ['drawing.svg', svg], ['drawing.svg', samples['page.html']]] as const) {
      const answer = await preview(name, bytes);
      expect(answer.headers['content-type']).not.toMatch(/html|svg|xml/);
      expectSafetyHeaders(answer);
    }
  });

  it('an SVG is rasterised: the view rendition as image/webp, never the SVG', async () => {
    const svg = bytesOf('<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200"><rect width="300" height="200" fill="#c33"/></svg>');
    const answer = await preview('drawing.svg', svg);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('image/webp');
    expect(await sharp(answer.body).metadata()).toMatchObject({ format: 'webp', width: 300, height: 200 });
    expectSafetyHeaders(answer);
  });

  it('an image over 24 megapixels: the view rendition, at most 2048 px on the long edge; its ETag answers 304', async () => {
    const large = await sharp({ create: { width: 6200, height: 4000, channels: 3, background: '#2a6' } }).png().toBuffer();
    const url = await previewUrl(await addStoredFile(alice.uid, 'panorama.png', large));
    const answer = await get(url);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('image/webp');
    expect(await sharp(answer.body).metadata()).toMatchObject({ width: 2048, height: 1321 });
    expectSafetyHeaders(answer);
    const cached = await get(url, { 'If-None-Match': answer.headers.etag! });
    expect(cached.status).toBe(304);
    expectSafetyHeaders(cached);
  });

  it('HEAD, 304, 416 and the refusals carry the safety headers too', async () => {
    const url = await previewUrl(await addStoredFile(alice.uid, 'notes.txt', samples['notes.txt']));
    const head = await get(url, {}, 'HEAD');
    expect([head.status, head.headers['content-type'], head.body.length]).toEqual([200, 'text/plain', 0]);
    const cached = await get(url, { 'If-None-Match': `"${sha256(samples['notes.txt'])}"` });
    expect(cached.status).toBe(304);
    const beyond = await get(url, { Range: 'bytes=9999-' });
    expect(beyond.status).toBe(416);
    const forged = await get(url.replace(/\/v\/[^.]+/, '/v/eyJmIjoxfQ'));
    expect(forged.status).toBe(403);
    const posted = await get(url, {}, 'POST');
    expect(posted.status).toBe(405);
    for (const answer of [head, cached, beyond, forged]) expectSafetyHeaders(answer);
    expect(posted.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(posted.headers['x-content-type-options']).toBe('nosniff');
  });

  it('a /d/ token does not open /v/, and a /v/ token does not open /d/', async () => {
    const fid = await addStoredFile(alice.uid, 'notes.txt', samples['notes.txt']);
    const download = (await signed(FileDownload, { fid })).url;
    const previewLink = await previewUrl(fid);
    expect((await get(download.replace('/d/', '/v/'))).status).toBe(403);
    expect((await get(previewLink.replace('/v/', '/d/'))).status).toBe(403);
    expect((await get(download)).status).toBe(200);
  });

  it('a file moved to the bin or deleted since: 404', async () => {
    const fid = await addStoredFile(alice.uid, 'notes.txt', samples['notes.txt']);
    const url = await previewUrl(fid);
    await app.app.services.db.updateTable('files').set({ deleted_at: Date.now() }).where('id', '=', fid).execute();
    const answer = await get(url);
    expect(answer.status).toBe(404);
    expectSafetyHeaders(answer);
  });

  it('the request log names the route, never the token', async () => {
    const url = await previewUrl(await addStoredFile(alice.uid, 'notes.txt', samples['notes.txt']));
    await get(url);
    const token = new URL(url).pathname.split('/')[2];
    expect(app.logLines.some((line) => line.includes('"/v/…"'))).toBe(true);
    expect(app.logLines.some((line) => line.includes(token))).toBe(false);
  });
});

describe('encrypted files', () => {
  const PASSWORD = 'correct horse';

  it('locked: FilePreview gives the locked fault; unlocked: previewable, decrypted on the fly; after logout: 423', async () => {
    const session = await logIn(app, 'post', 'alice', 'alice-password-1');
    const fid = await addStoredFile(alice.uid, 'secret.pdf', samples['paper.pdf']);
    expect((await signed(FileEncrypt, { fid, password: PASSWORD, password_tip: '' }, session)).code).toBe('0');
    expect((await signed(FilePreview, { fid }, session)).code).toBe('423');
    expect((await signed(Unlock, { dirid: 0, fid, password: PASSWORD }, session)).code).toBe('0');
    const url = await previewUrl(fid, session);
    const answer = await get(url);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/pdf');
    expect(answer.body.equals(samples['paper.pdf'])).toBe(true);
    expect((await signed(Logout, {}, session)).code).toBe('0');
    expect((await get(url)).status).toBe(423);
  });

  it('an image too large to show as it is: 415, never a stored rendition of the plaintext', async () => {
    const session = await logIn(app, 'post', 'alice', 'alice-password-1');
    const large = await sharp({ create: { width: 6000, height: 5000, channels: 3, background: '#fff' } }).png().toBuffer();
    const fid = await addStoredFile(alice.uid, 'huge.png', large);
    await signed(FileEncrypt, { fid, password: PASSWORD, password_tip: '' }, session);
    await signed(Unlock, { dirid: 0, fid, password: PASSWORD }, session);
    expect((await get(await previewUrl(fid, session))).status).toBe(415);
  });
});

describe('SharePreview', () => {
  async function share(name: string, bytes: Buffer, downValue: number): Promise<{ code: string; fid: number }> {
    const fid = await addStoredFile(alice.uid, name, bytes);
    const answer = await callSigned(app, 'post', FileShare, alice, { fids: String(fid), downpwd: '', downValue, description: '' });
    const code = /<file [^>]*\bcode="([^"]+)"/.exec(resultXml(answer, FileShare))![1];
    return { code, fid };
  }
  /** The share's download count, as ShareOpen tells visitors. */
  async function downloadsOf(code: string): Promise<number> {
    const xml = resultXml(await callInForm(app.url, 'post', ShareOpen, { code, downpwd: '' }), ShareOpen);
    return Number(/\bdownloads="(\d+)"/.exec(xml)![1]);
  }
  const sharePreview = (code: string, fid: number) => anonymous(SharePreview, { code, downpwd: '', fid });

  it('a PDF: counted once per URL against the limit; once the limit is reached, refused as ShareDownload refuses', async () => {
    const { code, fid } = await share('shared.pdf', samples['paper.pdf'], 1);
    const first = await sharePreview(code, fid);
    expect(first.code).toBe('0');
    const answer = await get(first.url);
    expect([answer.status, answer.headers['content-type']]).toEqual([200, 'application/pdf']);
    expect(await downloadsOf(code)).toBe(1);
    expect(await sharePreview(code, fid)).toMatchObject({ code: '403', reason: 'download-limit' });
  });

  it('an image: the view rendition (image/webp), never the original, and the download count unchanged', async () => {
    const photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#a52' } }).jpeg().toBuffer();
    const { code, fid } = await share('holiday.jpg', photo, 1);
    for (let i = 0; i < 3; i++) {
      const result = await sharePreview(code, fid);
      expect(result.code).toBe('0');
      const answer = await get(result.url);
      expect([answer.status, answer.headers['content-type']]).toEqual([200, 'image/webp']);
      expect(answer.body.equals(photo)).toBe(false);
    }
    expect(await downloadsOf(code)).toBe(0);
  });

  it('an image that is really a PDF: not counted, and 415 rather than the PDF', async () => {
    const { code, fid } = await share('fake.jpg', samples['paper.pdf'], 1);
    const result = await sharePreview(code, fid);
    expect((await get(result.url)).status).toBe(415);
    expect(await downloadsOf(code)).toBe(0);
  });

  it('an unknown share code or a file outside the share: the not-found fault', async () => {
    const { code } = await share('shared.txt', samples['notes.txt'], 0);
    const other = await addStoredFile(alice.uid, 'other.txt', samples['notes.txt']);
    expect((await sharePreview(code, other)).code).toBe('404');
    expect((await sharePreview('AAAAAAAA', other)).code).toBe('404');
  });
});
