/** ZipDownload, ShareZipDownload and the /z/ URLs, over HTTP, read back with an independent ZIP reader (yauzl). */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { findOperation } from '../../src/catalog/operations';
import { LockedSinceStart, MAX_ZIP_KEYS, openGrantedZip, signZipToken, verifyZipToken } from '../../src/operations/content/zip-downloads';
import { ZipWriter } from '../../src/protocol/files/zip-writer';
import { LocalDiskStore } from '../../src/storage/content/local-disk-store';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { tempDir } from '../helpers/database';
import { callInForm, ops, resultXml, send } from '../helpers/requests';
import { insertTestFile, sha256Of, storeTestContent } from '../helpers/stored-files';
import { addFolder } from '../helpers/tree';

const ZipDownload = findOperation('FileService', 'ZipDownload')!;
const ShareZipDownload = findOperation('ShareService', 'ShareZipDownload')!;
const FolderShare = findOperation('FileService', 'FolderShare')!;
const PASSWORD = 'correct horse';

let app: TestApp;
let alice: Session;
let bob: Session;

async function addFile(owner: Session, folderId: number, name: string, bytes: string): Promise<number> {
  const content = await storeTestContent(app.app.services, bytes);
  return insertTestFile(app.app.services, { accountId: owner.uid, name, folderId, contentId: content.contentId, sha256: sha256Of(bytes), size: content.size });
}

async function zipUrl(session: Session, params: { dirids?: string; fids?: string }): Promise<{ code: string; url: string; msg: string; reason?: string }> {
  const answer = await callSigned(app, 'post', ZipDownload, session, { dirids: params.dirids ?? '', fids: params.fids ?? '' });
  const result = element(resultXml(answer, ZipDownload), 'result')!;
  return { code: result.attrs.code, url: result.attrs.url, msg: result.attrs.msg, reason: result.attrs.reason };
}

/** A signed call that must succeed (encryption's operations: FileEncrypt, FolderEncrypt, Unlock, Lock, Logout). */
async function ok(session: Session, name: 'FileEncrypt' | 'FolderEncrypt' | 'Unlock' | 'Lock' | 'Logout', params: Record<string, string | number>): Promise<void> {
  const answer = await callSigned(app, 'post', ops[name], session, params);
  expect(element(resultXml(answer, ops[name]), 'result')!.attrs).toMatchObject({ code: '0' });
}

async function shareZipUrl(params: Record<string, string>): Promise<{ code: string; url: string; reason?: string }> {
  const answer = await callInForm(app.url, 'post', ShareZipDownload, { downpwd: '', dir: '', dirids: '', fids: '', ...params });
  const result = element(resultXml(answer, ShareZipDownload), 'result')!;
  return { code: result.attrs.code, url: result.attrs.url, reason: result.attrs.reason };
}

async function fetchZip(url: string): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const answer = await fetch(url);
  return { status: answer.status, headers: answer.headers, body: Buffer.from(await answer.arrayBuffer()) };
}

/** Every entry of a ZIP: path → content ("" for folders). */
function readZip(bytes: Buffer): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true, decodeStrings: true, validateEntrySizes: true }, (error, zip) => {
      if (error) return reject(error);
      const entries = new Map<string, string>();
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) {
          entries.set(entry.fileName, '');
          return zip.readEntry();
        }
        zip.openReadStream(entry, (openError, stream) => {
          if (openError) return reject(openError);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            entries.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
            zip.readEntry();
          });
          stream.on('error', reject);
        });
      });
      zip.on('end', () => resolve(entries));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

let projects: number;
let design: number;
let readme: number;
let loose: number;

beforeAll(async () => {
  app = await startTestApp();
  await addAccount(app, 'alice', 'alice-password-1');
  await addAccount(app, 'bob', 'bob-password-1');
  alice = await logIn(app, 'post', 'alice', 'alice-password-1');
  bob = await logIn(app, 'post', 'bob', 'bob-password-1');
  const services = app.app.services;
  projects = (await addFolder(services, alice.uid, 0, 'Projects')).id;
  design = (await addFolder(services, alice.uid, projects, '设计 Design')).id;
  await addFolder(services, alice.uid, projects, 'Empty');
  readme = await addFile(alice, projects, 'README.md', '# Projects\n');
  await addFile(alice, design, 'logo – v2.svg', '<svg/>');
  loose = await addFile(alice, 0, 'notes.txt', 'loose notes');
});
afterAll(() => app.close());

describe('ZipDownload', () => {
  it('hands out a /z/ URL whose ZIP holds the folder with its subfolders, empty ones too, and UTF-8 names', async () => {
    const result = await zipUrl(alice, { dirids: String(projects) });
    expect(result.code).toBe('0');
    expect(result.url).toMatch(new RegExp(`^${app.url}/z/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}/Projects\\.zip$`));
    const zip = await fetchZip(result.url);
    expect(zip.status).toBe(200);
    expect(zip.headers.get('content-type')).toBe('application/zip');
    expect(zip.headers.get('content-disposition')).toContain('Projects.zip');
    expect(Object.fromEntries(await readZip(zip.body))).toEqual({
      'Projects/': '',
      'Projects/设计 Design/': '',
      'Projects/Empty/': '',
      'Projects/README.md': '# Projects\n',
      'Projects/设计 Design/logo – v2.svg': '<svg/>',
    });
  });

  it('takes a mixed selection: files at the top, folders as paths', async () => {
    const result = await zipUrl(alice, { dirids: String(design), fids: `${loose},${readme}` });
    const entries = await readZip((await fetchZip(result.url)).body);
    expect([...entries.keys()].sort()).toEqual(['README.md', 'notes.txt', '设计 Design/', '设计 Design/logo – v2.svg'].sort());
  });

  it("refuses another account's ids with the same not-found as missing ones", async () => {
    expect((await zipUrl(bob, { dirids: String(projects) })).code).toBe('404');
    expect((await zipUrl(alice, { fids: '999999' })).code).toBe('404');
    expect((await zipUrl(alice, {})).code).toBe('400');
  });

  it('refuses a selection with a locked encrypted file beneath it (423), and the URL of a folder encrypted since serves without it', async () => {
    const folder = (await addFolder(app.app.services, alice.uid, 0, 'Vault')).id;
    const secret = await addFile(alice, folder, 'secret.txt', 'secret');
    await addFile(alice, folder, 'open.txt', 'open');
    const before = await zipUrl(alice, { dirids: String(folder) });
    expect(before.code).toBe('0');
    await ok(alice, 'FileEncrypt', { fid: secret, password: PASSWORD, password_tip: '' });
    expect(await zipUrl(alice, { dirids: String(folder) })).toMatchObject({ code: '423', reason: 'encrypted-locked', url: undefined });
    expect([...(await readZip((await fetchZip(before.url)).body)).keys()]).toEqual(['Vault/', 'Vault/open.txt']);
  });

  it('answers 403 to a forged token, 410 to an expired one, and HEAD with headers only', async () => {
    const secret = app.app.services.secret;
    const expired = signZipToken(secret, { accountId: alice.uid, folderIds: [projects], fileIds: [], expires: new Date(Date.now() - 1000) });
    expect((await send(app.url, 'GET', `/z/${expired}/x.zip`, {})).status).toBe(410);
    expect((await send(app.url, 'GET', `/z/${expired.slice(0, -2)}AA/x.zip`, {})).status).toBe(403);
    const head = await send(app.url, 'HEAD', new URL((await zipUrl(alice, { fids: String(loose) })).url).pathname, {});
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('names a second entry of the same path apart: a file named as a folder beside it, two selected folders of one name', async () => {
    const parent = (await addFolder(app.app.services, alice.uid, 0, 'Clash')).id;
    const folder = (await addFolder(app.app.services, alice.uid, parent, 'Report')).id;
    await addFile(alice, parent, 'Report', 'file');
    await addFile(alice, folder, 'a.txt', 'a');
    const entries = await readZip((await fetchZip((await zipUrl(alice, { dirids: String(parent) })).url)).body);
    expect([...entries.keys()].sort()).toEqual(['Clash/', 'Clash/Report (2)', 'Clash/Report/', 'Clash/Report/a.txt'].sort());
    const other = (await addFolder(app.app.services, alice.uid, projects, 'Report')).id;
    const both = await readZip((await fetchZip((await zipUrl(alice, { dirids: `${folder},${other}` })).url)).body);
    expect([...both.keys()].sort()).toEqual(['Report (2)/', 'Report/', 'Report/a.txt']);
  });
});

describe('ZipDownload of encrypted items', () => {
  const deepBytes = Buffer.alloc(300_000, 0);
  for (let i = 0; i < deepBytes.length; i++) deepBytes[i] = (i * 7 + (i >> 9)) & 0xff;
  let safe: number;
  /** A session of Alice's own, so that its unlocks are its alone. */
  const unlockedSession = async (): Promise<Session> => {
    const session = await logIn(app, 'post', 'alice', 'alice-password-1');
    await ok(session, 'Unlock', { dirid: safe, fid: 0, password: PASSWORD });
    return session;
  };

  beforeAll(async () => {
    safe = (await addFolder(app.app.services, alice.uid, 0, 'Safe')).id;
    const inner = (await addFolder(app.app.services, alice.uid, safe, 'Inner')).id;
    await addFile(alice, safe, 'plan.txt', 'the plan, in plaintext');
    const content = await storeTestContent(app.app.services, deepBytes);
    await insertTestFile(app.app.services, { accountId: alice.uid, name: 'deep.bin', folderId: inner, contentId: content.contentId, sha256: sha256Of(deepBytes), size: deepBytes.length });
    await ok(alice, 'FolderEncrypt', { dirid: safe, password: PASSWORD, password_tip: 'the usual' });
  });

  it('zips a folder the session has unlocked with the plaintext bytes, which python3 zipfile checks entry by entry (CRC-32)', async () => {
    const session = await unlockedSession();
    const result = await zipUrl(session, { dirids: String(safe) });
    expect(result.code).toBe('0');
    const zip = await fetchZip(result.url);
    expect(zip.status).toBe(200);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fss-zip-'));
    try {
      await writeFile(path.join(dir, 'safe.zip'), zip.body);
      const script = [
        'import hashlib, sys, zipfile',
        'z = zipfile.ZipFile(sys.argv[1])',
        'assert z.testzip() is None',
        'for info in z.infolist(): print(info.filename, hashlib.sha256(z.read(info)).hexdigest())',
      ].join('\n');
      const { stdout } = await promisify(execFile)('python3', ['-c', script, path.join(dir, 'safe.zip')]);
      const digest = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
      expect(stdout.trim().split('\n').sort()).toEqual(
        [`Safe/ ${digest('')}`, `Safe/Inner/ ${digest('')}`, `Safe/plan.txt ${digest('the plan, in plaintext')}`, `Safe/Inner/deep.bin ${digest(deepBytes)}`].sort(),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a session that has not unlocked the folder with 423 encrypted-locked and no URL, for the folder and for a file in it', async () => {
    const locked = await logIn(app, 'post', 'alice', 'alice-password-1');
    expect(await zipUrl(locked, { dirids: String(safe) })).toMatchObject({ code: '423', reason: 'encrypted-locked', url: undefined });
    const plan = (await app.app.services.db.selectFrom('files').select('id').where('name', '=', 'plan.txt').where('folder_id', '=', safe).executeTakeFirstOrThrow()).id;
    expect(await zipUrl(locked, { fids: String(plan) })).toMatchObject({ code: '423', reason: 'encrypted-locked' });
  });

  it('refuses a URL handed out before its session locked the folder, or logged out (423)', async () => {
    const locking = await unlockedSession();
    const first = await zipUrl(locking, { dirids: String(safe) });
    await ok(locking, 'Lock', { dirid: safe, fid: 0 });
    expect((await fetchZip(first.url)).status).toBe(423);
    const leaving = await unlockedSession();
    const second = await zipUrl(leaving, { dirids: String(safe) });
    await ok(leaving, 'Logout', {});
    expect((await fetchZip(second.url)).status).toBe(423);
  });

  it('cuts the archive at the next encrypted entry when the session locks the folder while it is being sent', async () => {
    const session = await unlockedSession();
    const token = new URL((await zipUrl(session, { dirids: String(safe) })).url).pathname.split('/')[2];
    const check = verifyZipToken(app.app.services.secret, token, new Date());
    if (check.kind !== 'valid') throw new Error(check.kind);
    const lookup = await openGrantedZip(app.app.services, check.grant);
    if (lookup.kind !== 'found') throw new Error(lookup.kind);
    const iterator = lookup.entries[Symbol.asyncIterator]();
    let entry = (await iterator.next()).value;
    while (entry.kind === 'folder') entry = (await iterator.next()).value;
    await ok(session, 'Lock', { dirid: safe, fid: 0 });
    if (entry.kind !== 'file') throw new Error('no file entry');
    await expect(entry.open()).rejects.toBeInstanceOf(LockedSinceStart);
  });

  it("does not open the URL's keys for another session or another account", async () => {
    const session = await unlockedSession();
    const token = new URL((await zipUrl(session, { dirids: String(safe) })).url).pathname.split('/')[2];
    const check = verifyZipToken(app.app.services.secret, token, new Date());
    if (check.kind !== 'valid' || !check.grant.unlocked) throw new Error('no unlocked grant');
    const { grant } = check;
    const bobsToken = (await app.app.services.db.selectFrom('tokens').select('id').where('account_id', '=', bob.uid).executeTakeFirstOrThrow()).id;
    const asBobsSession = signZipToken(app.app.services.secret, { ...grant, unlocked: { ...grant.unlocked!, tokenId: bobsToken } });
    expect((await send(app.url, 'GET', `/z/${asBobsSession}/x.zip`, {})).status).toBe(423);
    const asBobsAccount = signZipToken(app.app.services.secret, { ...grant, accountId: bob.uid });
    expect((await send(app.url, 'GET', `/z/${asBobsAccount}/x.zip`, {})).status).toBe(423);
  });

  it(`refuses a selection under more than ${MAX_ZIP_KEYS} passwords with 413 too-many-keys`, async () => {
    const session = await logIn(app, 'post', 'alice', 'alice-password-1');
    const folder = (await addFolder(app.app.services, alice.uid, 0, 'Many keys')).id;
    const fids: number[] = [];
    for (let i = 0; i <= MAX_ZIP_KEYS; i++) {
      const fid = await addFile(alice, folder, `f${i}.txt`, `file ${i}`);
      await ok(session, 'FileEncrypt', { fid, password: `${PASSWORD} ${i}`, password_tip: '' });
      await ok(session, 'Unlock', { dirid: 0, fid, password: `${PASSWORD} ${i}` });
      fids.push(fid);
    }
    expect(await zipUrl(session, { dirids: String(folder) })).toMatchObject({ code: '413', reason: 'too-many-keys', url: undefined });
    const entries = await readZip((await fetchZip((await zipUrl(session, { fids: fids.slice(1).join(',') })).url)).body);
    expect(entries.get('f1.txt')).toBe('file 1');
    expect(entries.size).toBe(MAX_ZIP_KEYS);
  }, 120_000);
});

describe('ShareZipDownload', () => {
  async function shareFolder(folderId: number, downValue: number): Promise<string> {
    const answer = await callSigned(app, 'post', FolderShare, alice, { dirids: String(folderId), downpwd: '', downValue, description: '' });
    return element(resultXml(answer, FolderShare), 'folder')!.attrs.code;
  }

  it('zips the whole shared folder for a visitor and counts one download; the limit then refuses', async () => {
    const code = await shareFolder(projects, 1);
    const result = await shareZipUrl({ code });
    expect(result.code).toBe('0');
    expect([...(await readZip((await fetchZip(result.url)).body)).keys()]).toContain('Projects/设计 Design/logo – v2.svg');
    expect(await shareZipUrl({ code })).toMatchObject({ code: '403', reason: 'download-limit' });
  });

  it('zips a selection inside a subfolder of the share, and refuses ids outside it', async () => {
    const code = await shareFolder(projects, 0);
    const inside = await shareZipUrl({ code, fids: String(readme) });
    expect([...(await readZip((await fetchZip(inside.url)).body)).keys()]).toEqual(['README.md']);
    expect((await shareZipUrl({ code, fids: String(loose) })).code).toBe('404');
    expect((await shareZipUrl({ code, dir: String(design) })).code).toBe('0');
  });

  it('never serves an encrypted item, even one its owner has unlocked: 423 at the call, left out of an earlier URL', async () => {
    const folder = (await addFolder(app.app.services, alice.uid, 0, 'Shelf')).id;
    await addFile(alice, folder, 'public.txt', 'public');
    const secret = await addFile(alice, folder, 'private.txt', 'private');
    const code = await shareFolder(folder, 0);
    const before = await shareZipUrl({ code });
    await ok(alice, 'FileEncrypt', { fid: secret, password: PASSWORD, password_tip: '' });
    await ok(alice, 'Unlock', { dirid: 0, fid: secret, password: PASSWORD });
    expect(await shareZipUrl({ code })).toMatchObject({ code: '423', reason: 'encrypted-in-share', url: undefined });
    expect([...(await readZip((await fetchZip(before.url)).body)).keys()]).toEqual(['Shelf/', 'Shelf/public.txt']);
  });

  it('stops serving once the folder is unshared', async () => {
    const folder = (await addFolder(app.app.services, alice.uid, 0, 'Brief')).id;
    await addFile(alice, folder, 'brief.txt', 'brief');
    const code = await shareFolder(folder, 0);
    const { url } = await shareZipUrl({ code });
    await app.app.services.db.deleteFrom('shares').where('code', '=', code).execute();
    expect((await fetchZip(url)).status).toBe(404);
  });
});

describe('ZipWriter', () => {
  it('writes ZIP64 end records when there are 65,535 entries or more', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (chunk: Buffer) => chunks.push(chunk));
    const zip = new ZipWriter(out);
    for (let i = 0; i < 65_600; i++) await zip.directory(`d${i}`, new Date());
    await zip.finish();
    out.end();
    const entries = await readZip(Buffer.concat(chunks));
    expect(entries.size).toBe(65_600);
    expect(entries.has('d65599/')).toBe(true);
  });

  /** A local-disk blob of these bytes, as the ZIP route opens it. */
  async function localBlob(bytes: string): Promise<{ store: LocalDiskStore; key: string }> {
    const dir = tempDir('fss-zip-blobs-');
    const store = new LocalDiskStore(path.join(dir, 'content'));
    const key = store.newKey(sha256Of(bytes));
    await writeFile(path.join(dir, 'source'), bytes);
    await store.putFile(key, path.join(dir, 'source'));
    return { store, key };
  }

  it('refills a read buffer only once the output has taken it: local blobs through a slow output arrive whole', async () => {
    const texts = [randomBytes(700_000).toString('hex'), randomBytes(900_000).toString('hex')];
    const chunks: Buffer[] = [];
    // Takes each chunk a millisecond after it was written, as a socket does: a buffer reused sooner would show here.
    const out = new Writable({ write: (chunk: Buffer, _encoding, done) => void setTimeout(() => (chunks.push(Buffer.from(chunk)), done()), 1) });
    const zip = new ZipWriter(out);
    for (const [i, text] of texts.entries()) {
      const { store, key } = await localBlob(text);
      await zip.file(`part${i}.txt`, new Date(), text.length, await store.read(key));
    }
    await zip.finish();
    await new Promise<void>((resolve) => out.end(resolve));
    const entries = await readZip(Buffer.concat(chunks));
    expect(entries.get('part0.txt')).toBe(texts[0]);
    expect(entries.get('part1.txt')).toBe(texts[1]);
  });

  it('refuses a local blob shorter or longer than its entry, and closes its file', async () => {
    const { store, key } = await localBlob('eleven byte');
    for (const size of [10, 12]) {
      const body = await store.read(key);
      const closed = new Promise((resolve) => body.once('close', resolve));
      await expect(new ZipWriter(new PassThrough()).file('odd.txt', new Date(), size, body)).rejects.toThrow(`11 bytes read where ${size} were expected`);
      await closed;
    }
  });
});
