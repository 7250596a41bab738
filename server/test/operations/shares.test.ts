/**
 * Sharing by the owner (DECISIONS.md §9) on a real SQLite file: FileShare, FolderShare, Unshare,
 * ensureShare, the sealed extraction code, what GetShareFiles shows, and the refusals (400, 404,
 * 423), each batch all-or-nothing.
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import type { FileItem, FolderItem, Listing, Services } from '../../src/operations/context';
import { ResultCode } from '../../src/operations/errors';
import { getShareFiles } from '../../src/operations/tree/listings';
import { removeUnreferencedContent } from '../../src/operations/content/content-removal';
import { checkIntegrity, problemCount } from '../../src/operations/admin/integrity';
import { openShareImage, shareImageUpload } from '../../src/operations/sharing/share-images';
import { contentStoreFor } from '../../src/storage/content/stores';
import { usedBytesMismatches } from '../../src/storage/db/repositories/integrity-repository';
import { folderAndFileDelete } from '../../src/operations/tree/recycle-bin';
import {
  ensureShare,
  extractionCodeStamp,
  fileShare,
  folderShare,
  openExtractionCode,
  sealExtractionCode,
  SHARE_CODE_FORMAT,
  shareImageTag,
  unshare,
} from '../../src/operations/sharing/shares';
import { openTestServices, type TestServices } from '../helpers/database';
import { rejected } from '../helpers/refusals';
import { addFile, addFolder, as, testAccount } from '../helpers/tree';

const signed = { uid: 0n, token: 'test-token', sign: '' };

interface Settings {
  downpwd?: string | null;
  downValue?: number;
  description?: string | null;
}

const shareFiles = (services: Services, accountId: number, fids: string, settings: Settings = {}) =>
  fileShare(as(services, accountId), { ...signed, fids, downpwd: '', downValue: 0, description: '', ...settings });
const shareFolders = (services: Services, accountId: number, dirids: string, settings: Settings = {}) =>
  folderShare(as(services, accountId), { ...signed, dirids, downpwd: '', downValue: 0, description: '', ...settings });
const unshareItems = (services: Services, accountId: number, dirids: string, fids: string) =>
  unshare(as(services, accountId), { ...signed, dirids, fids });

async function drain<T>(items: Iterable<T> | AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function sharedListing(services: Services, accountId: number) {
  const listing = (await getShareFiles(as(services, accountId), { ...signed, order: 'name', desc: '0' })) as Listing;
  return { count: listing.count, folders: await drain(listing.folders), files: await drain(listing.files) };
}

const shareRows = (services: Services) => services.db.selectFrom('shares').selectAll().orderBy('id').execute();
const flags = async (services: Services, table: 'folders' | 'files', id: number) =>
  (await services.db.selectFrom(table).select('shared').where('id', '=', id).executeTakeFirstOrThrow()).shared;

async function aliceAndBob(): Promise<{ services: TestServices; alice: number; bob: number }> {
  const services = await openTestServices();
  return { services, alice: await testAccount(services, 'alice'), bob: await testAccount(services, 'bob') };
}

describe('FileShare', () => {
  test('gives each file one share with a 128-bit code, sets its flag, and answers the files with their share attributes', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFile(services, alice, 0, 'a.txt', 3);
    const b = await addFile(services, alice, 0, 'b.txt', 4);

    const result = (await shareFiles(services, alice, `${a.id}, ${b.id}`, { downpwd: 'ab12', downValue: 5, description: "it's (ok)!" })) as Listing;
    expect(result.count).toBe(2);
    const files = result.files as FileItem[];
    expect(files.map((file) => file.id)).toEqual([a.id, b.id]);
    for (const file of files) {
      expect(file.shared).toBe(true);
      expect(file.share!.code).toMatch(SHARE_CODE_FORMAT);
      expect(file.share).toEqual({
        code: file.share!.code,
        url: `http://fss.test/s/${file.share!.code}`,
        downpwd: 'ab12',
        downValue: 5,
        downloads: 0,
        description: "it's (ok)!",
        image: '',
      });
    }
    expect(files[0].share!.code).not.toBe(files[1].share!.code);
    expect(await flags(services, 'files', a.id)).toBe(1);
    expect(await shareRows(services)).toHaveLength(2);
  });

  test('the extraction code is stored sealed under the server secret, never as text', async () => {
    const { services, alice } = await aliceAndBob();
    const file = await addFile(services, alice, 0, 'secret.txt', 1);
    await shareFiles(services, alice, String(file.id), { downpwd: 'hush-hush' });
    const [row] = await shareRows(services);
    expect(row.downpwd_sealed).not.toContain('hush');
    expect(openExtractionCode(services.secret, row.downpwd_sealed!)).toBe('hush-hush');
    expect(openExtractionCode(randomBytes(32), row.downpwd_sealed!)).toBeNull();
    // A different nonce each time: equal codes do not look equal.
    expect(sealExtractionCode(services.secret, 'hush-hush')).not.toBe(sealExtractionCode(services.secret, 'hush-hush'));
  });

  test('an open share (downpwd "") stores no extraction code', async () => {
    const { services, alice } = await aliceAndBob();
    const file = await addFile(services, alice, 0, 'open.txt', 1);
    await shareFiles(services, alice, String(file.id), { downpwd: null, description: null });
    const [row] = await shareRows(services);
    expect(row.downpwd_sealed).toBeNull();
    expect(row.description).toBe('');
  });

  test('sharing again updates the settings and keeps the code, the download count and the sealed code while it is the same', async () => {
    const { services, alice } = await aliceAndBob();
    const file = await addFile(services, alice, 0, 'again.txt', 1);
    const first = ((await shareFiles(services, alice, String(file.id), { downpwd: 'abcd', downValue: 3 })) as Listing).files as FileItem[];
    await services.db.updateTable('shares').set({ downloads: 2 }).execute();
    const [before] = await shareRows(services);

    const second = ((await shareFiles(services, alice, String(file.id), { downpwd: 'abcd', downValue: 1, description: 'new' })) as Listing)
      .files as FileItem[];
    expect(second[0].share).toMatchObject({ code: first[0].share!.code, downpwd: 'abcd', downValue: 1, downloads: 2, description: 'new' });
    const [same] = await shareRows(services);
    expect(same.downpwd_sealed).toBe(before.downpwd_sealed);

    await shareFiles(services, alice, String(file.id), { downpwd: 'efgh' });
    const [changed] = await shareRows(services);
    expect(openExtractionCode(services.secret, changed.downpwd_sealed!)).toBe('efgh');
    expect(extractionCodeStamp(changed.downpwd_sealed)).not.toBe(extractionCodeStamp(before.downpwd_sealed));
    expect(await shareRows(services)).toHaveLength(1);
  });

  test('downpwd is "" or 4-32 characters without control characters; downValue ≥ 0; description within the limit: else 400', async () => {
    const { services, alice } = await aliceAndBob();
    const file = await addFile(services, alice, 0, 'x.txt', 1);
    const fid = String(file.id);
    for (const settings of [
      { downpwd: 'abc' },
      { downpwd: 'a'.repeat(33) },
      { downpwd: 'ab\ncd' },
      { downValue: -1 },
      { description: 'd'.repeat(501) },
    ]) {
      expect((await rejected(shareFiles(services, alice, fid, settings))).code).toBe(ResultCode.InvalidArgument);
    }
    // The limits, counted in characters (not UTF-16 units).
    await shareFiles(services, alice, fid, { downpwd: '密'.repeat(32), description: '😀'.repeat(500) });
    await shareFiles(services, alice, fid, { downpwd: 'abcd', downValue: 2_147_483_647 });
    expect((await rejected(shareFiles(services, alice, ''))).code).toBe(ResultCode.InvalidArgument);
    expect((await rejected(shareFiles(services, alice, 'x,1'))).code).toBe(ResultCode.InvalidArgument);
  });

  test('all or nothing: another account’s file, a binned file or a missing id is 404, and nothing is shared', async () => {
    const { services, alice, bob } = await aliceAndBob();
    const mine = await addFile(services, alice, 0, 'mine.txt', 1);
    const theirs = await addFile(services, bob, 0, 'theirs.txt', 1);
    const binned = await addFile(services, alice, 0, 'binned.txt', 1);
    await folderAndFileDelete(as(services, alice), { ...signed, dirids: '', fids: String(binned.id), is_real: 0 });

    for (const other of [theirs.id, binned.id, 999_999]) {
      const error = await rejected(shareFiles(services, alice, `${mine.id},${other}`));
      expect(error.code).toBe(ResultCode.NotFound);
    }
    expect(await shareRows(services)).toHaveLength(0);
    expect(await flags(services, 'files', mine.id)).toBe(0);
  });

  test('an encrypted file, or one beneath an encrypted folder, is 423 with the id (and tip) of what locks it; nothing is shared', async () => {
    const { services, alice } = await aliceAndBob();
    const plain = await addFile(services, alice, 0, 'plain.txt', 1);
    const sealedFile = await addFile(services, alice, 0, 'sealed.txt', 1);
    await services.db.updateTable('files').set({ encrypted: 1 }).where('id', '=', sealedFile.id).execute();
    const vault = await addFolder(services, alice, 0, 'Vault');
    const inner = await addFolder(services, alice, vault.id, 'Inner');
    const deep = await addFile(services, alice, inner.id, 'deep.txt', 1);
    await services.db.updateTable('folders').set({ encrypted: 1 }).where('id', '=', vault.id).execute();

    const direct = await rejected(shareFiles(services, alice, `${plain.id},${sealedFile.id}`));
    expect(direct.code).toBe(ResultCode.Locked);
    expect(direct.details).toEqual({ id: sealedFile.id, tip: '' });

    const beneath = await rejected(shareFiles(services, alice, `${plain.id},${deep.id}`));
    expect(beneath.code).toBe(ResultCode.Locked);
    expect(beneath.details).toMatchObject({ id: vault.id });

    const folder = await rejected(shareFolders(services, alice, String(inner.id)));
    expect(folder.code).toBe(ResultCode.Locked);
    expect(await shareRows(services)).toHaveLength(0);
  });
});

describe('FolderShare', () => {
  test('shares folders, answers them with their share attributes; a folder with something encrypted beneath it may be shared', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const secret = await addFile(services, alice, docs.id, 'secret.txt', 1);
    await services.db.updateTable('files').set({ encrypted: 1 }).where('id', '=', secret.id).execute();

    const result = (await shareFolders(services, alice, String(docs.id), { description: 'the docs' })) as Listing;
    const [folder] = result.folders as FolderItem[];
    expect(result.files).toEqual([]);
    expect(folder).toMatchObject({ id: docs.id, name: 'Docs', shared: true });
    expect(folder.share).toMatchObject({ downpwd: '', downValue: 0, downloads: 0, description: 'the docs', image: '' });
    expect(await flags(services, 'folders', docs.id)).toBe(1);
  });

  test('a folder and a file with the same id are different items with different shares', async () => {
    const { services, alice } = await aliceAndBob();
    const folder = await addFolder(services, alice, 0, 'F');
    const file = await addFile(services, alice, 0, 'f.txt', 1);
    // Ids of the two tables are independent; make them collide.
    const sameId = Math.max(folder.id, file.id) + 100;
    await services.db.updateTable('folders').set({ id: sameId }).where('id', '=', folder.id).execute();
    await services.db.updateTable('files').set({ id: sameId }).where('id', '=', file.id).execute();
    await shareFolders(services, alice, String(sameId));
    await shareFiles(services, alice, String(sameId));
    const rows = await shareRows(services);
    expect(rows.map((row) => row.item_type).sort()).toEqual(['file', 'folder']);
    expect(rows[0].code).not.toBe(rows[1].code);
  });
});

describe('Unshare', () => {
  test('removes the shares and clears the flags; an item that is not shared is fine', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const never = await addFile(services, alice, 0, 'never.txt', 1);
    await shareFolders(services, alice, String(docs.id));
    await shareFiles(services, alice, String(file.id));

    await unshareItems(services, alice, String(docs.id), `${file.id},${never.id}`);
    expect(await shareRows(services)).toHaveLength(0);
    expect(await flags(services, 'folders', docs.id)).toBe(0);
    expect(await flags(services, 'files', file.id)).toBe(0);
  });

  test('all or nothing: another account’s id is 404 and every share stays', async () => {
    const { services, alice, bob } = await aliceAndBob();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const theirs = await addFile(services, bob, 0, 'b.txt', 1);
    await shareFiles(services, alice, String(file.id));
    await shareFiles(services, bob, String(theirs.id));
    expect((await rejected(unshareItems(services, alice, '', `${file.id},${theirs.id}`))).code).toBe(ResultCode.NotFound);
    expect(await shareRows(services)).toHaveLength(2);
    expect(await flags(services, 'files', file.id)).toBe(1);
    expect((await rejected(unshareItems(services, alice, '', ''))).code).toBe(ResultCode.InvalidArgument);
  });

  test('sharing after an unshare gives a new code: the old link stays dead', async () => {
    const { services, alice } = await aliceAndBob();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const first = ((await shareFiles(services, alice, String(file.id))) as Listing).files as FileItem[];
    await unshareItems(services, alice, '', String(file.id));
    const second = ((await shareFiles(services, alice, String(file.id))) as Listing).files as FileItem[];
    expect(second[0].share!.code).not.toBe(first[0].share!.code);
  });

  test('the cover image of a removed share is queued for removal from storage', async () => {
    const { services, alice } = await aliceAndBob();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    await shareFiles(services, alice, String(file.id));
    await services.db.updateTable('shares').set({ image_key: 'aa/bb/cover' }).execute();
    await unshareItems(services, alice, '', String(file.id));
    const queued = await services.db.selectFrom('content_removals').select(['storage_key', 'due_at']).execute();
    expect(queued).toEqual([{ storage_key: 'aa/bb/cover', due_at: services.now().getTime() }]);
  });
});

describe('GetShareFiles', () => {
  test('shows the owner the extraction code, unsealed, with the other share attributes', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const file = await addFile(services, alice, docs.id, 'a.txt', 1);
    await shareFolders(services, alice, String(docs.id), { downpwd: 'open sesame', downValue: 9, description: 'mine' });
    await shareFiles(services, alice, String(file.id));

    const listing = await sharedListing(services, alice);
    expect(listing.count).toBe(2);
    expect(listing.folders[0].share).toMatchObject({ downpwd: 'open sesame', downValue: 9, description: 'mine', image: '' });
    expect(listing.folders[0].share!.url).toBe(`http://fss.test/s/${listing.folders[0].share!.code}`);
    expect(listing.files[0]).toMatchObject({ path: '/Docs/a.txt' });
    expect(listing.files[0].share).toMatchObject({ downpwd: '' });
  });

  test('an item in the bin is not listed; a permanent delete removes its share', async () => {
    const { services, alice } = await aliceAndBob();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    await shareFiles(services, alice, String(file.id));
    await folderAndFileDelete(as(services, alice), { ...signed, dirids: '', fids: String(file.id), is_real: 0 });
    expect((await sharedListing(services, alice)).count).toBe(0);
    expect(await shareRows(services)).toHaveLength(1);
    await folderAndFileDelete(as(services, alice), { ...signed, dirids: '', fids: String(file.id), is_real: 1 });
    expect(await shareRows(services)).toHaveLength(0);
  });
});

describe('ensureShare', () => {
  test('gives an item an open share once, and returns the same share afterwards', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const first = await services.db.transaction().execute((tx) => ensureShare(tx, services, alice, { type: 'folder', id: docs.id }));
    expect(first).toMatchObject({ itemType: 'folder', itemId: docs.id, downpwd: '', downValue: 0, downloads: 0, description: '', hasImage: false });
    expect(first.code).toMatch(SHARE_CODE_FORMAT);
    expect(await flags(services, 'folders', docs.id)).toBe(1);

    await shareFolders(services, alice, String(docs.id), { downpwd: 'abcd' });
    const again = await services.db.transaction().execute((tx) => ensureShare(tx, services, alice, { type: 'folder', id: docs.id }));
    expect(again).toMatchObject({ id: first.id, code: first.code, downpwd: 'abcd' });
  });

  test('404 for an item that is not a live item of the account, 423 for a locked one', async () => {
    const { services, alice, bob } = await aliceAndBob();
    const theirs = await addFile(services, bob, 0, 'b.txt', 1);
    const locked = await addFile(services, alice, 0, 'l.txt', 1);
    await services.db.updateTable('files').set({ encrypted: 1 }).where('id', '=', locked.id).execute();
    const ensure = (id: number) => services.db.transaction().execute((tx) => ensureShare(tx, services, alice, { type: 'file', id }));
    expect((await rejected(ensure(theirs.id))).code).toBe(ResultCode.NotFound);
    expect((await rejected(ensure(locked.id))).code).toBe(ResultCode.Locked);
    expect(await shareRows(services)).toHaveLength(0);
  });
});

describe("a share's cover image", () => {
  /** A 1×1 transparent PNG. */
  const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  const uploadCover = (services: Services, accountId: number, fileId: number) =>
    shareImageUpload(as(services, accountId), { uid: BigInt(accountId), token: 'test-token', fid: BigInt(fileId), ImagefileName: 'cover.png', byteFileStream: PNG });

  test('is refused (409) on a file that has no share, and makes none: covers never share a file', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const file = await addFile(services, alice, 0, 'report.pdf', 10);
    expect((await rejected(uploadCover(services, alice, file.id))).code).toBe(ResultCode.Conflict);
    expect(await shareRows(services)).toHaveLength(0);
    expect(await flags(services, 'files', file.id)).toBe(0);
  });

  test('answers a URL that names the share by its id and a tag, never by its code', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const file = await addFile(services, alice, 0, 'report.pdf', 10);
    await shareFiles(services, alice, String(file.id), { downpwd: 'hush-hush' });
    const [share] = await shareRows(services);
    const answer = await uploadCover(services, alice, file.id);
    expect(answer.value).toMatch(new RegExp(`^http://fss\\.test/s/image/${share.id}/[A-Za-z0-9_-]{22}$`));
    expect(answer.value).not.toContain(share.code);
    expect(answer.value).not.toContain('hush-hush');
  });

  test('goes with the share when its file is deleted for good: queued in the same transaction, then removed', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const file = await addFile(services, alice, 0, 'report.pdf', 10);
    await shareFiles(services, alice, String(file.id));
    const answer = await uploadCover(services, alice, file.id);
    expect(answer.value).toMatch(/^http/);
    const { image_key: key } = await services.db.selectFrom('shares').select('image_key').executeTakeFirstOrThrow();
    expect(key).not.toBeNull();
    const store = contentStoreFor(services.config);
    expect(await store.stat(key!)).not.toBeNull();

    await folderAndFileDelete(as(services, alice), { ...signed, uid: BigInt(alice), dirids: '', fids: String(file.id), is_real: 1 });
    await removeUnreferencedContent(services);
    expect(await store.stat(key!)).toBeNull();
    expect(problemCount(await checkIntegrity(services))).toBe(0);
  });

  test('one stored before covers were decoded and counted is kept, served as it is and counts nothing; its replacement counts', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const file = await addFile(services, alice, 0, 'report.pdf', 10);
    const upload = (bytes: Buffer) =>
      shareImageUpload(as(services, alice), { uid: BigInt(alice), token: 'test-token', fid: BigInt(file.id), ImagefileName: 'cover.png', byteFileStream: bytes });
    await services.db.transaction().execute((tx) => ensureShare(tx, services, alice, { type: 'file', id: file.id }));
    // As an older version left it: the bytes sent, stored as they came, counted nowhere.
    const legacy = Buffer.concat([PNG, Buffer.from('bytes an older version kept as they came')]);
    const store = contentStoreFor(services.config);
    const key = store.newKey(createHash('sha256').update(legacy).digest('hex'));
    const staged = path.join(services.config.dataDir, 'legacy-cover');
    await writeFile(staged, legacy);
    await store.putFile(key, staged);
    await services.db.updateTable('shares').set({ image_key: key }).execute();
    expect(await usedBytesMismatches(services.db)).toEqual([]);

    const share = await services.db.selectFrom('shares').selectAll().executeTakeFirstOrThrow();
    const tag = shareImageTag(services.secret, { id: share.id, imageKey: key, downpwdSealed: share.downpwd_sealed });
    const image = await openShareImage(services, String(share.id), tag);
    expect(image).toMatchObject({ contentType: 'image/png', size: legacy.length });
    const served = Buffer.concat(await drain(await image!.open()));
    expect(served.equals(legacy)).toBe(true);

    await upload(PNG);
    const { image_bytes: counted } = await services.db.selectFrom('shares').select('image_bytes').executeTakeFirstOrThrow();
    expect(Number(counted)).toBeGreaterThan(0);
    const { used_bytes: used } = await services.db.selectFrom('accounts').select('used_bytes').where('id', '=', alice).executeTakeFirstOrThrow();
    expect(Number(used)).toBe(10 + Number(counted));
    expect(await usedBytesMismatches(services.db)).toEqual([]);
  });
});
