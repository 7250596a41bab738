/**
 * Direct links through the whole service (real SQLite file, real HTTP): FileLink and FileUnlink in
 * each of the four forms, GetLinkFiles, and the /l/{code}/{name} URL: bytes whole and in a range,
 * headers, hits, the recycle bin, permanent deletion, and other accounts' ids.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAccount, element, logIn, newSession, signedResult, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { FORMS, ops, send, type Form, type HttpAnswer } from '../helpers/requests';
import { insertTestFile, storeTestContent } from '../helpers/stored-files';

const { FileLink, FileUnlink, GetLinkFiles, FolderAdd, FolderAndFileDelete, FolderAndFileRestore } = ops;
const sha256 = (bytes: string) => createHash('sha256').update(bytes).digest('hex');

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  await addAccount(app, 'alice', 'alice-password-1');
});
afterAll(() => app.close());

/** A file of the account with these bytes (unique bytes per file, so that every file has its own content). */
async function addFile(owner: Session, name: string, text: string, folderId = 0): Promise<number> {
  const services = app.app.services;
  const content = await storeTestContent(services, text);
  return insertTestFile(services, { accountId: owner.uid, name, folderId, ...content });
}

/** Calls a signed operation (HTTP POST unless told) and reads the <result> attributes. */
const call = (session: Session, operation: typeof FileLink, params: Record<string, string | number>, form: Form = 'post') => signedResult(app, form, operation, session, params);

async function linkUrl(session: Session, fid: number, form: Form = 'post'): Promise<string> {
  const { result } = await call(session, FileLink, { fid }, form);
  expect(result.code, result.msg).toBe('0');
  return result.url;
}

/** GET (or another method) on a URL of the service, as a browser would ask for it. */
function open(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<HttpAnswer> {
  const { pathname, search } = new URL(url);
  return send(app.url, method, pathname + search, headers);
}

/** The linked files GetLinkFiles lists, by id. */
async function linkedFiles(session: Session): Promise<Map<string, Record<string, string>>> {
  const { xml } = await call(session, GetLinkFiles, { order: 'name', desc: '0' });
  const files = [...xml.matchAll(/<file((?:\s+[\w:]+="[^"]*")*)\s*\/>/g)].map((m) => element(`<file${m[1]}/>`, 'file')!.attrs);
  return new Map(files.map((file) => [file.id, file]));
}

async function hitsOf(fid: number): Promise<number> {
  const row = await app.app.services.db.selectFrom('links').select('hits').where('file_id', '=', fid).executeTakeFirstOrThrow();
  return row.hits;
}

describe.each(FORMS)('FileLink and FileUnlink over %s', (form) => {
  let alice: Session;
  beforeAll(async () => {
    alice = await logIn(app, form, 'alice', 'alice-password-1');
  });

  it('FileLink answers a permanent absolute URL, without expires; again, the same URL', async () => {
    const fid = await addFile(alice, `report ${form}.txt`, `report over ${form}`);
    const { xml, result } = await call(alice, FileLink, { fid }, form);
    expect(result.code).toBe('0');
    expect(result.url).toBe(`${app.url}/l/${result.url.split('/')[4]}/${encodeURIComponent(`report ${form}.txt`)}`);
    expect(result.url.split('/')[4]).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(result.expires).toBeUndefined();
    expect(xml).not.toContain('expires');
    expect((await call(alice, FileLink, { fid }, form)).result.url).toBe(result.url);
  });

  it('FileUnlink answers an empty result; the URL stops answering', async () => {
    const fid = await addFile(alice, `gone ${form}.txt`, `gone over ${form}`);
    const url = await linkUrl(alice, fid, form);
    expect((await open(url)).status).toBe(200);
    const { result } = await call(alice, FileUnlink, { fid }, form);
    expect(result).toMatchObject({ code: '0', msg: '' });
    expect((await open(url)).status).toBe(404);
    // Idempotent: the file has no link, which is what was asked.
    expect((await call(alice, FileUnlink, { fid }, form)).result.code).toBe('0');
  });
});

describe('GetLinkFiles', () => {
  it('lists the linked file with its path, url, hits and linked="1"', async () => {
    const alice = await logIn(app, 'post', 'alice', 'alice-password-1');
    const { xml } = await call(alice, FolderAdd, { dirid: 0, name: 'Public' });
    const folder = Number(element(xml, 'folder')!.attrs.id);
    const fid = await addFile(alice, 'a b&c.txt', 'listed bytes', folder);
    const url = await linkUrl(alice, fid);
    await open(url);
    const listed = (await linkedFiles(alice)).get(String(fid));
    expect(listed).toMatchObject({ name: 'a b&c.txt', path: '/Public/a b&c.txt', url, hits: '1', linked: '1' });
    expect(url).toMatch(/\/a%20b%26c\.txt$/);
  });
});

describe('the link URL', () => {
  const TEXT = '0123456789abcdefghijklmnopqrstuvwxyz';
  let alice: Session;
  let fid: number;
  let url: string;
  beforeAll(async () => {
    alice = await logIn(app, 'post', 'alice', 'alice-password-1');
    fid = await addFile(alice, 'alphabet.txt', TEXT);
    url = await linkUrl(alice, fid);
  });

  it('serves the whole file as an attachment, with its validator and the safety headers', async () => {
    const answer = await open(url);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(TEXT);
    expect(answer.headers['content-length']).toBe(String(TEXT.length));
    expect(answer.headers['etag']).toBe(`"${sha256(TEXT)}"`);
    expect(answer.headers['accept-ranges']).toBe('bytes');
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.headers['content-disposition']).toBe(`attachment; filename="alphabet.txt"; filename*=UTF-8''alphabet.txt`);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
  });

  it('serves a range (206 with Content-Range), and HEAD without a body', async () => {
    const part = await open(url, { Range: 'bytes=10-15' });
    expect(part.status).toBe(206);
    expect(part.body).toBe('abcdef');
    expect(part.headers['content-range']).toBe(`bytes 10-15/${TEXT.length}`);
    const head = await open(url, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(String(TEXT.length));
    expect((await open(url, { Range: `bytes=${TEXT.length}-` })).status).toBe(416);
  });

  it('counts a hit per GET that starts a transfer: not HEAD, 304, 416 or a continuation range', async () => {
    const start = await hitsOf(fid);
    await open(url);
    expect(await hitsOf(fid)).toBe(start + 1);
    await open(url, { Range: 'bytes=0-9' });
    expect(await hitsOf(fid)).toBe(start + 2);
    await open(url, { Range: 'bytes=10-' });
    await open(url, {}, 'HEAD');
    await open(url, { 'If-None-Match': `"${sha256(TEXT)}"` });
    await open(url, { Range: 'bytes=999-' });
    expect(await hitsOf(fid)).toBe(start + 2);
    expect((await linkedFiles(alice)).get(String(fid))!.hits).toBe(String(start + 2));
  });

  it('the name segment is cosmetic: another name, or none, serves the same file under its own name', async () => {
    const code = url.split('/')[4];
    for (const path of [`/l/${code}/whatever.exe`, `/l/${code}`]) {
      const answer = await send(app.url, 'GET', path, {});
      expect(answer.status).toBe(200);
      expect(answer.body).toBe(TEXT);
      expect(answer.headers['content-disposition']).toContain('filename="alphabet.txt"');
    }
  });

  it('an unknown or malformed code is 404', async () => {
    for (const path of [`/l/${'A'.repeat(22)}/x.txt`, '/l/nope/x.txt', '/l/%41%41/x.txt']) {
      const answer = await send(app.url, 'GET', path, {});
      expect(answer.status).toBe(404);
      expect(answer.headers['cache-control']).toBe('no-store');
    }
  });

  it('an HTML file is never rendered on the service’s origin', async () => {
    const page = await addFile(alice, 'page.html', '<script>alert(document.cookie)</script>');
    const answer = await open(await linkUrl(alice, page));
    expect(answer.headers['content-disposition']).toMatch(/^attachment;/);
    expect(answer.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });

  it('only GET and HEAD are allowed', async () => {
    const answer = await open(url, {}, 'POST');
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
  });

  it('a file encrypted since it was linked answers 423', async () => {
    const secret = await addFile(alice, 'later-secret.txt', 'later secret');
    const secretUrl = await linkUrl(alice, secret);
    await app.app.services.db.updateTable('files').set({ encrypted: 1 }).where('id', '=', secret).execute();
    expect((await open(secretUrl)).status).toBe(423);
    const { result } = await call(alice, FileLink, { fid: secret });
    expect(result).toMatchObject({ code: '423', id: String(secret), tip: '' });
  });

  it('the code is kept out of the request log', async () => {
    await open(url);
    expect(app.logLines.join('\n')).not.toContain(url.split('/')[4]);
  });
});

describe('links and the recycle bin', () => {
  let alice: Session;
  beforeAll(async () => {
    alice = await logIn(app, 'post', 'alice', 'alice-password-1');
  });

  it('a file moved to the bin: its link answers 404 and is not listed; restored, it answers again', async () => {
    const fid = await addFile(alice, 'binned.txt', 'binned bytes');
    const url = await linkUrl(alice, fid);
    expect((await call(alice, FolderAndFileDelete, { dirids: '', fids: String(fid), is_real: 0 })).result.code).toBe('0');
    expect((await open(url)).status).toBe(404);
    expect((await open(url, {}, 'HEAD')).status).toBe(404);
    expect((await linkedFiles(alice)).has(String(fid))).toBe(false);
    // While in the bin, the file is not the caller's to link or unlink: one 404 as for any id.
    expect((await call(alice, FileLink, { fid })).result.code).toBe('404');

    expect((await call(alice, FolderAndFileRestore, { dirids: '', fids: String(fid) })).result.code).toBe('0');
    const answer = await open(url);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('binned bytes');
    expect((await linkedFiles(alice)).get(String(fid))).toMatchObject({ url });
  });

  it('a file beneath a folder moved to the bin: 404 until the folder is restored', async () => {
    const { xml } = await call(alice, FolderAdd, { dirid: 0, name: 'Going' });
    const folder = element(xml, 'folder')!.attrs.id;
    const fid = await addFile(alice, 'inside.txt', 'inside bytes', Number(folder));
    const url = await linkUrl(alice, fid);
    await call(alice, FolderAndFileDelete, { dirids: folder, fids: '', is_real: 0 });
    expect((await open(url)).status).toBe(404);
    await call(alice, FolderAndFileRestore, { dirids: folder, fids: '' });
    expect((await open(url)).status).toBe(200);
  });

  it('a file deleted for good: the links row is gone and the URL answers 404', async () => {
    const fid = await addFile(alice, 'doomed.txt', 'doomed bytes');
    const url = await linkUrl(alice, fid);
    expect((await call(alice, FolderAndFileDelete, { dirids: '', fids: String(fid), is_real: 1 })).result.code).toBe('0');
    const rows = await app.app.services.db.selectFrom('links').select('id').where('file_id', '=', fid).execute();
    expect(rows).toEqual([]);
    expect((await open(url)).status).toBe(404);
  });
});

describe("another account's file", () => {
  it('FileLink and FileUnlink answer 404 and change nothing', async () => {
    const alice = await logIn(app, 'post', 'alice', 'alice-password-1');
    const bob = await newSession(app, 'bob');
    const bobs = await addFile(bob, 'bobs.txt', "bob's bytes");
    const unlinked = await addFile(bob, 'bobs-unlinked.txt', "bob's other bytes");
    const url = await linkUrl(bob, bobs);
    const { db } = app.app.services;
    const state = async () => ({
      links: await db.selectFrom('links').selectAll().orderBy('id').execute(),
      files: await db.selectFrom('files').selectAll().where('account_id', '=', bob.uid).orderBy('id').execute(),
    });
    const before = await state();

    for (const fid of [bobs, unlinked]) {
      const linked = await call(alice, FileLink, { fid });
      expect(linked.result).toEqual({ code: '404', msg: 'file not found', reason: 'file-not-found' });
      expect((await call(alice, FileUnlink, { fid })).result.code).toBe('404');
    }
    expect(await state()).toEqual(before);
    expect((await open(url)).body).toBe("bob's bytes");
    expect((await linkedFiles(alice)).has(String(bobs))).toBe(false);
  });
});
