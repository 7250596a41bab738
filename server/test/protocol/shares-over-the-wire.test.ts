/**
 * Sharing through the whole service (real SQLite file, real content store): FileShare and
 * ShareImageUpload in each of the four forms, the cover image URL, the anonymous ShareService,
 * share download URLs opened at /d/, and a download limit under 20 concurrent calls.
 */
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationSpec } from '../../src/catalog/operations';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { callInForm, FORMS, ops, resultXml, send, type Form, type HttpAnswer, type Value } from '../helpers/requests';
import { insertTestFile, storeTestContent } from '../helpers/stored-files';
import { addFolder } from '../helpers/tree';

const { FileShare, FolderShare, Unshare, ShareImageUpload, FolderAndFileDelete, FolderAndFileRestore, GetShareFiles, ShareOpen, ShareList, ShareDownload } = ops;

/** A 1×1 transparent PNG: 70 real bytes. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

let app: TestApp;
let aliceId: number;
let bobId: number;
let alice: Session;

beforeAll(async () => {
  app = await startTestApp();
  aliceId = await addAccount(app, 'alice', 'alice-password-1');
  bobId = await addAccount(app, 'bob', 'bob-password-1');
  alice = await logIn(app, 'post', 'alice', 'alice-password-1');
});
afterAll(() => app.close());

const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A file of the account whose bytes are in the content store. */
async function addStoredFile(accountId: number, name: string, bytes: string | Buffer, folderId = 0): Promise<number> {
  const services = app.app.services;
  const existing = await services.db.selectFrom('content').select(['id', 'size']).where('sha256', '=', sha256(bytes)).executeTakeFirst();
  const content = existing ? { contentId: existing.id, size: existing.size } : await storeTestContent(services, bytes);
  return insertTestFile(services, { accountId, name, contentId: content.contentId, sha256: sha256(bytes), size: content.size, folderId });
}

/** The attributes of every element `name` in the answer (items are empty elements). */
function all(xml: string, name: string): Array<Record<string, string>> {
  return [...xml.matchAll(new RegExp(`<${name}((?:\\s+[\\w:]+="[^"]*")*)\\s*/>`, 'g'))].map((m) => element(`<${name}${m[1]}/>`, name)!.attrs);
}

/** The attributes of the <result> start tag. */
function resultOf(xml: string): Record<string, string> {
  const match = /<result((?:\s+[\w:]+="[^"]*")*)\s*\/?>/.exec(xml);
  return element(`<result${match![1]}/>`, 'result')!.attrs;
}

async function signed(form: Form, operation: OperationSpec, params: Record<string, Value>, session = alice) {
  const answer = await callSigned(app, form, operation, session, params);
  expect(answer.status).toBe(200);
  const xml = resultXml(answer, operation);
  return { xml, result: resultOf(xml), folders: all(xml, 'folder'), files: all(xml, 'file') };
}

async function anonymous(form: Form, operation: OperationSpec, params: Record<string, Value>) {
  const answer = await callInForm(app.url, form, operation, params);
  expect(answer.status).toBe(200);
  const xml = resultXml(answer, operation);
  return { xml, result: resultOf(xml), folders: all(xml, 'folder'), files: all(xml, 'file') };
}

/** ShareImageUpload's string result, in any form: the URL, or `ERROR <code> <message>`. */
function stringResult(answer: HttpAnswer): string {
  const xml = resultXml(answer, ShareImageUpload);
  const text = /^<string[^>]*>([\s\S]*)<\/string>$/.exec(xml)?.[1] ?? xml;
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

function uploadImage(form: Form, fid: number, bytes: Uint8Array | string, session = alice): Promise<HttpAnswer> {
  return callInForm(app.url, form, ShareImageUpload, { uid: session.uid, token: session.token, fid, ImagefileName: 'cover.png', byteFileStream: bytes });
}

/** A file of alice's with an open share: ShareImageUpload gives covers only to shares that exist. */
async function sharedFile(name: string, downpwd = ''): Promise<number> {
  const fid = await addStoredFile(aliceId, name, name);
  expect((await signed('post', FileShare, { fids: String(fid), downpwd, downValue: 0, description: '' })).result).toMatchObject({ code: '0' });
  return fid;
}

const get = (url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<HttpAnswer> => {
  const { pathname, search } = new URL(url);
  return send(app.url, method, pathname + search, headers);
};

/** Like get, keeping the body's bytes. */
function getBytes(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const { pathname } = new URL(url);
  return fetch(`${app.url}${pathname}`, { headers }).then(async (res) => ({
    status: res.status,
    headers: Object.fromEntries(res.headers),
    body: Buffer.from(await res.arrayBuffer()),
  }));
}

describe.each(FORMS)('FileShare over %s', (form) => {
  it('shares files and answers them with their share attributes: code, url, downpwd, downValue, downloads, description, image', async () => {
    const a = await addStoredFile(aliceId, `a ${form}.txt`, `a ${form}`);
    const b = await addStoredFile(aliceId, `b ${form}.txt`, `b ${form}`);
    const { result, files, xml } = await signed(form, FileShare, { fids: `${a},${b}`, downpwd: 'ab12', downValue: 5, description: "it's (ok)! <3" });
    expect(result).toMatchObject({ code: '0', msg: '', count: '2' });
    expect(xml).not.toContain('<folder');
    expect(files.map((file) => file.id)).toEqual([String(a), String(b)]);
    for (const file of files) {
      expect(file).toMatchObject({ shared: '1', downpwd: 'ab12', downValue: '5', downloads: '0', description: "it's (ok)! <3", image: '' });
      expect(file.code).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(file.url).toBe(`${app.url}/s/${file.code}`);
    }
  });

  it('refuses a bad extraction code with 400, and another account’s file with 404', async () => {
    const mine = await addStoredFile(aliceId, `c ${form}.txt`, `c ${form}`);
    const theirs = await addStoredFile(bobId, `d ${form}.txt`, `d ${form}`);
    expect((await signed(form, FileShare, { fids: String(mine), downpwd: 'abc', downValue: 0, description: '' })).result).toMatchObject({ code: '400' });
    expect((await signed(form, FileShare, { fids: `${mine},${theirs}`, downpwd: '', downValue: 0, description: '' })).result).toMatchObject({ code: '404' });
  });
});

describe('ShareImageUpload', () => {
  const cases: ReadonlyArray<[string, Form, (bytes: Buffer) => Uint8Array | string]> = [
    ['SOAP 1.1, base64', 'soap11', (bytes) => bytes],
    ['SOAP 1.2, base64', 'soap12', (bytes) => bytes],
    ['HTTP GET, one decimal value per byte', 'get', (bytes) => bytes],
    ['HTTP POST, one decimal value per byte', 'post', (bytes) => bytes],
    ['HTTP GET, one base64 value', 'get', (bytes) => bytes.toString('base64')],
    ['HTTP POST, one base64 value', 'post', (bytes) => bytes.toString('base64')],
  ];

  it.each(cases)('%s: stores the image and answers its URL, which serves it as an image and nothing else', async (_name, form, encode) => {
    const fid = await sharedFile(`photo ${_name}.txt`, 'ab12');
    const url = stringResult(await uploadImage(form, fid, encode(PNG)));
    expect(url).toMatch(new RegExp(`^${app.url}/s/image/[1-9][0-9]*/[A-Za-z0-9_-]{22}$`));

    const image = await getBytes(url);
    expect(image.status).toBe(200);
    // What is served is the image decoded and encoded anew (transparent, so a PNG): 1 × 1 still.
    expect(await sharp(image.body).metadata()).toMatchObject({ format: 'png', width: 1, height: 1, hasAlpha: true });
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.headers['content-length']).toBe(String(image.body.length));
    expect(image.headers['x-content-type-options']).toBe('nosniff');
    expect(image.headers['content-security-policy']).toMatch(/^default-src 'none'/);
    expect(image.headers['cache-control']).toBe('private, max-age=3600');

    // The share's image attribute is that URL; the URL does not carry the share's code.
    const shared = await signed('post', GetShareFiles, { order: 'name', desc: '0' });
    const item = shared.files.find((file) => file.id === String(fid));
    expect(item).toMatchObject({ shared: '1', image: url, downpwd: 'ab12' });
    expect(url).not.toContain(item!.code);
  });

  it('a file without a share is refused: ERROR 409, and it stays unshared', async () => {
    const fid = await addStoredFile(aliceId, 'not shared.txt', 'not shared');
    for (const form of FORMS) expect(stringResult(await uploadImage(form, fid, PNG))).toMatch(/^ERROR 409 /);
    const shared = await signed('post', GetShareFiles, { order: 'name', desc: '0' });
    expect(shared.files.map((file) => file.id)).not.toContain(String(fid));
  });

  it('an image over 5 MiB is refused: ERROR 413', async () => {
    const fid = await sharedFile('big.txt');
    const big = Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024 + 1 - PNG.length)]);
    expect(stringResult(await uploadImage('soap11', fid, big))).toMatch(/^ERROR 413 /);
    expect(stringResult(await uploadImage('post', fid, big.toString('base64')))).toMatch(/^ERROR 413 /);
  });

  it('a text file posing as .png is refused: ERROR 400; so is an empty one', async () => {
    const fid = await sharedFile('posing.txt');
    for (const form of FORMS) {
      expect(stringResult(await uploadImage(form, fid, Buffer.from('<svg onload="alert(1)"></svg>')))).toMatch(/^ERROR 400 /);
    }
    expect(stringResult(await uploadImage('soap11', fid, Buffer.alloc(0)))).toMatch(/^ERROR 400 /);
  });

  it('another account’s file or a missing one is ERROR 404; a bad token ERROR 401', async () => {
    const theirs = await addStoredFile(bobId, 'theirs.txt', 'theirs');
    expect(stringResult(await uploadImage('post', theirs, PNG))).toMatch(/^ERROR 404 /);
    expect(stringResult(await uploadImage('post', 999_999, PNG))).toMatch(/^ERROR 404 /);
    expect(stringResult(await uploadImage('post', theirs, PNG, { ...alice, token: 'not-a-token' }))).toMatch(/^ERROR 401 /);
  });

  it('the image URL: HEAD, If-None-Match → 304, other methods 405; a new image has a new URL and the old one stops', async () => {
    const fid = await sharedFile('covered.txt');
    const first = stringResult(await uploadImage('post', fid, PNG));
    const head = await get(first, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(String((await getBytes(first)).body.length));
    const etag = String(head.headers['etag']);
    expect((await get(first, { 'If-None-Match': etag })).status).toBe(304);
    expect((await get(first, {}, 'POST')).status).toBe(405);

    const opaque = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#336699' } }).gif().toBuffer();
    const second = stringResult(await uploadImage('post', fid, opaque));
    expect(second).not.toBe(first);
    expect((await get(first)).status).toBe(404);
    const jpeg = await getBytes(second);
    // An opaque image is stored as a JPEG, whatever it was sent as.
    expect(jpeg.headers['content-type']).toBe('image/jpeg');
    expect(await sharp(jpeg.body).metadata()).toMatchObject({ format: 'jpeg', width: 40, height: 30 });
  });

  it('the image URL answers while the share does: not for a file in the bin, again after a restore, never after Unshare', async () => {
    const fid = await sharedFile('binned cover.txt');
    const url = stringResult(await uploadImage('post', fid, PNG));
    await signed('post', FolderAndFileDelete, { dirids: '', fids: String(fid), is_real: 0 });
    expect((await get(url)).status).toBe(404);
    await signed('post', FolderAndFileRestore, { dirids: '', fids: String(fid) });
    expect((await get(url)).status).toBe(200);
    await signed('post', Unshare, { dirids: '', fids: String(fid) });
    expect((await get(url)).status).toBe(404);
  });
});

describe.each(FORMS)('ShareService over %s', (form) => {
  it('ShareOpen, ShareList and ShareDownload: a protected folder share, browsed and downloaded anonymously', async () => {
    const folder = await addFolder(app.app.services, aliceId, 0, `Shared ${form}`);
    const sub = await addFolder(app.app.services, aliceId, folder.id, 'Sub');
    const bytes = `the bytes of ${form}`;
    const fid = await addStoredFile(aliceId, 'inside.txt', bytes, sub.id);
    const shared = await signed(form, FolderShare, { dirids: String(folder.id), downpwd: 'sesame', downValue: 0, description: 'for you' });
    const code = shared.folders[0].code;

    const needs = await anonymous(form, ShareOpen, { code, downpwd: '' });
    expect(needs.result).toMatchObject({ code: '403', reason: 'downpwd-required' });
    const opened = await anonymous(form, ShareOpen, { code, downpwd: 'sesame' });
    expect(opened.result).toMatchObject({ code: '0', msg: '' });
    expect(opened.folders).toEqual([expect.objectContaining({ id: String(folder.id), name: `Shared ${form}`, code, downpwd: '', description: 'for you' })]);

    const root = await anonymous(form, ShareList, { code, downpwd: 'sesame', dir: '', order: 'name', desc: '0' });
    expect(root.result).toMatchObject({ code: '0', count: '1' });
    expect(root.folders.map((f) => f.name)).toEqual(['Sub']);
    expect(root.folders[0].path).toBeUndefined();
    const inner = await anonymous(form, ShareList, { code, downpwd: 'sesame', dir: String(sub.id), order: 'time', desc: '1' });
    expect(inner.files.map((f) => f.name)).toEqual(['inside.txt']);

    const link = await anonymous(form, ShareDownload, { code, downpwd: 'sesame', fid });
    expect(link.result).toMatchObject({ code: '0' });
    expect(link.result.url).toMatch(new RegExp(`^${app.url}/d/[^/]+/inside\\.txt$`));
    expect(link.result.expires).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const file = await get(link.result.url);
    expect(file.status).toBe(200);
    expect(file.body).toBe(bytes);
    expect(file.headers['content-disposition']).toContain('attachment');

    // Unsharing ends the URL already handed out.
    await signed(form, Unshare, { dirids: String(folder.id), fids: '' });
    expect((await get(link.result.url)).status).toBe(404);
    expect((await anonymous(form, ShareOpen, { code, downpwd: 'sesame' })).result).toMatchObject({ code: '404' });
  });
});

describe('ShareService', () => {
  it('a share whose item is in the bin answers 404 at once, and again after a restore', async () => {
    const fid = await addStoredFile(aliceId, 'soon binned.txt', 'soon binned');
    const code = (await signed('post', FileShare, { fids: String(fid), downpwd: '', downValue: 0, description: '' })).files[0].code;
    await signed('post', FolderAndFileDelete, { dirids: '', fids: String(fid), is_real: 0 });
    expect((await anonymous('get', ShareOpen, { code, downpwd: '' })).result).toMatchObject({ code: '404' });
    await signed('post', FolderAndFileRestore, { dirids: '', fids: String(fid) });
    expect((await anonymous('get', ShareOpen, { code, downpwd: '' })).files[0]).toMatchObject({ id: String(fid) });
  });

  it('downValue=2 and 20 concurrent ShareDownload calls: exactly 2 URLs granted, 18 refused with 403', async () => {
    const fid = await addStoredFile(aliceId, 'popular.txt', 'popular');
    const code = (await signed('post', FileShare, { fids: String(fid), downpwd: '', downValue: 2, description: '' })).files[0].code;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => anonymous(FORMS[i % FORMS.length], ShareDownload, { code, downpwd: '', fid })));
    const granted = answers.filter((answer) => answer.result.code === '0');
    const refused = answers.filter((answer) => answer.result.code === '403');
    expect(granted).toHaveLength(2);
    expect(refused).toHaveLength(18);
    expect(refused[0].result).toMatchObject({ reason: 'download-limit' });
    expect(refused[0].result.msg).toContain('download limit reached');
    for (const answer of granted) expect((await get(answer.result.url)).body).toBe('popular');
    const listed = await signed('post', GetShareFiles, { order: 'name', desc: '0' });
    expect(listed.files.find((file) => file.id === String(fid))).toMatchObject({ downValue: '2', downloads: '2' });
  });

  it('a wrong share code is 404; a throttled address is told when to retry (429 with retryAfter)', async () => {
    expect((await anonymous('post', ShareOpen, { code: 'AAAAAAAAAAAAAAAAAAAAAA', downpwd: '' })).result).toMatchObject({ code: '404' });
    // Counters live in the database: block this address as a run of wrong codes would.
    const blockedUntil = Date.now() + 90_000;
    await app.app.services.db
      .insertInto('throttle')
      .values({ key: 'share-address:127.0.0.1', failures: 99, window_start: Date.now(), blocked_until: blockedUntil })
      .onConflict((oc) => oc.column('key').doUpdateSet({ failures: 99, blocked_until: blockedUntil }))
      .execute();
    const refused = await anonymous('soap11', ShareOpen, { code: 'AAAAAAAAAAAAAAAAAAAAAA', downpwd: '' });
    expect(refused.result.code).toBe('429');
    expect(Number(refused.result.retryAfter)).toBeGreaterThan(80);
    await app.app.services.db.deleteFrom('throttle').execute();
  });

  it('capability paths are logged as their route only', async () => {
    const fid = await sharedFile('logged.txt');
    const url = stringResult(await uploadImage('post', fid, PNG));
    await get(url);
    const tag = new URL(url).pathname.split('/')[4];
    expect(tag).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(app.logLines.some((line) => line.includes(tag))).toBe(false);
    expect(app.logLines.some((line) => line.includes('"path":"/s/…"'))).toBe(true);
  });
});
