/**
 * FileLink, FileUnlink and the link resolver on a real database: one link per file, made once;
 * 404 for anything that is not a live file of the caller; 423 for locked files; the bin hides a
 * link and a restore brings it back; hits count transfers, not requests.
 */
import { describe, expect, it } from 'vitest';
import type { Services } from '../../src/operations/context';
import { ResultCode } from '../../src/operations/errors';
import { fileLink, fileUnlink, openLinkedFile, startsTransfer, type LinkLookup } from '../../src/operations/sharing/links';
import { callContext, openTestServices } from '../helpers/database';
import { rejected } from '../helpers/refusals';
import { insertTestAccount, insertTestFile, storeTestContent } from '../helpers/stored-files';

const CODE_URL = /^http:\/\/fss\.test\/l\/([A-Za-z0-9_-]{22})\/(.*)$/;

async function setup() {
  const services = await openTestServices();
  const alice = await insertTestAccount(services, 'alice');
  const bob = await insertTestAccount(services, 'bob');
  return { services, alice, bob };
}

async function addFile(services: Services, accountId: number, name: string, bytes = `bytes of ${name}`, extra: { folderId?: number } = {}) {
  const content = await storeTestContent(services, `${bytes} ${Math.random()}`);
  return insertTestFile(services, { accountId, name, ...content, ...extra });
}

async function addFolder(services: Services, accountId: number, name: string, parentId = 0): Promise<number> {
  const row = await services.db
    .insertInto('folders')
    .values({ account_id: accountId, parent_id: parentId, name, name_key: name.toLowerCase(), created_at: 0, updated_at: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const as = (services: Services, uid: number) => callContext(services, { uid, tokenId: 0, token: 'test-token' });
const signed = (uid: number, fid: number) => ({ uid: BigInt(uid), token: 'test-token', fid: BigInt(fid), sign: '' });

const link = (services: Services, uid: number, fid: number) => fileLink(as(services, uid), signed(uid, fid));
const unlink = (services: Services, uid: number, fid: number) => fileUnlink(as(services, uid), signed(uid, fid));

function codeOf(url: string): string {
  const match = CODE_URL.exec(url);
  expect(match, url).not.toBeNull();
  return match![1];
}

async function linksRows(services: Services) {
  return services.db.selectFrom('links').selectAll().orderBy('id').execute();
}

async function linkedFlag(services: Services, fid: number): Promise<number> {
  return (await services.db.selectFrom('files').select('linked').where('id', '=', fid).executeTakeFirstOrThrow()).linked;
}

async function readAll(lookup: LinkLookup): Promise<string> {
  if (lookup.kind !== 'found') throw new Error(`expected a file, got ${lookup.kind}`);
  const chunks: Buffer[] = [];
  for await (const chunk of await lookup.file.open()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('FileLink', () => {
  it('gives a live file a permanent URL /l/{code}/{name}: 128-bit base64url code, no expiry, the linked flag set', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, '报告 #1.txt');
    const result = await link(services, alice, fid);
    expect(result.kind).toBe('url');
    expect(result.expires).toBeUndefined();
    const code = codeOf(result.url);
    expect(Buffer.from(code, 'base64url')).toHaveLength(16);
    expect(result.url).toBe(`http://fss.test/l/${code}/${encodeURIComponent('报告 #1.txt')}`);
    expect(await linkedFlag(services, fid)).toBe(1);
    expect(await linksRows(services)).toMatchObject([{ account_id: alice, file_id: fid, code, hits: 0 }]);
  });

  it('is idempotent: a second FileLink answers the same URL and makes no second row', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, 'a.txt');
    const first = await link(services, alice, fid);
    const second = await link(services, alice, fid);
    expect(second.url).toBe(first.url);
    expect(await linksRows(services)).toHaveLength(1);
  });

  it('gives every file its own code', async () => {
    const { services, alice } = await setup();
    const codes = new Set<string>();
    for (let i = 0; i < 20; i++) codes.add(codeOf((await link(services, alice, await addFile(services, alice, `f${i}.txt`))).url));
    expect(codes.size).toBe(20);
  });

  it('answers 404, and changes nothing, for another account’s file, a file in the bin, beneath a binned folder, or an unknown id', async () => {
    const { services, alice, bob } = await setup();
    const bobs = await addFile(services, bob, 'bobs.txt');
    const binned = await addFile(services, alice, 'binned.txt');
    await services.db.updateTable('files').set({ deleted_at: 1, deleted_from: '/' }).where('id', '=', binned).execute();
    const beneath = await addFile(services, alice, 'beneath.txt');
    await services.db.updateTable('files').set({ binned_under: 12345 }).where('id', '=', beneath).execute();
    for (const fid of [bobs, binned, beneath, 999_999, 0]) {
      const refusal = await rejected(link(services, alice, fid));
      expect(refusal.code).toBe(ResultCode.NotFound);
      expect(refusal.message).toBe('file not found');
    }
    expect(await linksRows(services)).toEqual([]);
    expect(await linkedFlag(services, bobs)).toBe(0);
  });

  it('refuses an encrypted file with 423, its id and tip', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, 'secret.txt');
    await services.db.updateTable('files').set({ encrypted: 1 }).where('id', '=', fid).execute();
    const refusal = await rejected(link(services, alice, fid));
    expect(refusal.code).toBe(ResultCode.Locked);
    expect(refusal.details).toEqual({ id: fid, tip: '' });
    expect(await linksRows(services)).toEqual([]);
    expect(await linkedFlag(services, fid)).toBe(0);
  });

  it('refuses a file whose content is encrypted at rest, though its record says nothing', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, 'sealed.txt');
    const { content_id } = await services.db.selectFrom('files').select('content_id').where('id', '=', fid).executeTakeFirstOrThrow();
    await services.db.updateTable('content').set({ encrypted: 1 }).where('id', '=', content_id).execute();
    expect((await rejected(link(services, alice, fid))).details).toEqual({ id: fid, tip: '' });
  });

  it('refuses a file beneath an encrypted folder, naming the nearest encrypted folder', async () => {
    const { services, alice } = await setup();
    const outer = await addFolder(services, alice, 'Outer');
    const vault = await addFolder(services, alice, 'Vault', outer);
    const inner = await addFolder(services, alice, 'Inner', vault);
    await services.db.updateTable('folders').set({ encrypted: 1 }).where('id', 'in', [outer, vault]).execute();
    const fid = await addFile(services, alice, 'deep.txt', 'deep', { folderId: inner });
    const refusal = await rejected(link(services, alice, fid));
    expect(refusal.code).toBe(ResultCode.Locked);
    expect(refusal.details).toEqual({ id: vault, tip: '' });
    expect(refusal.message).toMatch(/encrypted folder/);
  });

  it('links a file in an ordinary folder whose sibling folder is encrypted', async () => {
    const { services, alice } = await setup();
    const plain = await addFolder(services, alice, 'Plain');
    const vault = await addFolder(services, alice, 'Vault');
    await services.db.updateTable('folders').set({ encrypted: 1 }).where('id', '=', vault).execute();
    const fid = await addFile(services, alice, 'open.txt', 'open', { folderId: plain });
    expect((await link(services, alice, fid)).kind).toBe('url');
  });
});

describe('FileUnlink', () => {
  it('removes the link and clears the flag; the code stops answering', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, 'a.txt');
    const code = codeOf((await link(services, alice, fid)).url);
    expect((await openLinkedFile(services, code)).kind).toBe('found');
    expect(await unlink(services, alice, fid)).toEqual({ kind: 'empty' });
    expect(await linksRows(services)).toEqual([]);
    expect(await linkedFlag(services, fid)).toBe(0);
    expect((await openLinkedFile(services, code)).kind).toBe('notFound');
  });

  it('is idempotent: a live file without a link answers code 0', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, 'never-linked.txt');
    expect(await unlink(services, alice, fid)).toEqual({ kind: 'empty' });
    expect(await unlink(services, alice, fid)).toEqual({ kind: 'empty' });
  });

  it('linking again makes a new code: the old URL stays dead', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, 'a.txt');
    const before = codeOf((await link(services, alice, fid)).url);
    await unlink(services, alice, fid);
    const after = codeOf((await link(services, alice, fid)).url);
    expect(after).not.toBe(before);
    expect((await openLinkedFile(services, before)).kind).toBe('notFound');
    expect((await openLinkedFile(services, after)).kind).toBe('found');
  });

  it('another account’s file: 404, and its link stays', async () => {
    const { services, alice, bob } = await setup();
    const bobs = await addFile(services, bob, 'bobs.txt');
    await link(services, bob, bobs);
    const before = await linksRows(services);
    expect((await rejected(unlink(services, alice, bobs))).code).toBe(ResultCode.NotFound);
    expect(await linksRows(services)).toEqual(before);
    expect(await linkedFlag(services, bobs)).toBe(1);
  });

  it('works on a locked file: taking a file off the web never needs its password', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, 'later-encrypted.txt');
    const code = codeOf((await link(services, alice, fid)).url);
    await services.db.updateTable('files').set({ encrypted: 1 }).where('id', '=', fid).execute();
    expect((await openLinkedFile(services, code)).kind).toBe('locked');
    await unlink(services, alice, fid);
    expect((await openLinkedFile(services, code)).kind).toBe('notFound');
  });
});

describe('the link resolver', () => {
  it('serves the linked file’s name, type, size, validator and bytes', async () => {
    const { services, alice } = await setup();
    const content = await storeTestContent(services, 'hello, link');
    const fid = await insertTestFile(services, { accountId: alice, name: 'Hello.TXT', ...content });
    const code = codeOf((await link(services, alice, fid)).url);
    const lookup = await openLinkedFile(services, code);
    expect(lookup).toMatchObject({ kind: 'found', file: { name: 'Hello.TXT', ext: 'txt', size: 11, sha256: content.sha256 } });
    expect(await readAll(lookup)).toBe('hello, link');
  });

  it('an unknown or malformed code is notFound', async () => {
    const { services } = await setup();
    for (const code of ['A'.repeat(22), 'short', `${'A'.repeat(21)}=`, "'; drop table links; --", '']) {
      expect((await openLinkedFile(services, code)).kind).toBe('notFound');
    }
  });

  it('the bin hides the file at once (itself or a folder above it); a restore brings it back', async () => {
    const { services, alice } = await setup();
    const folder = await addFolder(services, alice, 'Docs');
    const fid = await addFile(services, alice, 'a.txt', 'a', { folderId: folder });
    const code = codeOf((await link(services, alice, fid)).url);
    const files = services.db.updateTable('files').where('id', '=', fid);

    await files.set({ deleted_at: 1, deleted_from: '/Docs' }).execute();
    expect((await openLinkedFile(services, code)).kind).toBe('notFound');
    await files.set({ deleted_at: null, deleted_from: null }).execute();
    expect((await openLinkedFile(services, code)).kind).toBe('found');

    await files.set({ binned_under: folder }).execute();
    expect((await openLinkedFile(services, code)).kind).toBe('notFound');
    await files.set({ binned_under: null }).execute();
    expect((await openLinkedFile(services, code)).kind).toBe('found');
  });

  it('a file deleted for good takes its link with it (the foreign key cascades)', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, 'a.txt');
    const code = codeOf((await link(services, alice, fid)).url);
    await services.db.deleteFrom('files').where('id', '=', fid).execute();
    expect(await linksRows(services)).toEqual([]);
    expect((await openLinkedFile(services, code)).kind).toBe('notFound');
  });

  it('a link row whose account is not the file’s owner leads nowhere', async () => {
    const { services, alice, bob } = await setup();
    const fid = await addFile(services, alice, 'a.txt');
    const code = 'B'.repeat(22);
    await services.db.insertInto('links').values({ account_id: bob, file_id: fid, code, created_at: 0 }).execute();
    expect((await openLinkedFile(services, code)).kind).toBe('notFound');
  });

  it('a file moved into an encrypted folder after it was linked is locked', async () => {
    const { services, alice } = await setup();
    const vault = await addFolder(services, alice, 'Vault');
    const fid = await addFile(services, alice, 'a.txt');
    const code = codeOf((await link(services, alice, fid)).url);
    await services.db.updateTable('folders').set({ encrypted: 1 }).where('id', '=', vault).execute();
    await services.db.updateTable('files').set({ folder_id: vault }).where('id', '=', fid).execute();
    expect((await openLinkedFile(services, code)).kind).toBe('locked');
  });

  it('counts a hit for a transfer from byte 0, whole or ranged, and not for a continuation', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, 'a.txt');
    const code = codeOf((await link(services, alice, fid)).url);
    const lookup = await openLinkedFile(services, code);
    if (lookup.kind !== 'found') throw new Error(lookup.kind);
    await lookup.recordTransfer(undefined);
    await lookup.recordTransfer({ start: 0, end: 99 });
    await lookup.recordTransfer({ start: 100, end: 199 });
    expect((await linksRows(services))[0].hits).toBe(2);
  });

  it('counts concurrent hits without losing any', async () => {
    const { services, alice } = await setup();
    const fid = await addFile(services, alice, 'a.txt');
    const code = codeOf((await link(services, alice, fid)).url);
    const lookups = await Promise.all(Array.from({ length: 25 }, () => openLinkedFile(services, code)));
    await Promise.all(lookups.map((lookup) => (lookup.kind === 'found' ? lookup.recordTransfer(undefined) : Promise.reject(new Error(lookup.kind)))));
    expect((await linksRows(services))[0].hits).toBe(25);
  });

  it('startsTransfer: no range, or a range from byte 0', () => {
    expect(startsTransfer(undefined)).toBe(true);
    expect(startsTransfer({ start: 0, end: 0 })).toBe(true);
    expect(startsTransfer({ start: 1, end: 10 })).toBe(false);
  });
});
