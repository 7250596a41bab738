/**
 * FolderAdd, FolderRename, FileRename and Move (DECISIONS.md §7, §16) on a real SQLite file: their
 * results, name clashes, ownership, all-or-nothing moves, and folder sizes kept right.
 */
import { describe, expect, test } from 'vitest';
import { defaultLimits } from '../../src/config';
import type { FileItem, FolderItem, Services } from '../../src/operations/context';
import { ResultCode } from '../../src/operations/errors';
import { inTreeTransaction } from '../../src/operations/tree/file-records';
import { fileRename, folderAdd, folderRename, move } from '../../src/operations/tree/folders';
import { naturalSortKey } from '../../src/operations/tree/names';
import { folderEncrypt } from '../../src/operations/encryption/encryption';
import { openTestServices, type TestServices } from '../helpers/database';
import { openSession, signed as encryptionSigned, storeFile } from '../helpers/encryption';
import {
  addFile,
  addFolderChain,
  as,
  countingStatements,
  folderSizes,
  recomputedSize,
  snapshot,
  testAccount,
} from '../helpers/tree';
import { rejected } from '../helpers/refusals';

const signed = { uid: 0n, token: 'test-token', sign: '' };

const callFolderAdd = (services: Services, accountId: number, dirid: number | bigint, name: string | null) =>
  folderAdd(as(services, accountId), { ...signed, dirid: BigInt(dirid), name }).then((r) => r.item as FolderItem);
const callFolderRename = (services: Services, accountId: number, dirid: number | bigint, newname: string | null) =>
  folderRename(as(services, accountId), { ...signed, dirid: BigInt(dirid), newname }).then((r) => r.item as FolderItem);
const callFileRename = (services: Services, accountId: number, fid: number | bigint, newname: string | null) =>
  fileRename(as(services, accountId), { ...signed, fid: BigInt(fid), newname }).then((r) => r.item as FileItem);
const callMove = (services: Services, accountId: number, dirids: string | null, fids: string | null, todir: number | bigint) =>
  move(as(services, accountId), { ...signed, dirids, fids, todir: BigInt(todir) });


async function aliceAndBob(): Promise<{ services: TestServices; alice: number; bob: number }> {
  const services = await openTestServices();
  return { services, alice: await testAccount(services, 'alice'), bob: await testAccount(services, 'bob') };
}

/** `count` empty folders in the root, written as rows (FolderAdd would take a while for 1,000). */
async function insertFolders(services: Services, accountId: number, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const name = `folder ${i}`;
    const row = await services.db
      .insertInto('folders')
      .values({ account_id: accountId, parent_id: 0, name, name_key: name, sort_key: naturalSortKey(name), created_at: 0, updated_at: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(row.id);
  }
  return ids;
}

async function parentOfFolder(services: Services, id: number): Promise<number> {
  return (await services.db.selectFrom('folders').select('parent_id').where('id', '=', id).executeTakeFirstOrThrow()).parent_id;
}

async function folderOfFile(services: Services, id: number): Promise<number> {
  return (await services.db.selectFrom('files').select('folder_id').where('id', '=', id).executeTakeFirstOrThrow()).folder_id;
}

/** Every folder's kept size equals the total of the live files beneath it. */
async function expectSizesConsistent(services: Services, accountId: number): Promise<void> {
  const { folders } = await snapshot(services.db, accountId);
  for (const folder of folders) expect([folder.name, folder.size]).toEqual([folder.name, await recomputedSize(services.db, accountId, folder.id)]);
}

describe('FolderAdd', () => {
  test('returns the new folder: its parent, name, size 0 and time', async () => {
    const { services, alice } = await aliceAndBob();
    const folder = await callFolderAdd(services, alice, 0, 'Photos');
    expect(folder).toEqual({
      type: 'folder',
      id: folder.id,
      dir: 0,
      name: 'Photos',
      size: 0,
      time: services.now(),
      shared: false,
      linked: false,
      encrypted: false,
    });
    const nested = await callFolderAdd(services, alice, folder.id, '2026');
    expect(nested).toMatchObject({ dir: folder.id, name: '2026' });
  });

  test('stores the name in NFC with its keys', async () => {
    const { services, alice } = await aliceAndBob();
    const folder = await callFolderAdd(services, alice, 0, 'Cafe\u0301 10');
    expect(folder.name).toBe('Caf\u00e9 10');
    const row = await services.db.selectFrom('folders').selectAll().where('id', '=', folder.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name: 'Caf\u00e9 10', name_key: 'caf\u00e9 10', sort_key: naturalSortKey('Caf\u00e9 10') });
  });

  test('a name taken by a folder, in any case, is 409 saying by what', async () => {
    const { services, alice } = await aliceAndBob();
    await callFolderAdd(services, alice, 0, 'Report');
    const error = await rejected(callFolderAdd(services, alice, 0, 'rePORT'));
    expect(error.code).toBe(ResultCode.Conflict);
    expect(error.message).toBe('a folder named "Report" already exists in this folder');
  });

  test('a name taken by a file is 409 too: folders and files share the names of a folder', async () => {
    const { services, alice } = await aliceAndBob();
    await addFile(services, alice, 0, 'notes', 1);
    const error = await rejected(callFolderAdd(services, alice, 0, 'Notes'));
    expect(error.code).toBe(ResultCode.Conflict);
    expect(error.message).toBe('a file named "notes" already exists in this folder');
  });

  test('"é" composed and decomposed are the same name', async () => {
    const { services, alice } = await aliceAndBob();
    await callFolderAdd(services, alice, 0, 'caf\u00e9');
    expect((await rejected(callFolderAdd(services, alice, 0, 'cafe\u0301'))).code).toBe(ResultCode.Conflict);
  });

  test('"Файл" and "файл" are the same name', async () => {
    const { services, alice } = await aliceAndBob();
    await callFolderAdd(services, alice, 0, 'Файл');
    expect((await rejected(callFolderAdd(services, alice, 0, 'файл'))).code).toBe(ResultCode.Conflict);
  });

  test('the same name is fine in another folder, beside an item in the bin, and for another account', async () => {
    const { services, alice, bob } = await aliceAndBob();
    const other = await callFolderAdd(services, alice, 0, 'other');
    await callFolderAdd(services, alice, other.id, 'x');
    await callFolderAdd(services, bob, 0, 'x');
    const binned = await callFolderAdd(services, alice, 0, 'x');
    await services.db.updateTable('folders').set({ deleted_at: 1 }).where('id', '=', binned.id).execute();
    expect((await callFolderAdd(services, alice, 0, 'x')).name).toBe('x');
  });

  test('an invalid name is 400 and adds nothing', async () => {
    const { services, alice } = await aliceAndBob();
    const error = await rejected(callFolderAdd(services, alice, 0, 'a/b'));
    expect(error.code).toBe(ResultCode.InvalidArgument);
    expect(error.message).toBe('name may not contain "/"');
    expect((await snapshot(services.db, alice)).folders).toEqual([]);
  });

  test('a parent that is missing, another account\'s or in the bin is 404', async () => {
    const { services, alice, bob } = await aliceAndBob();
    const bobs = await callFolderAdd(services, bob, 0, 'bobs');
    const binned = await callFolderAdd(services, alice, 0, 'binned');
    await services.db.updateTable('folders').set({ deleted_at: 1 }).where('id', '=', binned.id).execute();
    for (const parent of [bobs.id, binned.id, 9999, -1]) {
      expect((await rejected(callFolderAdd(services, alice, parent, 'x'))).code).toBe(ResultCode.NotFound);
    }
  });

  test('a name the unique index refuses (taken by a concurrent change) is 409, not a fault', async () => {
    const { services, alice } = await aliceAndBob();
    await callFolderAdd(services, alice, 0, 'x');
    const error = await rejected(
      inTreeTransaction(services.db, (tx) =>
        tx
          .insertInto('folders')
          .values({ account_id: alice, parent_id: 0, name: 'X', name_key: 'x', created_at: 0, updated_at: 0 })
          .execute(),
      ),
    );
    expect(error.code).toBe(ResultCode.Conflict);
  });
});

describe('FolderRename', () => {
  test('returns the renamed folder with the time of the rename', async () => {
    const { services, alice } = await aliceAndBob();
    const folder = await callFolderAdd(services, alice, 0, 'old');
    await addFile(services, alice, folder.id, 'a.bin', 10);
    services.clock.advance(60_000);
    const renamed = await callFolderRename(services, alice, folder.id, 'new 2');
    expect(renamed).toMatchObject({ id: folder.id, dir: 0, name: 'new 2', size: 10, time: services.now() });
    const row = await services.db.selectFrom('folders').selectAll().where('id', '=', folder.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name_key: 'new 2', sort_key: naturalSortKey('new 2') });
  });

  test('another case of its own name is allowed: "report" → "Report"', async () => {
    const { services, alice } = await aliceAndBob();
    const folder = await callFolderAdd(services, alice, 0, 'report');
    expect((await callFolderRename(services, alice, folder.id, 'Report')).name).toBe('Report');
  });

  test('the same name again changes nothing, not even the time', async () => {
    const { services, alice } = await aliceAndBob();
    const folder = await callFolderAdd(services, alice, 0, 'same');
    services.clock.advance(60_000);
    expect(await callFolderRename(services, alice, folder.id, 'same')).toEqual(folder);
  });

  test('a name taken by a sibling folder or file is 409, and nothing changes', async () => {
    const { services, alice } = await aliceAndBob();
    const folder = await callFolderAdd(services, alice, 0, 'mine');
    await callFolderAdd(services, alice, 0, 'Sibling');
    await addFile(services, alice, 0, 'file.txt', 1);
    const before = await snapshot(services.db, alice);
    expect((await rejected(callFolderRename(services, alice, folder.id, 'sibling'))).message).toBe(
      'a folder named "Sibling" already exists in this folder',
    );
    expect((await rejected(callFolderRename(services, alice, folder.id, 'FILE.txt'))).message).toBe(
      'a file named "file.txt" already exists in this folder',
    );
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('an invalid new name is 400, naming newname', async () => {
    const { services, alice } = await aliceAndBob();
    const folder = await callFolderAdd(services, alice, 0, 'mine');
    const error = await rejected(callFolderRename(services, alice, folder.id, '..'));
    expect(error.code).toBe(ResultCode.InvalidArgument);
    expect(error.message).toBe('newname may not be "." or ".."');
  });

  test('another account\'s folder, the root, and a folder in the bin are 404', async () => {
    const { services, alice, bob } = await aliceAndBob();
    const bobs = await callFolderAdd(services, bob, 0, 'bobs');
    const binned = await callFolderAdd(services, alice, 0, 'binned');
    await services.db.updateTable('folders').set({ deleted_at: 1 }).where('id', '=', binned.id).execute();
    for (const id of [bobs.id, 0, binned.id]) {
      expect((await rejected(callFolderRename(services, alice, id, 'x'))).code).toBe(ResultCode.NotFound);
    }
    expect((await snapshot(services.db, bob)).folders[0].name).toBe('bobs');
  });
});

describe('FileRename', () => {
  test('returns the renamed file, its extension following the new name', async () => {
    const { services, alice } = await aliceAndBob();
    const file = await addFile(services, alice, 0, 'notes.txt', 5);
    services.clock.advance(1000);
    const renamed = await callFileRename(services, alice, file.id, 'Notes.MD');
    expect(renamed).toMatchObject({ id: file.id, name: 'Notes.MD', ext: 'md', size: 5, hash: file.hash, time: services.now() });
    expect((await callFileRename(services, alice, file.id, 'README')).ext).toBe('');
    const row = await services.db.selectFrom('files').selectAll().where('id', '=', file.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name: 'README', name_key: 'readme', sort_key: naturalSortKey('README'), ext: '' });
  });

  test('another case of its own name is allowed', async () => {
    const { services, alice } = await aliceAndBob();
    const file = await addFile(services, alice, 0, 'report.pdf', 5);
    expect((await callFileRename(services, alice, file.id, 'Report.PDF')).name).toBe('Report.PDF');
  });

  test('a name taken by a folder or a file of its folder is 409, and nothing changes', async () => {
    const { services, alice } = await aliceAndBob();
    const folder = await callFolderAdd(services, alice, 0, 'Docs');
    const file = await addFile(services, alice, folder.id, 'a.txt', 1);
    await addFile(services, alice, folder.id, 'b.txt', 1);
    await callFolderAdd(services, alice, folder.id, 'Sub');
    const before = await snapshot(services.db, alice);
    expect((await rejected(callFileRename(services, alice, file.id, 'B.TXT'))).code).toBe(ResultCode.Conflict);
    expect((await rejected(callFileRename(services, alice, file.id, 'sub'))).message).toBe('a folder named "Sub" already exists in this folder');
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('another account\'s file and a file in the bin are 404', async () => {
    const { services, alice, bob } = await aliceAndBob();
    const bobs = await addFile(services, bob, 0, 'b.txt', 1);
    const binned = await addFile(services, alice, 0, 'a.txt', 1);
    await services.db.updateTable('files').set({ deleted_at: 1 }).where('id', '=', binned.id).execute();
    for (const id of [bobs.id, binned.id, 9999]) {
      expect((await rejected(callFileRename(services, alice, id, 'c.txt'))).code).toBe(ResultCode.NotFound);
    }
  });
});

describe('Move', () => {
  test('moves folders and files into a folder, keeping their times', async () => {
    const { services, alice } = await aliceAndBob();
    const target = await callFolderAdd(services, alice, 0, 'target');
    const a = await callFolderAdd(services, alice, 0, 'a');
    const f = await addFile(services, alice, 0, 'f.txt', 3);
    services.clock.advance(60_000);
    expect(await callMove(services, alice, String(a.id), String(f.id), target.id)).toEqual({ kind: 'empty' });
    expect(await parentOfFolder(services, a.id)).toBe(target.id);
    expect(await folderOfFile(services, f.id)).toBe(target.id);
    const rows = await snapshot(services.db, alice);
    expect(rows.folders.find((r) => r.id === a.id)!.updated_at).toBe(a.time.getTime());
    expect(rows.files.find((r) => r.id === f.id)!.updated_at).toBe(f.time.getTime());
  });

  test('moves to the root with todir 0', async () => {
    const { services, alice } = await aliceAndBob();
    const box = await callFolderAdd(services, alice, 0, 'box');
    const f = await addFile(services, alice, box.id, 'f.txt', 3);
    await callMove(services, alice, '', String(f.id), 0);
    expect(await folderOfFile(services, f.id)).toBe(0);
    expect(await folderSizes(services.db, [box.id])).toEqual([0]);
  });

  test('in a 50-deep tree, the old and new ancestors\' sizes are right after moves', async () => {
    const { services, alice } = await aliceAndBob();
    const chain = await addFolderChain(services, alice, 50);
    const ids = chain.map((f) => f.id);
    const other = await callFolderAdd(services, alice, 0, 'other');
    const deep = await addFile(services, alice, ids[49], 'deep.bin', 1000);
    await addFile(services, alice, ids[19], 'twenty.bin', 10);

    // A file from level 50 to another branch: every level loses it, the other branch gains it.
    await callMove(services, alice, '', String(deep.id), other.id);
    expect(await folderSizes(services.db, ids)).toEqual(ids.map((_, level) => (level <= 19 ? 10 : 0)));
    expect(await folderSizes(services.db, [other.id])).toEqual([1000]);

    // The file back, then the subtree of levels 30-50 under "other", then back in under level 10.
    await callMove(services, alice, '', String(deep.id), ids[49]);
    await callMove(services, alice, String(ids[29]), '', other.id);
    const levelsAbove = (level: number) => (level <= 19 ? 10 : 0);
    expect(await folderSizes(services.db, [other.id, ...ids])).toEqual([1000, ...ids.map((_, level) => (level <= 28 ? levelsAbove(level) : 1000))]);
    await callMove(services, alice, String(ids[29]), '', ids[9]);
    expect(await folderSizes(services.db, [other.id, ...ids])).toEqual([
      0,
      ...ids.map((_, level) => (level <= 9 ? 1010 : level <= 28 ? levelsAbove(level) : 1000)),
    ]);
    await expectSizesConsistent(services, alice);
    expect((await snapshot(services.db, alice)).usedBytes).toBe(1010);
  });

  test('a folder moved together with a file from inside it leaves every size right', async () => {
    const { services, alice } = await aliceAndBob();
    const [a, b] = [await callFolderAdd(services, alice, 0, 'A'), await callFolderAdd(services, alice, 0, 'B')];
    const inner = await callFolderAdd(services, alice, a.id, 'inner');
    const f = await addFile(services, alice, inner.id, 'f.bin', 100);
    await addFile(services, alice, inner.id, 'g.bin', 7);
    const target = await callFolderAdd(services, alice, b.id, 'target');
    await callMove(services, alice, String(inner.id), String(f.id), target.id);
    expect(await folderSizes(services.db, [a.id, b.id, target.id, inner.id])).toEqual([0, 107, 107, 7]);
    await expectSizesConsistent(services, alice);
  });

  test('moves many items from many folders in the same few statements as one', async () => {
    const { services, alice } = await aliceAndBob();
    const target = await callFolderAdd(services, alice, 0, 'target');
    const files: FileItem[] = [];
    for (let i = 0; i < 60; i++) {
      const folder = await callFolderAdd(services, alice, 0, `f${i}`);
      files.push(await addFile(services, alice, folder.id, `x${i}.bin`, i + 1));
    }
    const counting = countingStatements(services.db);
    const counted = { ...services, db: counting.db };
    await callMove(counted, alice, '', String(files[0].id), target.id);
    const one = counting.count();
    await callMove(counted, alice, '', files.slice(1).map((f) => f.id).join(','), target.id);
    expect(counting.count() - one).toBe(one);
    expect(await folderSizes(services.db, [target.id])).toEqual([(60 * 61) / 2]);
    await expectSizesConsistent(services, alice);
  });

  test('moves a full id list: 1,000 files out of 1,000 folders, every size right', async () => {
    // Found by the stalls bench: the size walk once seeded a recursive query with a VALUES list of
    // a row per folder, and SQLite refuses more than 500 of those (a fault, not a refusal).
    const { services, alice } = await aliceAndBob();
    const target = await callFolderAdd(services, alice, 0, 'target');
    const folderIds = await insertFolders(services, alice, defaultLimits.maxIdsPerList);
    const files: FileItem[] = [];
    for (const [i, folderId] of folderIds.entries()) files.push(await addFile(services, alice, folderId, `x${i}.bin`, 1));
    await callMove(services, alice, '', files.map((f) => f.id).join(','), target.id);
    expect(await folderSizes(services.db, [target.id, folderIds[0], folderIds.at(-1)!])).toEqual([defaultLimits.maxIdsPerList, 0, 0]);
  }, 120_000); // 1,000 stored files: 5 s alone, 15 s and more beside other test files

  test('a folder into itself or its own subfolder is 409, and nothing changes', async () => {
    const { services, alice } = await aliceAndBob();
    const chain = await addFolderChain(services, alice, 5);
    const f = await addFile(services, alice, 0, 'f.txt', 1);
    const before = await snapshot(services.db, alice);
    for (const todir of [chain[1].id, chain[4].id]) {
      const error = await rejected(callMove(services, alice, `${chain[1].id}`, `${f.id}`, todir));
      expect(error.code).toBe(ResultCode.Conflict);
      expect(error.message).toBe('cannot move a folder into itself or its own subfolder');
    }
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('a folder may move up its own chain, into an ancestor', async () => {
    const { services, alice } = await aliceAndBob();
    const chain = await addFolderChain(services, alice, 5);
    await callMove(services, alice, String(chain[4].id), '', chain[1].id);
    expect(await parentOfFolder(services, chain[4].id)).toBe(chain[1].id);
  });

  test('one bad id among good ones is 404, and nothing changes', async () => {
    const { services, alice } = await aliceAndBob();
    const target = await callFolderAdd(services, alice, 0, 'target');
    const a = await callFolderAdd(services, alice, 0, 'a');
    const f = await addFile(services, alice, 0, 'f.txt', 5);
    const g = await addFile(services, alice, 0, 'g.txt', 5);
    const before = await snapshot(services.db, alice);
    const error = await rejected(callMove(services, alice, `${a.id}`, `${f.id},9999,${g.id}`, target.id));
    expect(error.code).toBe(ResultCode.NotFound);
    expect(error.message).toBe('file 9999 not found');
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('another account\'s items or destination are 404, and nothing changes on either side', async () => {
    const { services, alice, bob } = await aliceAndBob();
    const mine = await callFolderAdd(services, alice, 0, 'mine');
    const myFile = await addFile(services, alice, 0, 'mine.txt', 1);
    const bobsFolder = await callFolderAdd(services, bob, 0, 'bobs');
    const bobsFile = await addFile(services, bob, bobsFolder.id, 'bobs.txt', 1);
    const [aliceBefore, bobBefore] = [await snapshot(services.db, alice), await snapshot(services.db, bob)];
    const attempts = [
      callMove(services, alice, '', `${myFile.id},${bobsFile.id}`, mine.id),
      callMove(services, alice, `${bobsFolder.id}`, '', mine.id),
      callMove(services, alice, '', `${myFile.id}`, bobsFolder.id),
    ];
    // Each refusal is awaited together (they run at once on a PostgreSQL pool, so none may reject unobserved).
    for (const refusal of await Promise.all(attempts.map(rejected))) expect(refusal.code).toBe(ResultCode.NotFound);
    expect([await snapshot(services.db, alice), await snapshot(services.db, bob)]).toEqual([aliceBefore, bobBefore]);
  });

  test('a destination or an item in the bin is 404', async () => {
    const { services, alice } = await aliceAndBob();
    const binned = await callFolderAdd(services, alice, 0, 'binned');
    const f = await addFile(services, alice, 0, 'f.txt', 1);
    await services.db.updateTable('folders').set({ deleted_at: 1 }).where('id', '=', binned.id).execute();
    expect((await rejected(callMove(services, alice, '', `${f.id}`, binned.id))).code).toBe(ResultCode.NotFound);
    expect((await rejected(callMove(services, alice, `${binned.id}`, '', 0))).code).toBe(ResultCode.NotFound);
    expect((await rejected(callMove(services, alice, '', `${f.id}`, -3))).code).toBe(ResultCode.NotFound);
  });

  test('a name taken in the destination is 409 and nothing moves, not even the other items', async () => {
    const { services, alice } = await aliceAndBob();
    const target = await callFolderAdd(services, alice, 0, 'target');
    await addFile(services, alice, target.id, 'Report.pdf', 1);
    const free = await addFile(services, alice, 0, 'free.txt', 1);
    const clash = await addFile(services, alice, 0, 'report.PDF', 1);
    const before = await snapshot(services.db, alice);
    const error = await rejected(callMove(services, alice, '', `${free.id},${clash.id}`, target.id));
    expect(error.code).toBe(ResultCode.Conflict);
    expect(error.message).toBe('"report.PDF" cannot be moved: a file named "Report.pdf" already exists in the destination');
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('two items with the same name cannot move into one folder', async () => {
    const { services, alice } = await aliceAndBob();
    const [a, b, target] = [await callFolderAdd(services, alice, 0, 'a'), await callFolderAdd(services, alice, 0, 'b'), await callFolderAdd(services, alice, 0, 't')];
    await callFolderAdd(services, alice, a.id, 'same');
    const f = await addFile(services, alice, b.id, 'SAME', 1);
    const sub = (await snapshot(services.db, alice)).folders.find((r) => r.name === 'same')!;
    const error = await rejected(callMove(services, alice, `${sub.id}`, `${f.id}`, target.id));
    expect(error.code).toBe(ResultCode.Conflict);
    expect(error.message).toBe('two of the items to move are named "same" and "SAME"');
  });

  test('an item already in the destination stays as it is, and the others move', async () => {
    const { services, alice } = await aliceAndBob();
    const target = await callFolderAdd(services, alice, 0, 'target');
    const already = await addFile(services, alice, target.id, 'here.txt', 4);
    const f = await addFile(services, alice, 0, 'there.txt', 6);
    await callMove(services, alice, '', `${already.id},${f.id}`, target.id);
    expect([await folderOfFile(services, already.id), await folderOfFile(services, f.id)]).toEqual([target.id, target.id]);
    expect(await folderSizes(services.db, [target.id])).toEqual([10]);
    const before = await snapshot(services.db, alice);
    await callMove(services, alice, '', `${already.id}`, target.id);
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('duplicate ids move once', async () => {
    const { services, alice } = await aliceAndBob();
    const target = await callFolderAdd(services, alice, 0, 'target');
    const f = await addFile(services, alice, 0, 'f.txt', 6);
    await callMove(services, alice, '', ` ${f.id}, ${f.id} ,00${f.id}`, target.id);
    expect(await folderSizes(services.db, [target.id])).toEqual([6]);
  });

  test('bad id lists are 400: both empty, not numbers, or too many', async () => {
    const services = await openTestServices({ config: { limits: { ...defaultLimits, maxIdsPerList: 3 } } });
    const alice = await testAccount(services);
    const cases: Array<[string, string, string]> = [
      ['', ' ', 'dirids and fids are both empty: name at least one item'],
      ['1,x', '', 'dirids must be comma-separated ids: "x" is not an id'],
      ['', '1,2,3,4', 'fids holds more than 3 ids'],
    ];
    for (const [dirids, fids, message] of cases) {
      const error = await rejected(callMove(services, alice, dirids, fids, 0));
      expect([error.code, error.message]).toEqual([ResultCode.InvalidArgument, message]);
    }
  });
});

describe('an encrypted item renamed', () => {
  // Found by the model-based tests (test/reliability/tree-model.test.ts): the answer said tip="".
  const TIP = 'the usual one';

  async function encryptedFolderWithFile() {
    const services = await openTestServices();
    const alice = await openSession(services, 'alice');
    const folder = await folderAdd(alice.ctx, encryptionSigned(alice, { dirid: 0n, name: 'Private' }));
    const file = await storeFile(services, alice, folder.item.id, 'plan.txt', 'the plan');
    await folderEncrypt(alice.ctx, encryptionSigned(alice, { dirid: BigInt(folder.item.id), password: 'open sesame', password_tip: TIP }));
    return { alice, folderId: folder.item.id, fileId: file.id };
  }

  test('FolderRename answers the folder with its tip, as listings show it, also for the same name again', async () => {
    const { alice, folderId } = await encryptedFolderWithFile();
    for (const newname of ['Secret', 'Secret']) {
      const renamed = await folderRename(alice.ctx, encryptionSigned(alice, { dirid: BigInt(folderId), newname }));
      expect(renamed.item).toMatchObject({ name: 'Secret', encrypted: true, tip: TIP });
    }
  });

  test('FileRename answers a file encrypted with its folder with the tip of that key', async () => {
    const { alice, fileId } = await encryptedFolderWithFile();
    const renamed = await fileRename(alice.ctx, encryptionSigned(alice, { fid: BigInt(fileId), newname: 'plan B.txt' }));
    expect(renamed.item).toMatchObject({ name: 'plan B.txt', encrypted: true, tip: TIP });
  });
});
