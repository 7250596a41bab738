/**
 * The tus 1.0 endpoint at /upload/, driven over HTTP the way a tus client drives it: create,
 * PATCH in chunks, HEAD to learn the offset, resume after a dropped connection, and learn the
 * SHA-256 that FileAdd takes.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimContent } from '../../src/operations/content/uploads';
import { addAccount, element, startTestApp, type TestApp } from '../helpers/app-server';
import { uploadAreaHolds, writeArrivedUpload } from '../helpers/content';
import { callInForm, ops, resultXml, send, type HttpAnswer } from '../helpers/requests';

const { Login } = ops;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let app: TestApp;
let alice: { id: number; token: string };
let bob: { id: number; token: string };

async function login(name: string, password: string): Promise<string> {
  const answer = await callInForm(app.url, 'post', Login, { uid: name, pwd: password });
  return element(resultXml(answer, Login), 'token')!.text;
}

beforeAll(async () => {
  app = await startTestApp({ FSS_MAX_UPLOAD_BYTES: String(64 * 1024 * 1024) });
  alice = { id: await addAccount(app, 'alice', 'alice-password-1'), token: '' };
  bob = { id: await addAccount(app, 'bob', 'bob-password-1'), token: '' };
  alice.token = await login('alice', 'alice-password-1');
  bob.token = await login('bob', 'bob-password-1');
});
afterAll(() => app.close());

const tusHeaders = (token: string | null, extra: Record<string, string> = {}): Record<string, string> => ({
  'Tus-Resumable': '1.0.0',
  ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
  ...extra,
});

const metadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([key, value]) => `${key} ${Buffer.from(value, 'utf8').toString('base64')}`)
    .join(',');

async function create(token: string, length: number, extra: Record<string, string> = {}): Promise<{ answer: HttpAnswer; path: string }> {
  const answer = await send(app.url, 'POST', '/upload/', tusHeaders(token, { 'Upload-Length': String(length), ...extra }));
  const location = String(answer.headers.location ?? '');
  return { answer, path: location ? new URL(location).pathname : '' };
}

const patch = (token: string, path: string, offset: number, chunk: Buffer) =>
  send(app.url, 'PATCH', path, tusHeaders(token, { 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' }), chunk);

const head = (token: string | null, path: string) => send(app.url, 'HEAD', path, tusHeaders(token));

/** Sends the first `sent` bytes of a PATCH announcing `chunk.length`, then drops the connection. */
async function droppedPatch(token: string, path: string, offset: number, chunk: Buffer, sent: number): Promise<void> {
  const req = http.request(new URL(path, app.url), {
    method: 'PATCH',
    headers: tusHeaders(token, { 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(chunk.length) }),
  });
  req.on('error', () => {});
  req.on('response', (res) => res.resume());
  req.write(chunk.subarray(0, sent));
  await sleep(300);
  req.destroy();
}

/** HEAD until the offset stops moving (the dropped request has let go of the upload). */
async function settledOffset(token: string, path: string): Promise<number> {
  let last = -1;
  for (let i = 0; i < 50; i++) {
    const answer = await head(token, path);
    if (answer.status === 200) {
      const offset = Number(answer.headers['upload-offset']);
      if (offset === last) return offset;
      last = offset;
    }
    await sleep(100);
  }
  throw new Error('the offset never settled');
}

describe('tus discovery', () => {
  it('OPTIONS needs no token and names the version, the extensions and the size limit; no CORS', async () => {
    const answer = await send(app.url, 'OPTIONS', '/upload/', {});
    expect(answer.status).toBe(204);
    expect(answer.headers['tus-version']).toBe('1.0.0');
    const extensions = String(answer.headers['tus-extension']).split(',');
    expect(extensions).toEqual(expect.arrayContaining(['creation', 'creation-with-upload', 'termination', 'expiration']));
    expect(extensions).not.toContain('creation-defer-length');
    expect(answer.headers['tus-max-size']).toBe(String(64 * 1024 * 1024));
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('authentication', () => {
  it('a request without a bearer token is refused with 401', async () => {
    const answer = await send(app.url, 'POST', '/upload/', tusHeaders(null, { 'Upload-Length': '5' }));
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(answer.headers['tus-resumable']).toBe('1.0.0');
  });

  it('an unknown token, or another scheme, is refused with 401', async () => {
    expect((await send(app.url, 'POST', '/upload/', tusHeaders('not-a-token', { 'Upload-Length': '5' }))).status).toBe(401);
    const basic = await send(app.url, 'POST', '/upload/', { 'Tus-Resumable': '1.0.0', 'Upload-Length': '5', Authorization: `Basic ${alice.token}` });
    expect(basic.status).toBe(401);
  });

  it('the token never reaches the log', async () => {
    await create(alice.token, 3);
    expect(app.logLines.join('\n')).not.toContain(alice.token);
  });
});

describe('an upload from start to finish', () => {
  it('create, PATCH in chunks, HEAD for the offset; completion answers the SHA-256 that FileAdd takes', async () => {
    const data = randomBytes(300 * 1024 + 17);
    const { answer, path } = await create(alice.token, data.length, { 'Upload-Metadata': metadata({ filename: '报告.pdf', filetype: 'application/pdf' }) });
    expect(answer.status).toBe(201);
    expect(answer.headers.location).toMatch(new RegExp(`^${app.url}/upload/[0-9a-f]{32}$`));
    expect(Date.parse(String(answer.headers['upload-expires']))).toBeGreaterThan(Date.now() + 23 * 3600_000);

    const fresh = await head(alice.token, path);
    expect(fresh.status).toBe(200);
    expect(fresh.headers['upload-offset']).toBe('0');
    expect(fresh.headers['upload-length']).toBe(String(data.length));
    expect(fresh.headers['upload-metadata']).toBe(metadata({ filename: '报告.pdf', filetype: 'application/pdf' }));
    expect(fresh.headers['cache-control']).toBe('no-store');

    const chunk = 128 * 1024;
    let offset = 0;
    let last: HttpAnswer | undefined;
    while (offset < data.length) {
      const piece = data.subarray(offset, offset + chunk);
      last = await patch(alice.token, path, offset, piece);
      expect(last.status).toBe(204);
      offset += piece.length;
      expect(last.headers['upload-offset']).toBe(String(offset));
      if (offset < data.length) {
        expect(last.headers['upload-sha256']).toBeUndefined();
        expect((await head(alice.token, path)).headers['upload-offset']).toBe(String(offset));
      }
    }
    expect(last!.headers['upload-sha256']).toBe(sha256(data));

    // HEAD afterwards says it too, for a client whose last answer was lost.
    const done = await head(alice.token, path);
    expect(done.status).toBe(200);
    expect(done.headers['upload-offset']).toBe(String(data.length));
    expect(done.headers['upload-sha256']).toBe(sha256(data));

    // FileAdd(hash, size) can now create the record.
    const { services } = app.app;
    const { contentId } = await services.db.transaction().execute((tx) => claimContent(tx, services, alice.id, sha256(data), data.length, 0));
    expect(contentId).toBeGreaterThan(0);
  });

  it('after completion, a repeated last PATCH gets the hash again; DELETE forgets the upload', async () => {
    const data = Buffer.from('finished');
    const { path } = await create(alice.token, data.length);
    expect((await patch(alice.token, path, 0, data)).headers['upload-sha256']).toBe(sha256(data));
    const again = await patch(alice.token, path, data.length, Buffer.alloc(0));
    expect(again.status).toBe(204);
    expect(again.headers['upload-sha256']).toBe(sha256(data));
    expect((await patch(alice.token, path, 0, data)).status).toBe(409);

    expect((await send(app.url, 'DELETE', path, tusHeaders(alice.token))).status).toBe(204);
    expect((await head(alice.token, path)).status).toBe(404);
    const { services } = app.app;
    await expect(services.db.transaction().execute((tx) => claimContent(tx, services, alice.id, sha256(data), data.length, 0))).rejects.toMatchObject({ code: 404 });
  });

  it('HEAD finishes an upload whose bytes all arrived but whose completion never ran (a crash)', async () => {
    const data = randomBytes(1000);
    const { path } = await create(alice.token, data.length);
    const id = path.split('/').pop()!;
    // The bytes as the last PATCH wrote them, before the server was killed.
    await writeArrivedUpload(app.config, id, data);
    const answer = await head(alice.token, path);
    expect(answer.status).toBe(200);
    expect(answer.headers['upload-offset']).toBe(String(data.length));
    expect(answer.headers['upload-sha256']).toBe(sha256(data));
  });

  it('a PATCH at the wrong offset is refused with 409 and changes nothing', async () => {
    const { path } = await create(alice.token, 10);
    expect((await patch(alice.token, path, 0, Buffer.from('abcd'))).status).toBe(204);
    expect((await patch(alice.token, path, 2, Buffer.from('xxxx'))).status).toBe(409);
    expect((await head(alice.token, path)).headers['upload-offset']).toBe('4');
  });

  it('resumes after a dropped connection: HEAD shows the offset reached, and the upload continues from there', async () => {
    const data = randomBytes(4 * 1024 * 1024);
    const { path } = await create(alice.token, data.length);
    await droppedPatch(alice.token, path, 0, data, 1536 * 1024);

    const reached = await settledOffset(alice.token, path);
    expect(reached).toBeGreaterThan(0);
    expect(reached).toBeLessThanOrEqual(1536 * 1024);

    const rest = await patch(alice.token, path, reached, data.subarray(reached));
    expect(rest.status).toBe(204);
    expect(rest.headers['upload-sha256']).toBe(sha256(data));
  });

  it('a stalled PATCH lets go of its upload when a newer request on it asks, keeping the bytes it received', async () => {
    const data = randomBytes(2 * 1024 * 1024);
    const { path } = await create(alice.token, data.length);
    const stalled = http.request(new URL(path, app.url), {
      method: 'PATCH',
      headers: tusHeaders(alice.token, { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(data.length) }),
    });
    stalled.on('error', () => {});
    const stalledAnswer = new Promise<http.IncomingMessage>((resolve) => stalled.on('response', resolve));
    stalled.write(data.subarray(0, 512 * 1024));
    await sleep(300);

    // The client's new connection asks where the upload stands: the stalled PATCH is ended for it.
    const asked = await head(alice.token, path);
    expect(asked.status).toBe(200);
    const reached = Number(asked.headers['upload-offset']);
    expect(reached).toBeGreaterThan(0);
    expect(reached).toBeLessThanOrEqual(512 * 1024);
    const old = await stalledAnswer;
    old.resume();
    expect(old.statusCode).toBe(204);
    expect(old.headers['upload-offset']).toBe(String(reached));
    expect(old.headers.connection).toBe('close');
    stalled.destroy();

    const rest = await patch(alice.token, path, reached, data.subarray(reached));
    expect(rest.status).toBe(204);
    expect(rest.headers['upload-sha256']).toBe(sha256(data));
  });

  it('an upload continued on another instance (or after a restart) answers the SHA-256 of all its bytes', async () => {
    const data = randomBytes(3 * 1024 * 1024);
    const { path } = await create(alice.token, data.length);
    expect((await patch(alice.token, path, 0, data.subarray(0, 1024 * 1024))).status).toBe(204);
    // A second instance on the same data: it never saw the first MiB arrive.
    const other = await startTestApp({
      FSS_DATA_DIR: app.config.dataDir,
      ...(app.config.databaseUrl ? { FSS_DATABASE_URL: app.config.databaseUrl } : {}),
      ...(app.config.s3 ? { FSS_S3_PREFIX: app.config.s3.prefix } : {}),
    });
    try {
      const second = await send(other.url, 'PATCH', path, tusHeaders(alice.token, { 'Upload-Offset': String(1024 * 1024), 'Content-Type': 'application/offset+octet-stream' }), data.subarray(1024 * 1024, 2 * 1024 * 1024));
      expect(second.status).toBe(204);
    } finally {
      await other.close();
    }
    // Back on the first instance, whose running hash stopped at 1 MiB: it must not be continued.
    const last = await patch(alice.token, path, 2 * 1024 * 1024, data.subarray(2 * 1024 * 1024));
    expect(last.status).toBe(204);
    expect(last.headers['upload-sha256']).toBe(sha256(data));
  });

  it('creation with upload: a POST carrying all the bytes completes at once', async () => {
    const data = Buffer.from('all at once');
    const answer = await send(
      app.url,
      'POST',
      '/upload/',
      tusHeaders(alice.token, { 'Upload-Length': String(data.length), 'Content-Type': 'application/offset+octet-stream' }),
      data,
    );
    expect(answer.status).toBe(201);
    expect(answer.headers['upload-offset']).toBe(String(data.length));
    expect(answer.headers['upload-sha256']).toBe(sha256(data));
  });

  it('an empty upload completes on creation', async () => {
    const { answer } = await create(alice.token, 0);
    expect(answer.status).toBe(201);
    expect(answer.headers['upload-sha256']).toBe(sha256(Buffer.alloc(0)));
  });

  it('the owner can terminate an unfinished upload: its bytes go and it is not found any more', async () => {
    const { path } = await create(alice.token, 10);
    await patch(alice.token, path, 0, Buffer.from('12345'));
    const id = path.split('/').pop()!;
    expect(await uploadAreaHolds(app.config, id)).toBe(true);
    expect((await send(app.url, 'DELETE', path, tusHeaders(alice.token))).status).toBe(204);
    expect((await head(alice.token, path)).status).toBe(404);
    expect(await uploadAreaHolds(app.config, id)).toBe(false);
  });

  it('an upload past its lifetime answers 410 Gone', async () => {
    const { path } = await create(alice.token, 10);
    const id = path.split('/').pop()!;
    await app.app.services.db.updateTable('uploads').set({ expires_at: Date.now() - 1 }).where('id', '=', id).execute();
    expect((await head(alice.token, path)).status).toBe(410);
    expect((await patch(alice.token, path, 0, Buffer.from('x'))).status).toBe(410);
  });
});

describe('ownership and limits', () => {
  it('another account’s upload is not found: HEAD, PATCH and DELETE answer 404 and change nothing', async () => {
    const { path } = await create(alice.token, 10);
    await patch(alice.token, path, 0, Buffer.from('abc'));
    expect((await head(bob.token, path)).status).toBe(404);
    expect((await patch(bob.token, path, 3, Buffer.from('def'))).status).toBe(404);
    expect((await send(app.url, 'DELETE', path, tusHeaders(bob.token))).status).toBe(404);
    expect((await head(alice.token, path)).headers['upload-offset']).toBe('3');
  });

  it('an unknown upload id is not found', async () => {
    expect((await head(alice.token, `/upload/${'0'.repeat(32)}`)).status).toBe(404);
    expect((await head(alice.token, '/upload/..%2F..%2Fsecret.key')).status).toBe(404);
  });

  it('an upload larger than the remaining quota is refused with 413', async () => {
    const carol = await addAccount(app, 'carol', 'carol-password-1');
    const token = await login('carol', 'carol-password-1');
    await app.app.services.db.updateTable('accounts').set({ quota_bytes: 1000, used_bytes: 400 }).where('id', '=', carol).execute();
    expect((await create(token, 601)).answer.status).toBe(413);
    expect((await create(token, 600)).answer.status).toBe(201);
    // That upload reserves its length until it is claimed or expires.
    expect((await create(token, 1)).answer.status).toBe(413);
  });

  it('an upload over the upload size limit is refused with 413', async () => {
    expect((await create(alice.token, 64 * 1024 * 1024 + 1)).answer.status).toBe(413);
  });

  it('an upload without Upload-Length is refused (deferred length is not offered)', async () => {
    const missing = await send(app.url, 'POST', '/upload/', tusHeaders(alice.token));
    expect(missing.status).toBe(400);
    const deferred = await send(app.url, 'POST', '/upload/', tusHeaders(alice.token, { 'Upload-Defer-Length': '1' }));
    expect(deferred.status).toBe(501);
  });

  it('bytes cannot be read back through the upload endpoint (GET is not offered)', async () => {
    const { path } = await create(alice.token, 3);
    await patch(alice.token, path, 0, Buffer.from('abc'));
    const answer = await send(app.url, 'GET', path, tusHeaders(alice.token));
    expect(answer.status).toBe(405);
  });
});
