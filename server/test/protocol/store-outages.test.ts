/**
 * The content store out: an S3 server that hangs (answers nothing) or is gone makes a download answer 503 with
 * Retry-After within the store timeout, not 500 with an incident, with one warn line per outage start and end. The
 * local disk's failures are not outages: a content folder that cannot be read stays an incident (500), since no
 * retry mends it (docs: README "What outages look like").
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAccount, element, startTestApp, type TestApp } from '../helpers/app-server';
import { testS3Settings, startTestS3Server, type TestS3Server } from '../helpers/s3-server';
import { callInForm, ops, resultXml, send } from '../helpers/requests';
import { signRequest } from '../../src/operations/accounts/signing';
import { insertTestFile, storeTestContent } from '../helpers/stored-files';

const { Login, FileDownload } = ops;

/** A download URL of a new file of `name`'s account holding `text`. */
async function downloadUrlOf(app: TestApp, name: string, text: string | Buffer): Promise<string> {
  const uid = await addAccount(app, name, `${name}-password-1`);
  const stored = await storeTestContent(app.app.services, text);
  const fid = await insertTestFile(app.app.services, { accountId: uid, name: 'a.txt', contentId: stored.contentId, sha256: stored.sha256, size: stored.size });
  const token = element(resultXml(await callInForm(app.url, 'post', Login, { uid: name, pwd: `${name}-password-1` }), Login), 'token')!;
  const params = { uid: String(uid), token: token.text, fid: String(fid) };
  const answer = await callInForm(app.url, 'post', FileDownload, { ...params, sign: signRequest(token.attrs.key, 'FileDownload', params) });
  const url = element(resultXml(answer, FileDownload), 'result')?.attrs.url;
  if (!url) throw new Error(`no download URL: ${answer.body}`);
  return url;
}

const download = (app: TestApp, url: string) => send(app.url, 'GET', new URL(url).pathname, {});
const events = (app: TestApp, event: string) => app.logLines.filter((line) => line.includes(`"event":"${event}"`)).map((line) => JSON.parse(line) as Record<string, unknown>);

describe('an S3 store that stops answering', () => {
  let s3: TestS3Server;
  let app: TestApp;
  let url: string;
  let closed = false;

  beforeAll(async () => {
    s3 = await startTestS3Server();
    const settings = testS3Settings(s3);
    app = await startTestApp({
      FSS_S3_ENDPOINT: settings.endpoint ?? '',
      FSS_S3_BUCKET: settings.bucket,
      FSS_S3_ACCESS_KEY_ID: settings.accessKeyId ?? '',
      FSS_S3_SECRET_ACCESS_KEY: settings.secretAccessKey ?? '',
      FSS_S3_PREFIX: settings.prefix,
      FSS_STORE_TIMEOUT_SECONDS: '1',
    });
    url = await downloadUrlOf(app, 'ann', 'the bytes in the store');
  });
  afterAll(async () => {
    await app?.close();
    if (!closed) await s3?.close();
  });

  it('answers a download 503 with Retry-After within the store timeout while it hangs, and serves it once it answers', async () => {
    const release = s3.hold();
    const started = Date.now();
    const answer = await download(app, url);
    // The idle limit (1 s) for each of the SDK's three attempts, with room for a slow machine.
    expect(Date.now() - started).toBeLessThan(15_000);
    release();
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('5');
    expect(events(app, 'outage-started')).toEqual([expect.objectContaining({ level: 'warn', dependency: 'store', code: 'timeout' })]);
    expect(events(app, 'incident')).toEqual([]);

    const served = await download(app, url);
    expect(served.status).toBe(200);
    expect(served.body).toBe('the bytes in the store');
    expect(events(app, 'outage-ended')).toEqual([expect.objectContaining({ level: 'warn', dependency: 'store', seconds: expect.any(Number) })]);
  });

  it('does not cut a download whose client makes it wait longer than the store timeout', async () => {
    const big = randomBytes(24 * 1024 * 1024);
    const bigUrl = await downloadUrlOf(app, 'cid', big);
    const received = await new Promise<Buffer>((resolve, reject) => {
      http.get(new URL(new URL(bigUrl).pathname, app.url), (res) => {
        const chunks: Buffer[] = [];
        let waited = false;
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (waited) return;
          waited = true;
          // A reader that stops for 2.5 s: the store's body waits too, idle beyond its 1 s limit.
          res.pause();
          setTimeout(() => res.resume(), 2_500);
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      }).on('error', reject);
    });
    expect(received.length).toBe(big.length);
    expect(received.equals(big)).toBe(true);
  });

  it('answers a download 503 with Retry-After, not 500, once the server is gone, logging the outage once', async () => {
    await s3.close();
    closed = true;
    const first = await download(app, url);
    const second = await download(app, url);
    for (const answer of [first, second]) {
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('5');
    }
    expect(events(app, 'outage-started')).toHaveLength(2); // the hang's, then this one's
    expect(events(app, 'outage-started')[1]).toMatchObject({ dependency: 'store', code: 'ECONNREFUSED' });
    expect(events(app, 'incident')).toEqual([]);
  });
});

describe('a local content folder that cannot be read', () => {
  it('is no outage: the download stays an incident (500), logged with its id', async () => {
    const app = await startTestApp();
    try {
      const url = await downloadUrlOf(app, 'bea', 'local bytes');
      const content = path.join(app.config.dataDir, 'content');
      // A file where the folder was: every read fails (ENOTDIR), as root too (a chmod would not stop root).
      await rm(content, { recursive: true });
      await mkdir(path.dirname(content), { recursive: true });
      await writeFile(content, 'not a folder');
      const answer = await download(app, url);
      expect(answer.status).toBe(500);
      expect(answer.headers['retry-after']).toBeUndefined();
      expect(events(app, 'outage-started')).toEqual([]);
      expect(events(app, 'incident')).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});
