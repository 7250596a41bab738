/**
 * Every operation that takes an id, given another account's ids: the same 404 as for an id that
 * does not exist, and nothing changes — in either account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationName } from '../../src/catalog/operations';
import { callSigned, element, newSession, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { callInForm, ops, resultXml, type Value } from '../helpers/requests';

let app: TestApp;
let alice: Session;
let bob: Session;
/** Bob's items, which Alice will try to reach. */
const bobs = { folder: 0, binnedFolder: 0, file: 0, fileHash: '', fileSize: 0 };

async function call(session: Session, name: OperationName, params: Record<string, Value>) {
  const operation = ops[name];
  const answer = await callSigned(app, 'post', operation, session, params);
  return element(resultXml(answer, operation), 'result')!.attrs;
}

/** Everything both accounts have, as rows: what must not change. */
async function everything() {
  const { db } = app.app.services;
  return {
    folders: await db.selectFrom('folders').selectAll().orderBy('id').execute(),
    files: await db.selectFrom('files').selectAll().orderBy('id').execute(),
    accounts: await db.selectFrom('accounts').select(['id', 'used_bytes']).orderBy('id').execute(),
    shares: await db.selectFrom('shares').selectAll().orderBy('id').execute(),
    links: await db.selectFrom('links').selectAll().orderBy('id').execute(),
    emails: await db.selectFrom('emails').selectAll().orderBy('id').execute(),
    keys: await db.selectFrom('encryption_keys').selectAll().orderBy('id').execute(),
  };
}

beforeAll(async () => {
  // FSS_PUBLIC_URL: without it the e-mail shares refuse every call (503) before they look at an id.
  app = await startTestApp({ FSS_PUBLIC_URL: 'https://files.example.com' });
  alice = await newSession(app, 'alice');
  bob = await newSession(app, 'bob');

  const folder = await callSigned(app, 'post', ops.FolderAdd, bob, { dirid: 0, name: 'Private' });
  bobs.folder = Number(element(resultXml(folder, ops.FolderAdd), 'folder')!.attrs.id);
  const binned = await callSigned(app, 'post', ops.FolderAdd, bob, { dirid: 0, name: 'Binned' });
  bobs.binnedFolder = Number(element(resultXml(binned, ops.FolderAdd), 'folder')!.attrs.id);

  // A file for bob: content in the database as an upload leaves it, added through FileAdd.
  const { db } = app.app.services;
  const bytes = Buffer.from("bob's file");
  const hash = (await import('node:crypto')).createHash('sha256').update(bytes).digest('hex');
  const content = await db
    .insertInto('content')
    .values({ sha256: hash, size: bytes.length, storage_key: `test/${hash}`, created_at: Date.now() })
    .returning('id')
    .executeTakeFirstOrThrow();
  const bobId = bob.uid;
  const existing = await db
    .insertInto('files')
    .values({
      account_id: bobId, folder_id: bobs.folder, name: 'seed.txt', name_key: 'seed.txt', sort_key: 'seed.txt', ext: 'txt',
      sha256: hash, size: bytes.length, content_id: content.id, created_at: Date.now(), updated_at: Date.now(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  bobs.file = existing.id;
  bobs.fileHash = hash;
  bobs.fileSize = bytes.length;
  await call(bob, 'FolderAndFileDelete', { dirids: String(bobs.binnedFolder), fids: '', is_real: 0 });
});
afterAll(() => app.close());

const listing = { order: 'name', desc: '0' };

/** Each id-bearing operation with Bob's ids in its id parameters, and otherwise valid arguments. */
const attempts: Array<[string, () => Promise<Record<string, string>>]> = [
  ['FolderRename', () => call(alice, 'FolderRename', { dirid: bobs.folder, newname: 'Mine now' })],
  ['FileRename', () => call(alice, 'FileRename', { fid: bobs.file, newname: 'mine.txt' })],
  ['FolderAdd into a foreign folder', () => call(alice, 'FolderAdd', { dirid: bobs.folder, name: 'intruder' })],
  ['Move a foreign folder', () => call(alice, 'Move', { dirids: String(bobs.folder), fids: '', todir: 0 })],
  ['Move a foreign file', () => call(alice, 'Move', { dirids: '', fids: String(bobs.file), todir: 0 })],
  ['Move into a foreign folder', async () => {
    const FolderAdd = ops.FolderAdd;
    const added = await callSigned(app, 'post', FolderAdd, alice, { dirid: 0, name: `to move ${Date.now()}` });
    const mine = element(resultXml(added, FolderAdd), 'folder')!.attrs.id;
    return call(alice, 'Move', { dirids: mine, fids: '', todir: bobs.folder });
  }],
  ['FolderAndFileDelete to the bin', () => call(alice, 'FolderAndFileDelete', { dirids: String(bobs.folder), fids: String(bobs.file), is_real: 0 })],
  ['FolderAndFileDelete for good', () => call(alice, 'FolderAndFileDelete', { dirids: String(bobs.folder), fids: String(bobs.file), is_real: 1 })],
  ['FolderDelete', () => call(alice, 'FolderDelete', { dirids: String(bobs.folder), is_real: 1 })],
  ['FolderAndFileRestore', () => call(alice, 'FolderAndFileRestore', { dirids: String(bobs.binnedFolder), fids: '' })],
  ['FileAdd into a foreign folder', () =>
    call(alice, 'FileAdd', { name: 'x.txt', ext: 'txt', size: bobs.fileSize, dirid: bobs.folder, hash: bobs.fileHash })],
  ['FileAdd claiming foreign content', () =>
    call(alice, 'FileAdd', { name: 'x.txt', ext: 'txt', size: bobs.fileSize, dirid: 0, hash: bobs.fileHash })],
  ['FileDownload', () => call(alice, 'FileDownload', { fid: bobs.file })],
  ['FileShare', () => call(alice, 'FileShare', { fids: String(bobs.file), downpwd: '', downValue: 0, description: '' })],
  ['FolderShare', () => call(alice, 'FolderShare', { dirids: String(bobs.folder), downpwd: 'abcd', downValue: 3, description: 'x' })],
  ['Unshare', () => call(alice, 'Unshare', { dirids: String(bobs.folder), fids: String(bobs.file) })],
  ['FileEncrypt', () => call(alice, 'FileEncrypt', { fid: bobs.file, password: 'secret-1', password_tip: 'tip' })],
  ['FolderEncrypt', () => call(alice, 'FolderEncrypt', { dirid: bobs.folder, password: 'secret-1', password_tip: 'tip' })],
  ['Unlock', () => call(alice, 'Unlock', { dirid: bobs.folder, fid: 0, password: 'secret-1' })],
  ['Decrypt', () => call(alice, 'Decrypt', { dirid: 0, fid: bobs.file, password: 'secret-1' })],
  ['FileLink', () => call(alice, 'FileLink', { fid: bobs.file })],
  ['FileUnlink', () => call(alice, 'FileUnlink', { fid: bobs.file })],
  ['FolderEmailShare', () => call(alice, 'FolderEmailShare', { dirid: bobs.folder, to: 'friend@example.com' })],
  ['FileEmailShare', () => call(alice, 'FileEmailShare', { fid: bobs.file, to: 'friend@example.com' })],
  ['GetFolderEmailShareInfo', () => call(alice, 'GetFolderEmailShareInfo', { dirid: bobs.folder })],
  ['GetFileEmailShareInfo', () => call(alice, 'GetFileEmailShareInfo', { fid: bobs.file })],
  ['GetFiles', () => call(alice, 'GetFiles', { dir: String(bobs.folder), ...listing })],
  ['GetFilesWhitPath', () => call(alice, 'GetFilesWhitPath', { dir: String(bobs.folder), ...listing })],
];

describe("another account's ids", () => {
  for (const [name, attempt] of attempts) {
    it(`${name}: 404, and nothing changes`, async () => {
      const before = await everything();
      const refused = await attempt();
      expect(refused.code).toBe('404');
      const after = await everything();
      // "Move into a foreign folder" adds a folder of Alice's own first; compare Bob's rows only there.
      const bobsRows = (state: typeof before) => ({
        folders: state.folders.filter((f) => f.account_id === bob.uid),
        files: state.files.filter((f) => f.account_id === bob.uid),
      });
      expect(bobsRows(after)).toEqual(bobsRows(before));
      if (!name.startsWith('Move into')) expect(after).toEqual(before);
    });
  }

  it('ShareImageUpload (token only): ERROR 404, and nothing changes', async () => {
    const before = await everything();
    const ShareImageUpload = ops.ShareImageUpload;
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
    const answer = await callInForm(app.url, 'post', ShareImageUpload, {
      uid: alice.uid,
      token: alice.token,
      fid: bobs.file,
      ImagefileName: 'cover.png',
      byteFileStream: png,
    });
    expect(resultXml(answer, ShareImageUpload)).toMatch(/<string [^>]*>ERROR 404 /);
    expect(await everything()).toEqual(before);
  });

  it('is answered exactly as an id that does not exist', async () => {
    const foreign = await call(alice, 'FolderRename', { dirid: bobs.folder, newname: 'x' });
    const missing = await call(alice, 'FolderRename', { dirid: 987_654_321, newname: 'x' });
    expect(foreign.msg.replace(String(bobs.folder), 'N')).toBe(missing.msg.replace('987654321', 'N'));
  });
});
