/**
 * The recycle bin (DECISIONS.md §8) on a real SQLite file: FolderAndFileDelete and FolderDelete to
 * the bin and for good, FolderAndFileRestore, RecycleEmpty and the retention sweep; where items
 * go, what stays all-or-nothing, and folder sizes, shares, links and used bytes kept right.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { describe, expect, test } from 'vitest';
import type { FileItem, FolderItem, Listing, Services } from '../../src/operations/context';
import { ResultCode } from '../../src/operations/errors';
import { runHousekeeping } from '../../src/operations/admin/housekeeping';
import { folderEncrypt } from '../../src/operations/encryption/encryption';
import { folderAdd, folderRename, move } from '../../src/operations/tree/folders';
import { getFiles, getRecycleFiles } from '../../src/operations/tree/listings';
import { folderAndFileDelete, folderAndFileRestore, folderDelete, purgeExpiredBinItems, recycleEmpty } from '../../src/operations/tree/recycle-bin';
import { contentStoreFor } from '../../src/storage/content/stores';
import { engineOf } from '../../src/storage/db/engine/dialect';
import { folderSizeMismatches, misplacedItems, usedBytesMismatches } from '../../src/storage/db/repositories/integrity-repository';
import { nameKey, naturalSortKey } from '../../src/operations/tree/names';
import { openTestServices, type TestServices } from '../helpers/database';
import { openSession, signed as encryptionSigned, storeFile } from '../helpers/encryption';
import { insertTestFile, storeTestContent } from '../helpers/stored-files';
import { addFile, addFolder, as, folderSizes, recomputedSize, snapshot, testAccount } from '../helpers/tree';
import { rejected } from '../helpers/refusals';

const DAY = 86_400_000;
const run = promisify(execFile);
const signed = { uid: 0n, token: 'test-token', sign: '' };

const toBin = (services: Services, accountId: number, dirids: string | null, fids: string | null) =>
  folderAndFileDelete(as(services, accountId), { ...signed, dirids, fids, is_real: 0 });
const forGood = (services: Services, accountId: number, dirids: string | null, fids: string | null) =>
  folderAndFileDelete(as(services, accountId), { ...signed, dirids, fids, is_real: 1 });
const restore = async (services: Services, accountId: number, dirids: string | null, fids: string | null) => {
  const listing = (await folderAndFileRestore(as(services, accountId), { ...signed, dirids, fids })) as Listing;
  return { count: listing.count, folders: listing.folders as FolderItem[], files: listing.files as FileItem[] };
};
const emptyBin = (services: Services, accountId: number) => recycleEmpty(as(services, accountId), signed);


async function drain<T>(items: Iterable<T> | AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** GetRecycleFiles as the caller sees it: names of folders and files, with where they came from. */
async function binListing(services: Services, accountId: number) {
  const listing = (await getRecycleFiles(as(services, accountId), { ...signed, order: 'name', desc: '0' })) as Listing;
  const folders = await drain(listing.folders);
  const files = await drain(listing.files);
  return { count: listing.count, folders, files };
}

/** GetFiles of a folder: the names it lists. */
async function namesIn(services: Services, accountId: number, dir: number): Promise<string[]> {
  const listing = (await getFiles(as(services, accountId), { ...signed, dir: String(dir), order: 'name', desc: '0' })) as Listing;
  return [...(await drain(listing.folders)), ...(await drain(listing.files))].map((item) => item.name);
}

async function aliceAndBob(): Promise<{ services: TestServices; alice: number; bob: number }> {
  const services = await openTestServices();
  return { services, alice: await testAccount(services, 'alice'), bob: await testAccount(services, 'bob') };
}

/** The bin columns, name and parent of a row. */
async function binRow(services: Services, table: 'folders' | 'files', id: number) {
  const columns = ['name', 'deleted_at', 'deleted_from', 'binned_under'] as const;
  return table === 'folders'
    ? services.db.selectFrom('folders').select([...columns, 'parent_id as parent']).where('id', '=', id).executeTakeFirst()
    : services.db.selectFrom('files').select([...columns, 'folder_id as parent']).where('id', '=', id).executeTakeFirst();
}

/** Every row of every table an operation of the bin may touch, for "nothing changed" comparisons. */
async function wholeTables(services: Services) {
  const { db } = services;
  return {
    accounts: await db.selectFrom('accounts').selectAll().orderBy('id').execute(),
    folders: await db.selectFrom('folders').selectAll().orderBy('id').execute(),
    files: await db.selectFrom('files').selectAll().orderBy('id').execute(),
    shares: await db.selectFrom('shares').selectAll().orderBy('id').execute(),
    links: await db.selectFrom('links').selectAll().orderBy('id').execute(),
    content: await db.selectFrom('content').selectAll().orderBy('id').execute(),
  };
}

async function addShare(services: Services, accountId: number, itemType: 'folder' | 'file', itemId: number): Promise<void> {
  const at = services.now().getTime();
  await services.db
    .insertInto('shares')
    .values({ account_id: accountId, item_type: itemType, item_id: itemId, code: randomBytes(16).toString('hex'), downpwd_sealed: null, image_key: null, created_at: at, updated_at: at })
    .execute();
}

async function addLink(services: Services, accountId: number, fileId: number): Promise<void> {
  await services.db
    .insertInto('links')
    .values({ account_id: accountId, file_id: fileId, code: randomBytes(16).toString('hex'), created_at: services.now().getTime() })
    .execute();
}

const sharedItems = async (services: Services) =>
  (await services.db.selectFrom('shares').select(['item_type', 'item_id']).orderBy('id').execute()).map((s) => `${s.item_type}:${s.item_id}`);
const linkedFiles = async (services: Services) => (await services.db.selectFrom('links').select('file_id').orderBy('id').execute()).map((l) => l.file_id);
const usedBytes = async (services: Services, accountId: number) =>
  (await services.db.selectFrom('accounts').select('used_bytes').where('id', '=', accountId).executeTakeFirstOrThrow()).used_bytes;
const rowExists = async (services: Services, table: 'folders' | 'files', id: number) =>
  (await services.db.selectFrom(table).select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

/** Every folder's kept size equals the total of the live files beneath it (folders in the bin excluded). */
async function expectLiveSizesConsistent(services: Services, accountId: number): Promise<void> {
  const live = await services.db
    .selectFrom('folders')
    .select(['id', 'name', 'size'])
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .where('binned_under', 'is', null)
    .execute();
  for (const folder of live) expect([folder.name, folder.size]).toEqual([folder.name, await recomputedSize(services.db, accountId, folder.id)]);
}

describe('FolderAndFileDelete to the bin (is_real=0)', () => {
  test('the items given become entries of the bin, with the time and the path they came from', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const work = await addFolder(services, alice, docs.id, 'Work');
    await addFile(services, alice, work.id, 'report.pdf', 100);
    const photo = await addFile(services, alice, 0, 'photo.jpg', 7);
    services.clock.advance(60_000);

    await toBin(services, alice, String(work.id), String(photo.id));

    expect(await binRow(services, 'folders', work.id)).toMatchObject({ deleted_at: services.now().getTime(), deleted_from: '/Docs', binned_under: null });
    expect(await binRow(services, 'files', photo.id)).toMatchObject({ deleted_at: services.now().getTime(), deleted_from: '/', binned_under: null });
    const bin = await binListing(services, alice);
    expect(bin.count).toBe(2);
    expect(bin.folders.map((f) => [f.name, f.bin?.from])).toEqual([['Work', '/Docs']]);
    expect(bin.files.map((f) => [f.name, f.bin?.from])).toEqual([['photo.jpg', '/']]);
    expect(bin.files[0].bin!.deleted).toEqual(services.now());
  });

  test('everything beneath a binned folder leaves the tree with it, and only the folder is in the bin', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const b = await addFolder(services, alice, a.id, 'B');
    const c = await addFile(services, alice, b.id, 'c.txt', 3);
    const d = await addFile(services, alice, a.id, 'd.txt', 4);
    await addFile(services, alice, 0, 'stays.txt', 1);

    await toBin(services, alice, String(a.id), '');

    expect(await namesIn(services, alice, 0)).toEqual(['stays.txt']);
    for (const [table, id] of [['folders', b.id], ['files', c.id], ['files', d.id]] as const) {
      expect(await binRow(services, table, id)).toMatchObject({ deleted_at: null, binned_under: a.id });
    }
    const bin = await binListing(services, alice);
    expect([bin.count, bin.folders.map((f) => f.name), bin.files]).toEqual([1, ['A'], []]);
    // The folder's kept size is what comes back with it.
    expect(bin.folders[0].size).toBe(7);
  });

  test("the ancestors' sizes lose what went to the bin; the used bytes stay (the bin counts until purged)", async () => {
    const { services, alice } = await aliceAndBob();
    const top = await addFolder(services, alice, 0, 'Top');
    const mid = await addFolder(services, alice, top.id, 'Mid');
    const low = await addFolder(services, alice, mid.id, 'Low');
    await addFile(services, alice, low.id, 'a.bin', 100);
    const b = await addFile(services, alice, mid.id, 'b.bin', 20);
    await addFile(services, alice, top.id, 'c.bin', 3);

    await toBin(services, alice, String(low.id), String(b.id));

    expect(await folderSizes(services.db, [top.id, mid.id, low.id])).toEqual([3, 0, 100]);
    expect(await usedBytes(services, alice)).toBe(123);
    await expectLiveSizesConsistent(services, alice);
  });

  test('a file given together with a folder it lies in gets its own entry, and every size stays right', async () => {
    const { services, alice } = await aliceAndBob();
    const p = await addFolder(services, alice, 0, 'P');
    const a = await addFolder(services, alice, p.id, 'A');
    const b = await addFolder(services, alice, a.id, 'B');
    const f = await addFile(services, alice, b.id, 'f.txt', 10);
    const g = await addFile(services, alice, b.id, 'g.txt', 20);
    const inner = await addFolder(services, alice, b.id, 'Inner');
    await addFile(services, alice, inner.id, 'h.txt', 5);

    await toBin(services, alice, `${a.id},${inner.id}`, String(f.id));

    expect(await binRow(services, 'files', f.id)).toMatchObject({ deleted_from: '/P/A/B', binned_under: null });
    expect(await binRow(services, 'folders', inner.id)).toMatchObject({ deleted_from: '/P/A/B', binned_under: null });
    expect(await binRow(services, 'files', g.id)).toMatchObject({ deleted_at: null, binned_under: a.id });
    // P lost all 35 bytes; A keeps what comes back with it: g alone.
    expect(await folderSizes(services.db, [p.id, a.id, b.id, inner.id])).toEqual([0, 20, 20, 5]);

    const back = await restore(services, alice, String(a.id), '');
    expect(back.folders.map((x) => [x.name, x.size])).toEqual([['A', 20]]);
    expect(await folderSizes(services.db, [p.id, a.id, b.id])).toEqual([20, 20, 20]);
    await expectLiveSizesConsistent(services, alice);
    expect((await binListing(services, alice)).count).toBe(2);
  });

  test('an item deleted earlier beneath a folder keeps its own entry when the folder follows', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const x = await addFolder(services, alice, a.id, 'X');
    const y = await addFile(services, alice, x.id, 'y.txt', 1);
    await toBin(services, alice, String(x.id), '');
    const earlier = services.now().getTime();
    services.clock.advance(1000);

    await toBin(services, alice, String(a.id), '');

    expect(await binRow(services, 'folders', x.id)).toMatchObject({ deleted_at: earlier, binned_under: null, deleted_from: '/A' });
    expect(await binRow(services, 'files', y.id)).toMatchObject({ binned_under: x.id });
    expect((await binListing(services, alice)).folders.map((f) => f.name)).toEqual(['A', 'X']);
  });

  test('is_real other than 0 or 1 is 400, and nothing changes', async () => {
    const { services, alice } = await aliceAndBob();
    const f = await addFile(services, alice, 0, 'f.txt', 1);
    const before = await wholeTables(services);
    for (const isReal of [2, -1]) {
      const error = await rejected(folderAndFileDelete(as(services, alice), { ...signed, dirids: '', fids: String(f.id), is_real: isReal }));
      expect([error.code, error.message]).toEqual([ResultCode.InvalidArgument, 'is_real must be 0 (to the recycle bin) or 1 (delete permanently)']);
    }
    expect(await wholeTables(services)).toEqual(before);
  });

  test('bad id lists are 400: both empty, or not ids', async () => {
    const { services, alice } = await aliceAndBob();
    expect((await rejected(toBin(services, alice, '', ' '))).code).toBe(ResultCode.InvalidArgument);
    expect((await rejected(toBin(services, alice, 'x', ''))).code).toBe(ResultCode.InvalidArgument);
  });

  test('one bad id among good ones is 404, and nothing changes', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const f = await addFile(services, alice, a.id, 'f.txt', 5);
    const binned = await addFile(services, alice, 0, 'binned.txt', 1);
    await toBin(services, alice, '', String(binned.id));
    const before = await wholeTables(services);

    for (const [dirids, fids] of [
      [`${a.id},999999`, String(f.id)],
      [String(a.id), `${f.id},${binned.id}`],
      [String(a.id), `${f.id},0`],
    ]) {
      expect((await rejected(toBin(services, alice, dirids, fids))).code).toBe(ResultCode.NotFound);
    }
    expect(await wholeTables(services)).toEqual(before);
  });

  test("another account's ids are 404, and nothing changes on either side", async () => {
    const { services, alice, bob } = await aliceAndBob();
    const mine = await addFolder(services, alice, 0, 'Mine');
    const bobs = await addFolder(services, bob, 0, 'Bobs');
    const bobsFile = await addFile(services, bob, 0, 'bobs.txt', 1);
    const before = await wholeTables(services);
    expect((await rejected(toBin(services, alice, `${mine.id},${bobs.id}`, ''))).code).toBe(ResultCode.NotFound);
    expect((await rejected(toBin(services, alice, '', String(bobsFile.id)))).code).toBe(ResultCode.NotFound);
    expect(await wholeTables(services)).toEqual(before);
  });
});

describe('FolderDelete', () => {
  test('deletes folders to the bin with is_real=0, and for good with is_real=1', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const b = await addFolder(services, alice, 0, 'B');
    await folderDelete(as(services, alice), { ...signed, dirids: String(a.id), is_real: 0 });
    await folderDelete(as(services, alice), { ...signed, dirids: ` ${b.id} `, is_real: 1 });
    expect(await binRow(services, 'folders', a.id)).toMatchObject({ deleted_from: '/' });
    expect(await rowExists(services, 'folders', b.id)).toBe(false);
  });

  test('an empty dirids is 400; is_real other than 0 or 1 is 400', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    expect((await rejected(folderDelete(as(services, alice), { ...signed, dirids: ' , ', is_real: 0 }))).code).toBe(ResultCode.InvalidArgument);
    expect((await rejected(folderDelete(as(services, alice), { ...signed, dirids: String(a.id), is_real: 3 }))).code).toBe(ResultCode.InvalidArgument);
  });

  test("another account's folder is 404, and nothing changes", async () => {
    const { services, alice, bob } = await aliceAndBob();
    const bobs = await addFolder(services, bob, 0, 'Bobs');
    const before = await wholeTables(services);
    for (const isReal of [0, 1]) {
      expect((await rejected(folderDelete(as(services, alice), { ...signed, dirids: String(bobs.id), is_real: isReal }))).code).toBe(ResultCode.NotFound);
    }
    expect(await wholeTables(services)).toEqual(before);
  });
});

describe('deleting for good (is_real=1)', () => {
  test("a live folder goes with everything beneath it, its shares and links, and its files' bytes leave the used bytes", async () => {
    const { services, alice } = await aliceAndBob();
    const p = await addFolder(services, alice, 0, 'P');
    const a = await addFolder(services, alice, p.id, 'A');
    const b = await addFolder(services, alice, a.id, 'B');
    const f = await addFile(services, alice, b.id, 'f.txt', 10);
    const g = await addFile(services, alice, a.id, 'g.txt', 20);
    const other = await addFile(services, alice, p.id, 'other.txt', 5);
    for (const [type, id] of [['folder', a.id], ['folder', b.id], ['file', f.id], ['file', other.id]] as const) await addShare(services, alice, type, id);
    for (const id of [f.id, g.id, other.id]) await addLink(services, alice, id);

    await forGood(services, alice, String(a.id), '');

    for (const [table, id] of [['folders', a.id], ['folders', b.id], ['files', f.id], ['files', g.id]] as const) {
      expect([table, id, await rowExists(services, table, id)]).toEqual([table, id, false]);
    }
    expect(await sharedItems(services)).toEqual([`file:${other.id}`]);
    expect(await linkedFiles(services)).toEqual([other.id]);
    expect(await usedBytes(services, alice)).toBe(5);
    expect(await folderSizes(services.db, [p.id])).toEqual([5]);
    expect((await binListing(services, alice)).count).toBe(0);
  });

  test('an entry of the bin deleted earlier from beneath the folder stays in the bin, and a restore takes it to the root', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const old = await addFolder(services, alice, a.id, 'Old');
    const oldFile = await addFile(services, alice, old.id, 'old.txt', 40);
    await addFile(services, alice, a.id, 'g.txt', 2);
    await toBin(services, alice, String(old.id), '');

    await forGood(services, alice, String(a.id), '');

    expect((await binListing(services, alice)).folders.map((x) => [x.name, x.bin?.from])).toEqual([['Old', '/A']]);
    expect(await usedBytes(services, alice)).toBe(40);
    const back = await restore(services, alice, String(old.id), '');
    expect(back.folders.map((x) => [x.dir, x.path, x.size])).toEqual([[0, '/Old', 40]]);
    expect(await namesIn(services, alice, old.id)).toEqual(['old.txt']);
    expect(await rowExists(services, 'files', oldFile.id)).toBe(true);
  });

  test('a live file goes for good, with its share and link, and its folders shrink', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const f = await addFile(services, alice, a.id, 'f.txt', 10);
    await addFile(services, alice, a.id, 'g.txt', 1);
    await addShare(services, alice, 'file', f.id);
    await addLink(services, alice, f.id);

    await forGood(services, alice, '', String(f.id));

    expect(await rowExists(services, 'files', f.id)).toBe(false);
    expect([await sharedItems(services), await linkedFiles(services)]).toEqual([[], []]);
    expect(await folderSizes(services.db, [a.id])).toEqual([1]);
    expect(await usedBytes(services, alice)).toBe(1);
  });

  test("entries of the bin go for good with their subtrees; the live folders' sizes do not change again", async () => {
    const { services, alice } = await aliceAndBob();
    const p = await addFolder(services, alice, 0, 'P');
    const a = await addFolder(services, alice, p.id, 'A');
    const inner = await addFile(services, alice, a.id, 'inner.txt', 30);
    const loose = await addFile(services, alice, p.id, 'loose.txt', 7);
    await addFile(services, alice, p.id, 'kept.txt', 2);
    await addShare(services, alice, 'folder', a.id);
    await addLink(services, alice, inner.id);
    await toBin(services, alice, String(a.id), String(loose.id));
    expect(await folderSizes(services.db, [p.id])).toEqual([2]);

    await forGood(services, alice, String(a.id), String(loose.id));

    for (const [table, id] of [['folders', a.id], ['files', inner.id], ['files', loose.id]] as const) expect(await rowExists(services, table, id)).toBe(false);
    expect([await sharedItems(services), await linkedFiles(services)]).toEqual([[], []]);
    expect(await folderSizes(services.db, [p.id])).toEqual([2]);
    expect(await usedBytes(services, alice)).toBe(2);
  });

  test('a folder and a file inside it given together leave the sizes right', async () => {
    const { services, alice } = await aliceAndBob();
    const p = await addFolder(services, alice, 0, 'P');
    const a = await addFolder(services, alice, p.id, 'A');
    const f = await addFile(services, alice, a.id, 'f.txt', 10);
    await addFile(services, alice, p.id, 'g.txt', 1);
    await forGood(services, alice, String(a.id), String(f.id));
    expect(await folderSizes(services.db, [p.id])).toEqual([1]);
    expect(await usedBytes(services, alice)).toBe(1);
  });

  test('an item beneath a folder in the bin is 404: it goes only with its folder', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const b = await addFolder(services, alice, a.id, 'B');
    const f = await addFile(services, alice, a.id, 'f.txt', 1);
    await toBin(services, alice, String(a.id), '');
    const before = await wholeTables(services);
    expect((await rejected(forGood(services, alice, String(b.id), ''))).code).toBe(ResultCode.NotFound);
    expect((await rejected(forGood(services, alice, '', String(f.id)))).code).toBe(ResultCode.NotFound);
    expect(await wholeTables(services)).toEqual(before);
  });

  test('one bad id among good ones is 404, and nothing changes', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const f = await addFile(services, alice, a.id, 'f.txt', 5);
    await addShare(services, alice, 'file', f.id);
    const before = await wholeTables(services);
    expect((await rejected(forGood(services, alice, String(a.id), `${f.id},424242`))).code).toBe(ResultCode.NotFound);
    expect(await wholeTables(services)).toEqual(before);
  });

  test("another account's ids, live or in its bin, are 404, and nothing changes on either side", async () => {
    const { services, alice, bob } = await aliceAndBob();
    const mine = await addFile(services, alice, 0, 'mine.txt', 1);
    const bobsLive = await addFolder(services, bob, 0, 'Bobs');
    const bobsBinned = await addFile(services, bob, 0, 'binned.txt', 1);
    await toBin(services, bob, '', String(bobsBinned.id));
    const before = await wholeTables(services);
    expect((await rejected(forGood(services, alice, String(bobsLive.id), String(mine.id)))).code).toBe(ResultCode.NotFound);
    expect((await rejected(forGood(services, alice, '', String(bobsBinned.id)))).code).toBe(ResultCode.NotFound);
    expect(await wholeTables(services)).toEqual(before);
  });

  test('content no file references any more is removed from storage after the commit; shared content stays', async () => {
    const { services, alice } = await aliceAndBob();
    const alone = await storeTestContent(services, 'only one file has me');
    const shared = await storeTestContent(services, 'two files have me');
    const f = await insertTestFile(services, { accountId: alice, name: 'alone.txt', ...alone });
    const g = await insertTestFile(services, { accountId: alice, name: 'one.txt', ...shared });
    await insertTestFile(services, { accountId: alice, name: 'two.txt', ...shared });
    await services.db.updateTable('accounts').set({ used_bytes: alone.size + 2 * shared.size }).where('id', '=', alice).execute();

    await forGood(services, alice, '', `${f},${g}`);

    const store = contentStoreFor(services.config);
    expect(await store.stat(alone.key)).toBeNull();
    expect(await store.stat(shared.key)).not.toBeNull();
    const contentIds = (await services.db.selectFrom('content').select('id').execute()).map((row) => row.id);
    expect(contentIds).toEqual([shared.contentId]);
    expect(await usedBytes(services, alice)).toBe(shared.size);
  });
});

describe('FolderAndFileRestore', () => {
  test('an item goes back to its original folder, and the answer says where, with its path', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const work = await addFolder(services, alice, docs.id, 'Work');
    const report = await addFile(services, alice, work.id, 'report.pdf', 100);
    const plans = await addFolder(services, alice, docs.id, 'Plans');
    await toBin(services, alice, String(plans.id), String(report.id));

    const back = await restore(services, alice, String(plans.id), String(report.id));

    expect(back.count).toBe(2);
    expect(back.folders).toEqual([{ ...plans, path: '/Docs/Plans' }]);
    expect(back.files).toEqual([{ ...report, path: '/Docs/Work/report.pdf' }]);
    expect(await binRow(services, 'files', report.id)).toMatchObject({ deleted_at: null, deleted_from: null, binned_under: null, parent: work.id });
    expect(await namesIn(services, alice, work.id)).toEqual(['report.pdf']);
    expect((await binListing(services, alice)).count).toBe(0);
  });

  test('a folder comes back with its whole subtree, and its new ancestors grow by its size', async () => {
    const { services, alice } = await aliceAndBob();
    const top = await addFolder(services, alice, 0, 'Top');
    const a = await addFolder(services, alice, top.id, 'A');
    const b = await addFolder(services, alice, a.id, 'B');
    const c = await addFile(services, alice, b.id, 'c.txt', 11);
    await addFile(services, alice, a.id, 'd.txt', 22);
    await addFile(services, alice, top.id, 'e.txt', 4);
    const before = await snapshot(services.db, alice);
    await toBin(services, alice, String(a.id), '');
    expect(await folderSizes(services.db, [top.id])).toEqual([4]);

    await restore(services, alice, String(a.id), '');

    expect(await binRow(services, 'files', c.id)).toMatchObject({ binned_under: null, deleted_at: null });
    expect(await folderSizes(services.db, [top.id, a.id, b.id])).toEqual([37, 33, 11]);
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('when the original folder is gone for good, the item goes to the root', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const f = await addFile(services, alice, docs.id, 'f.txt', 5);
    await toBin(services, alice, '', String(f.id));
    await forGood(services, alice, String(docs.id), '');
    // A new folder with the old one's name is another folder: parents are matched by id.
    await addFolder(services, alice, 0, 'Docs');

    const back = await restore(services, alice, '', String(f.id));

    expect(back.files.map((x) => [x.dir, x.path])).toEqual([[0, '/f.txt']]);
    expect(await namesIn(services, alice, 0)).toEqual(['Docs', 'f.txt']);
  });

  test('when the original folder is itself in the bin, the item goes to the root', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const sub = await addFolder(services, alice, docs.id, 'Sub');
    const f = await addFile(services, alice, sub.id, 'f.txt', 5);
    await toBin(services, alice, '', String(f.id));
    await toBin(services, alice, String(docs.id), '');

    const back = await restore(services, alice, '', String(f.id));

    expect(back.files.map((x) => [x.dir, x.path])).toEqual([[0, '/f.txt']]);
    expect(await binRow(services, 'files', f.id)).toMatchObject({ parent: 0, deleted_at: null });
    await expectLiveSizesConsistent(services, alice);
  });

  test('the original folder is found by id wherever it is now, under its new name', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const archive = await addFolder(services, alice, 0, 'Archive');
    const f = await addFile(services, alice, docs.id, 'f.txt', 5);
    await toBin(services, alice, '', String(f.id));
    await move(as(services, alice), { ...signed, dirids: String(docs.id), fids: '', todir: BigInt(archive.id) });
    await folderRename(as(services, alice), { ...signed, dirid: BigInt(docs.id), newname: 'Old docs' });
    await addFolder(services, alice, 0, 'Docs');

    const back = await restore(services, alice, '', String(f.id));

    expect(back.files.map((x) => [x.dir, x.path])).toEqual([[docs.id, '/Archive/Old docs/f.txt']]);
    expect(await folderSizes(services.db, [archive.id, docs.id])).toEqual([5, 5]);
  });

  test('restored together with its folder, an item goes back into it', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const deep = await addFolder(services, alice, docs.id, 'Deep');
    const f = await addFile(services, alice, deep.id, 'f.txt', 5);
    const g = await addFile(services, alice, docs.id, 'g.txt', 6);
    await toBin(services, alice, '', `${f.id},${g.id}`);
    await toBin(services, alice, String(docs.id), '');

    const back = await restore(services, alice, String(docs.id), `${f.id},${g.id}`);

    expect(back.files.map((x) => [x.name, x.dir, x.path])).toEqual([
      ['f.txt', deep.id, '/Docs/Deep/f.txt'],
      ['g.txt', docs.id, '/Docs/g.txt'],
    ]);
    expect(await folderSizes(services.db, [docs.id, deep.id])).toEqual([11, 5]);
    await expectLiveSizesConsistent(services, alice);
  });

  test('a taken name gets " (restored)", and " (restored 2)" the next time; files keep their extension', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const first = await addFile(services, alice, docs.id, 'report.pdf', 1);
    await toBin(services, alice, '', String(first.id));
    const second = await addFile(services, alice, docs.id, 'Report.pdf', 2);
    expect((await restore(services, alice, '', String(first.id))).files.map((x) => [x.name, x.path])).toEqual([
      ['report (restored).pdf', '/Docs/report (restored).pdf'],
    ]);

    await toBin(services, alice, '', String(second.id));
    await addFile(services, alice, docs.id, 'report.pdf', 4);
    expect((await restore(services, alice, '', String(second.id))).files.map((x) => [x.name, x.ext])).toEqual([['Report (restored 2).pdf', 'pdf']]);

    expect(await binRow(services, 'files', second.id)).toMatchObject({ name: 'Report (restored 2).pdf', deleted_at: null });
    expect((await namesIn(services, alice, docs.id)).sort()).toEqual(['Report (restored 2).pdf', 'report (restored).pdf', 'report.pdf']);
  });

  test('a folder whose name is taken gets the suffix at the end', async () => {
    const { services, alice } = await aliceAndBob();
    const photos = await addFolder(services, alice, 0, 'Photos.2024');
    await toBin(services, alice, String(photos.id), '');
    await addFolder(services, alice, 0, 'photos.2024');
    expect((await restore(services, alice, String(photos.id), '')).folders.map((x) => x.name)).toEqual(['Photos.2024 (restored)']);
  });

  test('two items restored into one folder with the same name: the second gets the suffix', async () => {
    const { services, alice } = await aliceAndBob();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const one = await addFile(services, alice, docs.id, 'a.txt', 1);
    await toBin(services, alice, '', String(one.id));
    const two = await addFile(services, alice, docs.id, 'A.txt', 2);
    await toBin(services, alice, '', String(two.id));

    const back = await restore(services, alice, '', `${one.id},${two.id}`);

    expect(back.files.map((x) => x.name)).toEqual(['a.txt', 'A (restored).txt']);
    expect(await folderSizes(services.db, [docs.id])).toEqual([3]);
  });

  test('a live item is 409 "not in the recycle bin", and nothing changes', async () => {
    const { services, alice } = await aliceAndBob();
    const live = await addFile(services, alice, 0, 'live.txt', 1);
    const binned = await addFile(services, alice, 0, 'binned.txt', 1);
    await toBin(services, alice, '', String(binned.id));
    const before = await wholeTables(services);
    const error = await rejected(restore(services, alice, '', `${binned.id},${live.id}`));
    expect([error.code, error.message]).toEqual([ResultCode.Conflict, `file ${live.id} is not in the recycle bin`]);
    expect(await wholeTables(services)).toEqual(before);
  });

  test('an item beneath a folder in the bin is 409: it comes back with its folder', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const b = await addFolder(services, alice, a.id, 'B');
    await toBin(services, alice, String(a.id), '');
    const before = await wholeTables(services);
    expect((await rejected(restore(services, alice, String(b.id), ''))).code).toBe(ResultCode.Conflict);
    expect(await wholeTables(services)).toEqual(before);
  });

  test('one bad id among good ones is 404, and nothing changes', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const f = await addFile(services, alice, 0, 'f.txt', 1);
    await toBin(services, alice, String(a.id), String(f.id));
    await addFolder(services, alice, 0, 'A');
    const before = await wholeTables(services);
    expect((await rejected(restore(services, alice, `${a.id},777777`, String(f.id)))).code).toBe(ResultCode.NotFound);
    expect(await wholeTables(services)).toEqual(before);
  });

  test("another account's entries are 404, and nothing changes on either side", async () => {
    const { services, alice, bob } = await aliceAndBob();
    const mine = await addFile(services, alice, 0, 'mine.txt', 1);
    await toBin(services, alice, '', String(mine.id));
    const bobs = await addFolder(services, bob, 0, 'Bobs');
    await toBin(services, bob, String(bobs.id), '');
    const before = await wholeTables(services);
    expect((await rejected(restore(services, alice, String(bobs.id), String(mine.id)))).code).toBe(ResultCode.NotFound);
    expect(await wholeTables(services)).toEqual(before);
  });

  test('shares and links of what comes back are kept: they answer again', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const f = await addFile(services, alice, a.id, 'f.txt', 1);
    await addShare(services, alice, 'folder', a.id);
    await addLink(services, alice, f.id);
    await toBin(services, alice, String(a.id), '');
    await restore(services, alice, String(a.id), '');
    expect([await sharedItems(services), await linkedFiles(services)]).toEqual([[`folder:${a.id}`], [f.id]]);
  });
});

describe('RecycleEmpty', () => {
  test('deletes everything in the bin for good, and nothing that is live', async () => {
    const { services, alice } = await aliceAndBob();
    const p = await addFolder(services, alice, 0, 'P');
    const a = await addFolder(services, alice, p.id, 'A');
    const inA = await addFile(services, alice, a.id, 'in-a.txt', 10);
    const loose = await addFile(services, alice, p.id, 'loose.txt', 20);
    const live = await addFile(services, alice, p.id, 'live.txt', 3);
    await addShare(services, alice, 'folder', a.id);
    await addShare(services, alice, 'file', live.id);
    await addLink(services, alice, inA.id);
    await toBin(services, alice, String(a.id), String(loose.id));

    await emptyBin(services, alice);

    expect((await binListing(services, alice)).count).toBe(0);
    for (const [table, id] of [['folders', a.id], ['files', inA.id], ['files', loose.id]] as const) expect(await rowExists(services, table, id)).toBe(false);
    expect(await namesIn(services, alice, p.id)).toEqual(['live.txt']);
    expect([await sharedItems(services), await linkedFiles(services)]).toEqual([[`file:${live.id}`], []]);
    expect(await usedBytes(services, alice)).toBe(3);
    expect(await folderSizes(services.db, [p.id])).toEqual([3]);
  });

  test('an empty bin is fine, and changes nothing', async () => {
    const { services, alice } = await aliceAndBob();
    await addFile(services, alice, 0, 'f.txt', 1);
    const before = await wholeTables(services);
    await expect(emptyBin(services, alice)).resolves.toEqual({ kind: 'empty' });
    expect(await wholeTables(services)).toEqual(before);
  });

  test("leaves other accounts' bins alone", async () => {
    const { services, alice, bob } = await aliceAndBob();
    const bobs = await addFile(services, bob, 0, 'bobs.txt', 1);
    await toBin(services, bob, '', String(bobs.id));
    const before = await wholeTables(services);
    await emptyBin(services, alice);
    expect(await wholeTables(services)).toEqual(before);
  });

  test('a bin bigger than a step is emptied in steps, each of which leaves every size, the used bytes and the tree right', async () => {
    const { services, alice } = await aliceAndBob();
    const { big, rows } = await bigBin(services, alice);

    let done = false;
    const emptying = emptyBin(services, alice).finally(() => (done = true));
    const seen: number[] = [];
    while (!done) {
      // What other calls read meanwhile: each committed step, as a crash between two would leave it.
      await expectBinConsistent(services);
      seen.push(await rowsOf(services, alice));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await emptying;

    // P and P/live.txt stay.
    expect(seen.some((left) => left > 2 && left < rows)).toBe(true);
    expect(await rowsOf(services, alice)).toBe(2);
    expect(await rowExists(services, 'folders', big)).toBe(false);
    expect([await sharedItems(services), await linkedFiles(services)]).toEqual([[], []]);
    expect(await usedBytes(services, alice)).toBe(3);
    await expectBinConsistent(services);
  });

  test('a restore made while the bin is being emptied brings back what is not deleted yet, with its sizes right', async () => {
    const { services, alice } = await aliceAndBob();
    const { big, rows } = await bigBin(services, alice);

    const emptying = emptyBin(services, alice);
    while ((await rowsOf(services, alice)) === rows) await new Promise((resolve) => setImmediate(resolve));
    const restored = await restore(services, alice, String(big), '');
    await emptying;

    expect(restored.folders.map((f) => f.id)).toEqual([big]);
    const left = await services.db.selectFrom('files').select(['size', 'folder_id', 'name']).where('account_id', '=', alice).execute();
    // What the emptying had not reached came back beneath Big (how much depends on the steps done
    // by then); the loose files of the bin went, and live.txt stayed, alone in P.
    const { parent_id: p } = await services.db.selectFrom('folders').select('parent_id').where('id', '=', big).executeTakeFirstOrThrow();
    expect(left.filter((file) => file.folder_id === p).map((file) => file.name)).toEqual(['live.txt']);
    expect(await usedBytes(services, alice)).toBe(left.reduce((total, file) => total + Number(file.size), 0));
    expect((await binListing(services, alice)).count).toBe(0);
    await expectLiveSizesConsistent(services, alice);
    await expectBinConsistent(services);
  }, 120_000); // a bin of thousands of rows, emptied in steps: 3 s alone, 10 s and more beside other test files
});

/**
 * A bin of several hundred rows, more than one step deletes: P/Big with three folders, each with a
 * folder inside, 100 files in each (sizes 1–100); an entry of its own deleted from beneath it
 * earlier (Big/G2/E, 20 files); shares and links inside; 10 files deleted directly. P/live.txt (3
 * bytes) stays live.
 */
async function bigBin(services: TestServices, accountId: number): Promise<{ big: number; rows: number }> {
  const p = await addFolder(services, accountId, 0, 'P');
  await addFile(services, accountId, p.id, 'live.txt', 3);
  const big = await addFolder(services, accountId, p.id, 'Big');
  const files = async (folder: number, count: number) => {
    const added: FileItem[] = [];
    for (let i = 1; i <= count; i++) added.push(await addFile(services, accountId, folder, `f${i}.txt`, i));
    return added;
  };
  await files(big.id, 100);
  let entry = 0;
  for (let g = 1; g <= 3; g++) {
    const folder = await addFolder(services, accountId, big.id, `G${g}`);
    const inner = await addFolder(services, accountId, folder.id, 'H');
    const added = await files(inner.id, 100);
    await files(folder.id, 100);
    if (g === 1) await addLink(services, accountId, added[0].id);
    if (g === 3) await addShare(services, accountId, 'folder', inner.id);
    if (g === 2) {
      const e = await addFolder(services, accountId, folder.id, 'E');
      await files(e.id, 20);
      entry = e.id;
    }
  }
  await toBin(services, accountId, String(entry), '');
  const loose = await files(p.id, 10);
  await toBin(services, accountId, String(big.id), loose.map((f) => f.id).join(','));
  return { big: big.id, rows: await rowsOf(services, accountId) };
}

/** The account's folders and files, in any state. */
async function rowsOf(services: Services, accountId: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select (select count(*) from folders where account_id = ${accountId}) + (select count(*) from files where account_id = ${accountId}) as n`.execute(services.db);
  return Number(rows[0].n);
}

/**
 * What fsck checks of the tree and the counters, and what a restore relies on: every row beneath a
 * folder of the bin has its parent.
 */
async function expectBinConsistent(services: Services): Promise<void> {
  expect(await misplacedItems(services.db)).toEqual([]);
  expect(await folderSizeMismatches(services.db)).toEqual([]);
  expect(await usedBytesMismatches(services.db)).toEqual([]);
  const { rows } = await sql<{ id: number }>`
    select id from folders f where binned_under is not null and not exists (select 1 from folders p where p.id = f.parent_id)
    union all
    select id from files f where binned_under is not null and not exists (select 1 from folders p where p.id = f.folder_id)`.execute(services.db);
  expect(rows).toEqual([]);
}

/** The sweep in a process of its own (another instance on the same database), at the test clock's time. */
async function sweepInAnotherProcess(services: TestServices): Promise<{ purged: number }> {
  const module = (relative: string) => JSON.stringify(new URL(relative, import.meta.url).href);
  const code = `
    import { loadConfig } from ${module('../../src/config.ts')};
    import { closeDatabase, openDatabase } from ${module('../../src/storage/db/engine/database.ts')};
    import { purgeExpiredBinItems } from ${module('../../src/operations/tree/recycle-bin.ts')};
    import { passwordHashQueue } from ${module('../../src/operations/crypto/hash-queue.ts')};
    import { callCaches } from ${module('../../src/operations/caches.ts')};
    const config = { ...loadConfig({ FSS_DATA_DIR: process.env.FSS_TEST_DATA_DIR, FSS_DATABASE_URL: process.env.FSS_TEST_DATABASE_URL }), log: () => {} };
    const db = await openDatabase(config);
    const report = await purgeExpiredBinItems({ db, config, now: () => new Date(Number(process.env.FSS_TEST_NOW)), secret: Buffer.alloc(32), passwordHashes: passwordHashQueue(config), caches: callCaches(config) });
    await closeDatabase(db);
    process.stdout.write(JSON.stringify(report));`;
  const env = {
    ...process.env,
    FSS_TEST_DATA_DIR: services.config.dataDir,
    FSS_TEST_DATABASE_URL: services.config.databaseUrl ?? '',
    FSS_TEST_NOW: String(services.now().getTime()),
  };
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { env });
  return JSON.parse(stdout) as { purged: number };
}

describe('the retention sweep', () => {
  test('entries older than the retention go for good, across accounts; younger ones stay', async () => {
    const { services, alice, bob } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'A');
    const inA = await addFile(services, alice, a.id, 'in-a.txt', 10);
    const old = await addFile(services, bob, 0, 'old.txt', 20);
    await toBin(services, alice, String(a.id), '');
    await toBin(services, bob, '', String(old.id));
    services.clock.advance(10 * DAY);
    const young = await addFile(services, alice, 0, 'young.txt', 5);
    await toBin(services, alice, '', String(young.id));
    services.clock.advance(services.config.recycleRetentionDays * DAY - 10 * DAY + 1);

    expect(await purgeExpiredBinItems(services)).toEqual({ purged: 2 });

    for (const [table, id] of [['folders', a.id], ['files', inA.id], ['files', old.id]] as const) expect(await rowExists(services, table, id)).toBe(false);
    expect((await binListing(services, alice)).files.map((f) => f.name)).toEqual(['young.txt']);
    expect([await usedBytes(services, alice), await usedBytes(services, bob)]).toEqual([5, 0]);
  });

  test('a second run finds nothing to do', async () => {
    const { services, alice } = await aliceAndBob();
    const f = await addFile(services, alice, 0, 'f.txt', 1);
    await toBin(services, alice, '', String(f.id));
    services.clock.advance(services.config.recycleRetentionDays * DAY + 1);
    expect(await purgeExpiredBinItems(services)).toEqual({ purged: 1 });
    const after = await wholeTables(services);
    expect(await purgeExpiredBinItems(services)).toEqual({ purged: 0 });
    expect(await wholeTables(services)).toEqual(after);
  });

  test('works through more entries than one batch holds', async () => {
    const { services, alice } = await aliceAndBob();
    const ids: number[] = [];
    for (let i = 0; i < 230; i++) ids.push((await addFile(services, alice, 0, `f${i}.txt`, 1)).id);
    for (let i = 0; i < ids.length; i += 50) await toBin(services, alice, '', ids.slice(i, i + 50).join(','));
    services.clock.advance(services.config.recycleRetentionDays * DAY + 1);
    expect(await purgeExpiredBinItems(services)).toEqual({ purged: 230 });
    expect(await usedBytes(services, alice)).toBe(0);
  });

  test('two instances sweeping the same database at once delete each entry once', async () => {
    const { services, alice, bob } = await aliceAndBob();
    for (const accountId of [alice, bob]) {
      const ids: number[] = [];
      for (let i = 0; i < 150; i++) ids.push((await addFile(services, accountId, 0, `f${i}.txt`, 1)).id);
      await toBin(services, accountId, '', ids.join(','));
    }
    services.clock.advance(services.config.recycleRetentionDays * DAY + 1);

    const [one, two] = await Promise.all([sweepInAnotherProcess(services), sweepInAnotherProcess(services)]);

    expect(one.purged + two.purged).toBe(300);
    expect([await usedBytes(services, alice), await usedBytes(services, bob)]).toEqual([0, 0]);
    expect((await wholeTables(services)).files).toEqual([]);
  });

  test('runs as a housekeeping task', async () => {
    const { services, alice } = await aliceAndBob();
    const f = await addFile(services, alice, 0, 'f.txt', 1);
    await toBin(services, alice, '', String(f.id));
    services.clock.advance(services.config.recycleRetentionDays * DAY + 1);
    await runHousekeeping(services, { info: () => {}, warn: () => {}, request: () => {}, error: (event, fields) => expect.fail(`${event} ${JSON.stringify(fields)}`) });
    expect(await rowExists(services, 'files', f.id)).toBe(false);
  });
});

describe('a folder with 100,000 descendants', () => {
  /** Big (under Top) holds 100 folders of 10 folders each, and 98,900 one-byte files in those 1,000: 100,000 in all. */
  async function bigTree(services: TestServices, accountId: number) {
    const top = await addFolder(services, accountId, 0, 'Top');
    const big = await addFolder(services, accountId, top.id, 'Big');
    const content = await storeTestContent(services, 'x');
    const at = services.now().getTime();
    const named = (name: string) => ({ name, name_key: nameKey(name), sort_key: naturalSortKey(name), created_at: at, updated_at: at });
    await services.db.transaction().execute(async (tx) => {
      const mids = await tx
        .insertInto('folders')
        .values(Array.from({ length: 100 }, (_, i) => ({ account_id: accountId, parent_id: big.id, ...named(`m${i}`) })))
        .returning('id')
        .execute();
      let leafIndex = 0;
      for (const mid of mids) {
        const leaves = await tx
          .insertInto('folders')
          .values(Array.from({ length: 10 }, (_, i) => ({ account_id: accountId, parent_id: mid.id, ...named(`l${i}`) })))
          .returning('id')
          .execute();
        for (const leaf of leaves) {
          // 900 leaves of 99 files and 100 of 98: 98,900.
          const count = leafIndex++ < 900 ? 99 : 98;
          const rows = Array.from({ length: count }, (_, i) => ({
            account_id: accountId,
            folder_id: leaf.id,
            ext: 'txt',
            size: 1,
            sha256: content.sha256,
            content_id: content.contentId,
            ...named(`f${i}.txt`),
          }));
          await tx.insertInto('files').values(rows).execute();
          await tx.updateTable('folders').set({ size: count }).where('id', '=', leaf.id).execute();
        }
      }
      const files = await tx.selectFrom('files').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
      const total = Number(files.n);
      await tx.updateTable('folders').set({ size: total }).where('id', 'in', [top.id, big.id]).execute();
      await tx.updateTable('accounts').set({ used_bytes: total }).where('id', '=', accountId).execute();
    });
    // Mid folders' sizes: the total of their leaves.
    await services.db
      .updateTable('folders')
      .set((eb) => ({
        size: eb.selectFrom('folders as leaf').select((e) => e.fn.sum<number>('leaf.size').as('s')).whereRef('leaf.parent_id', '=', 'folders.id'),
      }))
      .where('parent_id', '=', big.id)
      .execute();
    // PostgreSQL plans from statistics that autovacuum gathers as tables grow; 100,000 rows loaded
    // in one go are queried before it gets to them, so gather them as it would have by then.
    if (engineOf(services.db) === 'postgres') await sql`analyze`.execute(services.db);
    return { top, big };
  }

  const countWhere = async (services: Services, column: 'binned_under', value: number) => {
    let n = 0;
    for (const table of ['folders', 'files'] as const) {
      const row = await services.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where(column, '=', value).executeTakeFirstOrThrow();
      n += Number(row.n);
    }
    return n;
  };

  test('goes to the bin whole, and comes back whole', async () => {
    const { services, alice } = await aliceAndBob();
    const { top, big } = await bigTree(services, alice);
    const before = await snapshot(services.db, alice);
    const total = before.usedBytes;
    expect(before.folders.length + before.files.length).toBe(100_002);
    expect(await folderSizes(services.db, [top.id, big.id])).toEqual([total, total]);

    await toBin(services, alice, String(big.id), '');
    expect(await countWhere(services, 'binned_under', big.id)).toBe(100_000);
    expect(await folderSizes(services.db, [top.id, big.id])).toEqual([0, total]);
    expect(await namesIn(services, alice, top.id)).toEqual([]);

    const back = await restore(services, alice, String(big.id), '');
    expect(back.folders.map((f) => [f.name, f.size, f.path])).toEqual([['Big', total, '/Top/Big']]);
    expect(await countWhere(services, 'binned_under', big.id)).toBe(0);
    expect(await snapshot(services.db, alice)).toEqual(before);
  });
});

describe('FolderAndFileRestore of encrypted items', () => {
  // Found by the model-based tests (test/reliability/tree-model.test.ts): the answer said tip="".
  test('the answer shows each restored encrypted item with its tip, as listings do', async () => {
    const services = await openTestServices();
    const alice = await openSession(services, 'alice');
    const folder = await folderAdd(alice.ctx, encryptionSigned(alice, { dirid: 0n, name: 'Private' }));
    const file = await storeFile(services, alice, folder.item.id, 'plan.txt', 'the plan');
    await folderEncrypt(alice.ctx, encryptionSigned(alice, { dirid: BigInt(folder.item.id), password: 'open sesame', password_tip: 'the usual' }));
    await folderAndFileDelete(alice.ctx, encryptionSigned(alice, { dirids: String(folder.item.id), fids: String(file.id), is_real: 0 }));
    const restored = (await folderAndFileRestore(alice.ctx, encryptionSigned(alice, { dirids: String(folder.item.id), fids: String(file.id) }))) as Listing;
    expect(restored.folders).toMatchObject([{ id: folder.item.id, encrypted: true, tip: 'the usual' }]);
    expect(restored.files).toMatchObject([{ id: file.id, encrypted: true, tip: 'the usual' }]);
  });
});
