/**
 * FileDownload and the signed /d/ URLs, against the whole service over HTTP: Range, HEAD, ETag,
 * Content-Disposition, refusals; and that 200 MiB go up and come down in constant memory.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signDownloadToken } from '../../src/operations/content/downloads';
import { claimContent } from '../../src/operations/content/uploads';
import { chooseRange, contentDisposition, contentTypeOf } from '../../src/protocol/files/downloads';
import { contentStoreFor } from '../../src/storage/content/stores';
import { addAccount, callSigned, element, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { callInForm, ops, resultXml, send, type HttpAnswer } from '../helpers/requests';
import { insertTestFile, storeTestContent } from '../helpers/stored-files';

const { Login, FileDownload } = ops;
const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

let app: TestApp;
let alice: Session;
let bob: Session;

const TEXT = '0123456789abcdefghijklmnopqrstuvwxyz';
let textFile: number;

async function login(name: string, password: string): Promise<Session> {
  const answer = await callInForm(app.url, 'post', Login, { uid: name, pwd: password });
  const token = element(resultXml(answer, Login), 'token')!;
  return { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key };
}

async function addFile(owner: Session, name: string, bytes: string | Buffer, extra: { deletedAt?: number; binnedUnder?: number } = {}): Promise<number> {
  const services = app.app.services;
  const existing = await services.db.selectFrom('content').select(['id', 'size']).where('sha256', '=', sha256(bytes)).executeTakeFirst();
  const content = existing ? { contentId: existing.id, size: existing.size } : await storeTestContent(services, bytes);
  return insertTestFile(services, { accountId: owner.uid, name, contentId: content.contentId, sha256: sha256(bytes), size: content.size, ...extra });
}

async function fileDownload(session: Session, fid: number): Promise<{ code: string; url: string; expires: string; msg: string }> {
  const answer = await callSigned(app, 'post', FileDownload, session, { fid });
  const result = element(resultXml(answer, FileDownload), 'result')!;
  return { code: result.attrs.code, url: result.attrs.url, expires: result.attrs.expires, msg: result.attrs.msg };
}

async function urlOf(fid: number, session = alice): Promise<string> {
  const result = await fileDownload(session, fid);
  expect(result.code).toBe('0');
  return result.url;
}

const get = (url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<HttpAnswer> => {
  const { pathname, search } = new URL(url);
  return send(app.url, method, pathname + search, headers);
};

beforeAll(async () => {
  app = await startTestApp();
  await addAccount(app, 'alice', 'alice-password-1');
  await addAccount(app, 'bob', 'bob-password-1');
  alice = await login('alice', 'alice-password-1');
  bob = await login('bob', 'bob-password-1');
  textFile = await addFile(alice, 'alphabet.txt', TEXT);
});
afterAll(() => app.close());

describe('FileDownload', () => {
  it('returns a short-lived absolute URL /d/{token}/{name} that carries no session token', async () => {
    const before = Date.now();
    const result = await fileDownload(alice, textFile);
    expect(result.code).toBe('0');
    expect(result.url).toMatch(new RegExp(`^${app.url}/d/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}/alphabet\\.txt$`));
    expect(result.url).not.toContain(alice.token);
    const lifetime = Date.parse(result.expires) - before;
    expect(lifetime).toBeGreaterThan(9 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(10 * 60_000 + 1000);
  });

  it('encodes the name in the URL', async () => {
    const fid = await addFile(alice, '报告 #1.txt', 'report');
    expect(await urlOf(fid)).toMatch(/\/%E6%8A%A5%E5%91%8A%20%231\.txt$/);
  });

  it('another account’s file, a file in the bin and an unknown id are all 404', async () => {
    expect((await fileDownload(bob, textFile)).code).toBe('404');
    const binned = await addFile(alice, 'binned.txt', 'in the bin', { deletedAt: Date.now() });
    expect((await fileDownload(alice, binned)).code).toBe('404');
    const beneath = await addFile(alice, 'beneath.txt', 'beneath a binned folder', { binnedUnder: 12345 });
    expect((await fileDownload(alice, beneath)).code).toBe('404');
    expect((await fileDownload(alice, 999_999)).code).toBe('404');
  });
});

describe('the download URL', () => {
  it('serves the whole file with its validators, type, disposition and safety headers', async () => {
    const answer = await get(await urlOf(textFile));
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(TEXT);
    expect(answer.headers['content-length']).toBe(String(TEXT.length));
    expect(answer.headers['etag']).toBe(`"${sha256(TEXT)}"`);
    expect(answer.headers['accept-ranges']).toBe('bytes');
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.headers['content-disposition']).toBe(`attachment; filename="alphabet.txt"; filename*=UTF-8''alphabet.txt`);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['cache-control']).toMatch(/^private\b/);
  });

  it('Range: the first byte', async () => {
    const answer = await get(await urlOf(textFile), { Range: 'bytes=0-0' });
    expect(answer.status).toBe(206);
    expect(answer.body).toBe('0');
    expect(answer.headers['content-range']).toBe(`bytes 0-0/${TEXT.length}`);
    expect(answer.headers['content-length']).toBe('1');
  });

  it('Range: the last byte, by position and by suffix', async () => {
    const url = await urlOf(textFile);
    const last = TEXT.length - 1;
    for (const range of [`bytes=${last}-${last}`, 'bytes=-1', `bytes=${last}-`]) {
      const answer = await get(url, { Range: range });
      expect(answer.status).toBe(206);
      expect(answer.body).toBe('z');
      expect(answer.headers['content-range']).toBe(`bytes ${last}-${last}/${TEXT.length}`);
    }
  });

  it('Range: a suffix of N bytes, and one longer than the file', async () => {
    const url = await urlOf(textFile);
    const five = await get(url, { Range: 'bytes=-5' });
    expect(five.status).toBe(206);
    expect(five.body).toBe('vwxyz');
    expect(five.headers['content-range']).toBe(`bytes ${TEXT.length - 5}-${TEXT.length - 1}/${TEXT.length}`);
    const all = await get(url, { Range: 'bytes=-1000' });
    expect(all.status).toBe(206);
    expect(all.body).toBe(TEXT);
  });

  it('Range: a middle part, and an end past the file is cut at the file’s end', async () => {
    const url = await urlOf(textFile);
    expect((await get(url, { Range: 'bytes=10-15' })).body).toBe('abcdef');
    const past = await get(url, { Range: 'bytes=30-999' });
    expect(past.status).toBe(206);
    expect(past.body).toBe('uvwxyz');
    expect(past.headers['content-range']).toBe(`bytes 30-35/${TEXT.length}`);
  });

  it('Range: a start past the end is 416 with Content-Range bytes */size', async () => {
    const url = await urlOf(textFile);
    for (const range of [`bytes=${TEXT.length}-`, 'bytes=1000-2000', 'bytes=-0']) {
      const answer = await get(url, { Range: range });
      expect(answer.status).toBe(416);
      expect(answer.headers['content-range']).toBe(`bytes */${TEXT.length}`);
    }
  });

  it('several ranges are answered with the whole file (200), as documented', async () => {
    const answer = await get(await urlOf(textFile), { Range: 'bytes=0-1,4-5' });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(TEXT);
    expect(answer.headers['content-range']).toBeUndefined();
  });

  it('a malformed Range, or another unit, is ignored', async () => {
    const url = await urlOf(textFile);
    for (const range of ['bytes=5-2', 'bytes=abc', 'items=0-1', 'bytes=']) {
      const answer = await get(url, { Range: range });
      expect(answer.status).toBe(200);
      expect(answer.body).toBe(TEXT);
    }
  });

  it('HEAD answers the headers of GET without the body', async () => {
    const url = await urlOf(textFile);
    const whole = await get(url, {}, 'HEAD');
    expect(whole.status).toBe(200);
    expect(whole.body).toBe('');
    expect(whole.headers['content-length']).toBe(String(TEXT.length));
    expect(whole.headers['etag']).toBe(`"${sha256(TEXT)}"`);
    const part = await get(url, { Range: 'bytes=0-9' }, 'HEAD');
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 0-9/${TEXT.length}`);
    expect(part.body).toBe('');
  });

  it('If-None-Match with the ETag is 304 without a body; another tag is a full answer', async () => {
    const url = await urlOf(textFile);
    const etag = `"${sha256(TEXT)}"`;
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const answer = await get(url, { 'If-None-Match': tag });
      expect(answer.status).toBe(304);
      expect(answer.body).toBe('');
      expect(answer.headers['etag']).toBe(etag);
    }
    expect((await get(url, { 'If-None-Match': '"other"' })).status).toBe(200);
  });

  it('If-Range: the current ETag keeps the Range; another tag or a date gets the whole file', async () => {
    const url = await urlOf(textFile);
    const etag = `"${sha256(TEXT)}"`;
    expect((await get(url, { Range: 'bytes=0-0', 'If-Range': etag })).status).toBe(206);
    const stale = await get(url, { Range: 'bytes=0-0', 'If-Range': '"stale"' });
    expect(stale.status).toBe(200);
    expect(stale.body).toBe(TEXT);
    expect((await get(url, { Range: 'bytes=0-0', 'If-Range': new Date().toUTCString() })).status).toBe(200);
  });

  it('a Chinese name: an ASCII fallback and the UTF-8 name (RFC 6266 filename*)', async () => {
    const fid = await addFile(alice, '年度报告.pdf', 'pdf bytes');
    const answer = await get(await urlOf(fid));
    expect(answer.headers['content-disposition']).toBe(`attachment; filename="____.pdf"; filename*=UTF-8''%E5%B9%B4%E5%BA%A6%E6%8A%A5%E5%91%8A.pdf`);
    expect(answer.headers['content-type']).toBe('application/pdf');
  });

  it('an unknown extension is application/octet-stream', async () => {
    const fid = await addFile(alice, 'data.weird', 'weird');
    expect((await get(await urlOf(fid))).headers['content-type']).toBe('application/octet-stream');
  });

  it('an empty file is 200 with no bytes; any range of it is 416', async () => {
    const fid = await addFile(alice, 'empty.txt', '');
    const url = await urlOf(fid);
    const answer = await get(url);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-length']).toBe('0');
    expect((await get(url, { Range: 'bytes=0-' })).status).toBe(416);
  });

  it('an expired URL is refused with 410', async () => {
    const content = await app.app.services.db.selectFrom('files').select('content_id').where('id', '=', textFile).executeTakeFirstOrThrow();
    const token = signDownloadToken(app.app.services.secret, {
      fileId: textFile,
      accountId: alice.uid,
      contentId: content.content_id,
      expires: new Date(Date.now() - 1000),
    });
    const answer = await get(`${app.url}/d/${token}/alphabet.txt`);
    expect(answer.status).toBe(410);
    expect(answer.body).toMatch(/expired/);
  });

  it('a tampered URL is refused with 403: another file id, a changed signature, garbage, another secret', async () => {
    const url = await urlOf(textFile);
    const [, , , , token, name] = url.split('/');
    const [payload, signature] = token.split('.');
    const fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const otherFile = Buffer.from(JSON.stringify({ ...fields, f: fields.f + 1 })).toString('base64url');
    const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1);
    const foreign = signDownloadToken(randomBytes(32), { fileId: textFile, accountId: alice.uid, contentId: fields.c, expires: new Date(Date.now() + 60_000) });
    for (const bad of [`${otherFile}.${signature}`, `${payload}.${flipped}`, 'garbage', `${payload}.`, foreign]) {
      const answer = await get(`${app.url}/d/${bad}/${name}`);
      expect(answer.status).toBe(403);
    }
    // The name segment is not part of the grant: another name still serves the same file.
    expect((await get(`${app.url}/d/${token}/other-name.bin`)).body).toBe(TEXT);
  });

  it('a file moved to the bin after the URL was issued is 404', async () => {
    const fid = await addFile(alice, 'soon-binned.txt', 'soon binned');
    const url = await urlOf(fid);
    expect((await get(url)).status).toBe(200);
    await app.app.services.db.updateTable('files').set({ deleted_at: Date.now() }).where('id', '=', fid).execute();
    expect((await get(url)).status).toBe(404);
    expect((await get(url, {}, 'HEAD')).status).toBe(404);
  });

  it('a URL stops working when the file’s content changes (say, it was encrypted since)', async () => {
    const fid = await addFile(alice, 'changing.txt', 'before');
    const url = await urlOf(fid);
    const other = await storeTestContent(app.app.services, 'after');
    await app.app.services.db.updateTable('files').set({ content_id: other.contentId, sha256: other.sha256 }).where('id', '=', fid).execute();
    expect((await get(url)).status).toBe(404);
  });

  it('an encrypted file is not handed out as a URL: 423', async () => {
    const { services } = app.app;
    const content = await services.db
      .insertInto('content')
      .values({ sha256: sha256('secret'), size: 40, storage_key: 'ab/cd/unused', encrypted: 1, created_at: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const fid = await insertTestFile(services, { accountId: alice.uid, name: 'secret.txt', contentId: content.id, sha256: sha256('secret'), size: 6 });
    await services.db.updateTable('files').set({ encrypted: 1 }).where('id', '=', fid).execute();
    expect((await fileDownload(alice, fid)).code).toBe('423');
  });

  it('a blob missing from the store is a server fault with an incident id, not a half-sent answer', async () => {
    const { services } = app.app;
    const content = await storeTestContent(services, 'vanishing bytes');
    const fid = await insertTestFile(services, { accountId: alice.uid, name: 'vanishing.txt', ...content });
    await contentStoreFor(services.config).delete(content.key);
    const answer = await get(await urlOf(fid));
    expect(answer.status).toBe(500);
    expect(answer.body).toMatch(/incident [0-9a-f]+/);
  });

  it('only GET and HEAD are allowed', async () => {
    const answer = await get(await urlOf(textFile), {}, 'POST');
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
  });

  it('the token is kept out of the request log', async () => {
    const url = await urlOf(textFile);
    await get(url);
    const token = url.split('/')[4];
    expect(app.logLines.join('\n')).not.toContain(token);
  });
});

describe('ranges, dispositions and types (units)', () => {
  it('chooseRange follows RFC 9110 for one range', () => {
    expect(chooseRange(undefined, 10)).toEqual({ kind: 'whole' });
    expect(chooseRange('bytes=0-0', 10)).toEqual({ kind: 'part', start: 0, end: 0 });
    expect(chooseRange('BYTES = 2 - 4', 10)).toEqual({ kind: 'part', start: 2, end: 4 });
    expect(chooseRange('bytes=-3', 10)).toEqual({ kind: 'part', start: 7, end: 9 });
    expect(chooseRange('bytes=7-', 10)).toEqual({ kind: 'part', start: 7, end: 9 });
    expect(chooseRange('bytes=9-99999999999999999999', 10)).toEqual({ kind: 'part', start: 9, end: 9 });
    expect(chooseRange('bytes=10-', 10)).toEqual({ kind: 'unsatisfiable' });
    expect(chooseRange('bytes=-0', 10)).toEqual({ kind: 'unsatisfiable' });
    expect(chooseRange('bytes=-5', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(chooseRange('bytes=0-1, 3-4', 10)).toEqual({ kind: 'whole' });
    expect(chooseRange('bytes=0-1,', 10)).toEqual({ kind: 'part', start: 0, end: 1 });
    expect(chooseRange('bytes=4-3', 10)).toEqual({ kind: 'whole' });
    expect(chooseRange('bytes=-', 10)).toEqual({ kind: 'whole' });
  });

  it('contentDisposition escapes what RFC 5987 attr-chars exclude and keeps the fallback ASCII and quote-free', () => {
    expect(contentDisposition("it's (ok)*.txt")).toBe(`attachment; filename="it's (ok)*.txt"; filename*=UTF-8''it%27s%20%28ok%29%2A.txt`);
    expect(contentDisposition('Résumé 100%.pdf')).toBe(`attachment; filename="Resume 100_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20100%25.pdf`);
    expect(contentDisposition('😀.png')).toBe(`attachment; filename="__.png"; filename*=UTF-8''%F0%9F%98%80.png`);
  });

  it('contentTypeOf knows common extensions and nothing inherited', () => {
    expect(contentTypeOf('png')).toBe('image/png');
    expect(contentTypeOf('constructor')).toBe('application/octet-stream');
    expect(contentTypeOf('')).toBe('application/octet-stream');
  });
});

describe('large transfers', () => {
  const MiB = 1024 * 1024;
  const CHUNK = 64 * 1024;

  /** `size` bytes made chunk by chunk (never held whole), hashed as they go. */
  function generated(size: number, hash: ReturnType<typeof createHash>): Readable {
    const block = randomBytes(CHUNK);
    return Readable.from(
      (function* () {
        for (let i = 0; i < size / CHUNK; i++) {
          const chunk = Buffer.from(block);
          chunk.writeUInt32BE(i, 0);
          hash.update(chunk);
          yield chunk;
        }
      })(),
    );
  }

  /** The highest RSS seen while `work` runs, sampled every 20 ms. */
  async function peakRss(work: () => Promise<void>): Promise<number> {
    let peak = process.memoryUsage().rss;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      await work();
    } finally {
      clearInterval(timer);
    }
    return Math.max(peak, process.memoryUsage().rss);
  }

  /** Uploads `size` generated bytes in one streamed PATCH; returns the SHA-256 the server answered and the one sent. */
  async function upload(size: number): Promise<{ answered: string; sent: string }> {
    const created = await send(app.url, 'POST', '/upload/', { 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${alice.token}`, 'Upload-Length': String(size) });
    expect(created.status).toBe(201);
    const hash = createHash('sha256');
    const answered = await new Promise<string>((resolve, reject) => {
      const req = http.request(new URL(new URL(String(created.headers.location)).pathname, app.url), {
        method: 'PATCH',
        headers: {
          'Tus-Resumable': '1.0.0',
          Authorization: `Bearer ${alice.token}`,
          'Upload-Offset': '0',
          'Content-Type': 'application/offset+octet-stream',
          'Content-Length': String(size),
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 204 ? resolve(String(res.headers['upload-sha256'])) : reject(new Error(`PATCH answered ${res.statusCode}`))));
      });
      req.on('error', reject);
      pipeline(generated(size, hash), req).catch(reject);
    });
    return { answered, sent: hash.digest('hex') };
  }

  /** Makes the uploaded content a file, downloads it through its URL; returns the bytes and hash received. */
  async function download(name: string, sha: string, size: number): Promise<{ bytes: number; sha256: string }> {
    const { services } = app.app;
    const { contentId } = await services.db.transaction().execute((tx) => claimContent(tx, services, alice.uid, sha, size, 0));
    const fid = await insertTestFile(services, { accountId: alice.uid, name, contentId, sha256: sha, size });
    const url = await urlOf(fid);
    const hash = createHash('sha256');
    let bytes = 0;
    await new Promise<void>((resolve, reject) => {
      http
        .get(url, (res) => {
          if (res.statusCode !== 200) reject(new Error(`GET answered ${res.statusCode}`));
          res.on('data', (chunk: Buffer) => {
            hash.update(chunk);
            bytes += chunk.length;
          });
          res.on('end', resolve);
          res.on('error', reject);
        })
        .on('error', reject);
    });
    return { bytes, sha256: hash.digest('hex') };
  }

  it('200 MiB up through tus and down through a download URL keep the server’s memory flat', { timeout: 180_000 }, async () => {
    // A small round trip first, so that one-time costs (buffer pools, code, caches) are not counted.
    const warm = await upload(16 * MiB);
    expect((await download('warm-up.bin', warm.sent, 16 * MiB)).sha256).toBe(warm.sent);

    const SIZE = 200 * MiB;
    const before = process.memoryUsage().rss;
    let up = { answered: '', sent: '' };
    const uploadPeak = await peakRss(async () => {
      up = await upload(SIZE);
    });
    expect(up.answered).toBe(up.sent);

    let down = { bytes: 0, sha256: '' };
    const downloadPeak = await peakRss(async () => {
      down = await download('big.bin', up.sent, SIZE);
    });
    expect(down).toEqual({ bytes: SIZE, sha256: up.sent });

    // A server that buffered either transfer would grow by 200 MiB; streaming costs a few MiB.
    expect(uploadPeak - before).toBeLessThan(48 * MiB);
    expect(downloadPeak - before).toBeLessThan(48 * MiB);
  });
});
