/**
 * addFileRecord: the record FileAdd creates once the content is in place (DECISIONS.md §6), with
 * folder sizes and the account's used bytes kept up to date, on a real SQLite file.
 */
import { describe, expect, test } from 'vitest';
import { ResultCode } from '../../src/operations/errors';
import { extensionOf, naturalSortKey } from '../../src/operations/tree/names';
import { openTestServices } from '../helpers/database';
import { addFile, addFolder, addFolderChain, countingStatements, folderSizes, snapshot, testAccount } from '../helpers/tree';
import { rejected } from '../helpers/refusals';


async function usedBytes(services: Awaited<ReturnType<typeof openTestServices>>, accountId: number): Promise<number> {
  return (await snapshot(services.db, accountId)).usedBytes;
}

describe('addFileRecord', () => {
  test('returns the new file: its folder, name, extension, size, hash and time', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const folder = await addFolder(services, alice, 0, 'Docs');
    const file = await addFile(services, alice, folder.id, 'Report.PDF', 1234);
    expect(file).toMatchObject({ type: 'file', dir: folder.id, name: 'Report.PDF', ext: 'pdf', size: 1234, shared: false, linked: false, encrypted: false });
    expect(file.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(file.time).toEqual(services.now());
  });

  test('stores the keys that uniqueness and listings use', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const file = await addFile(services, alice, 0, 'File10.TXT', 1);
    const row = await services.db.selectFrom('files').selectAll().where('id', '=', file.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name_key: 'file10.txt', sort_key: naturalSortKey('File10.TXT'), ext: 'txt', folder_id: 0, account_id: alice });
  });

  test('a file in the root changes no folder and counts against the account', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    await addFile(services, alice, 0, 'a.bin', 100);
    await addFile(services, alice, 0, 'b.bin', 23);
    expect(await usedBytes(services, alice)).toBe(123);
  });

  test('in a 50-deep tree, every ancestor grows by the size of each file added beneath it', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const chain = await addFolderChain(services, alice, 50);
    const ids = chain.map((f) => f.id);
    await addFile(services, alice, ids[49], 'deep.bin', 1000);
    await addFile(services, alice, ids[9], 'tenth.bin', 7);
    const expected = ids.map((_, level) => (level <= 9 ? 1007 : 1000));
    expect(await folderSizes(services.db, ids)).toEqual(expected);
    expect(await usedBytes(services, alice)).toBe(1007);
  });

  test('adding a file 50 levels deep takes the same few statements as in the root', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const chain = await addFolderChain(services, alice, 50);
    const counting = countingStatements(services.db);
    const counted = { ...services, db: counting.db };
    await addFile(counted, alice, chain[49].id, 'deep.bin', 1);
    const deep = counting.count();
    await addFile(counted, alice, chain[0].id, 'shallow.bin', 1);
    expect(counting.count() - deep).toBe(deep);
    expect(deep).toBeGreaterThan(0);
    // The content row, the account (lock, quota), the folder, the names taken, the file, the walk up, the sizes.
    expect(deep).toBeLessThanOrEqual(9);
  });

  test('a taken name is made unique: "report (1).pdf", then "report (2).pdf"', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const folder = await addFolder(services, alice, 0, 'Docs');
    expect((await addFile(services, alice, folder.id, 'report.pdf', 1)).name).toBe('report.pdf');
    expect((await addFile(services, alice, folder.id, 'report.pdf', 1)).name).toBe('report (1).pdf');
    expect((await addFile(services, alice, folder.id, 'Report.pdf', 1)).name).toBe('Report (2).pdf');
  });

  test('a name taken by a folder is made unique too', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    await addFolder(services, alice, 0, 'notes');
    const file = await addFile(services, alice, 0, 'notes', 1);
    expect(file).toMatchObject({ name: 'notes (1)', ext: '' });
  });

  test('a name ending in a dot keeps the dot last, so its numbered name has no extension either: "notes (1)."', async () => {
    // Found by the model-based tests (test/reliability/tree-model.test.ts): "notes. (1)" was stored with ext "",
    // though by the rule of protocol.md §10.1 its extension is " (1)".
    const services = await openTestServices();
    const alice = await testAccount(services);
    await addFile(services, alice, 0, 'notes.', 1);
    const file = await addFile(services, alice, 0, 'notes.', 1);
    expect(file).toMatchObject({ name: 'notes (1).', ext: '' });
    expect(extensionOf(file.name)).toBe(file.ext);
  });

  test('the first free number is used, whatever else the folder holds', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    for (const name of ['a.txt', 'a (1).txt', 'a (3).txt', 'a (x).txt', 'a (2).txt.bak']) await addFile(services, alice, 0, name, 1);
    expect((await addFile(services, alice, 0, 'a.txt', 1)).name).toBe('a (2).txt');
  });

  test('LIKE wildcards in a name are taken literally', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    await addFile(services, alice, 0, '100%_done!.txt', 1);
    await addFile(services, alice, 0, '100ab_done!.txt', 1);
    expect((await addFile(services, alice, 0, '100%_done!.txt', 1)).name).toBe('100%_done! (1).txt');
    expect((await addFile(services, alice, 0, '100%_done!.txt', 1)).name).toBe('100%_done! (2).txt');
  });

  test('names in other folders, in the bin, or of other accounts do not count', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const bob = await testAccount(services, 'bob');
    const other = await addFolder(services, alice, 0, 'other');
    await addFile(services, alice, other.id, 'x.txt', 1);
    await addFile(services, bob, 0, 'x.txt', 1);
    const binned = await addFile(services, alice, 0, 'x.txt', 1);
    await services.db.updateTable('files').set({ deleted_at: 1 }).where('id', '=', binned.id).execute();
    expect((await addFile(services, alice, 0, 'x.txt', 1)).name).toBe('x.txt');
  });

  test('a name that is taken and too long to number is refused with 409', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const long = `${'x'.repeat(251)}.txt`;
    await addFile(services, alice, 0, long, 1);
    const error = await rejected(addFile(services, alice, 0, long, 1));
    expect(error.code).toBe(ResultCode.Conflict);
    expect(error.message).toContain('longer than 255 characters');
  });

  test('an ext that does not agree with the name is refused with 400', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const error = await rejected(addFile(services, alice, 0, 'report.pdf', 1, { ext: 'doc' }));
    expect(error.code).toBe(ResultCode.InvalidArgument);
    expect(error.message).toBe('ext does not agree with name: the extension of "report.pdf" is "pdf"');
    expect((await rejected(addFile(services, alice, 0, 'README', 1, { ext: 'md' }))).code).toBe(ResultCode.InvalidArgument);
    expect((await rejected(addFile(services, alice, 0, 'a.md', 1, { ext: '.md' }))).code).toBe(ResultCode.InvalidArgument);
  });

  test('ext agrees regardless of case, and is stored in lower case', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    expect((await addFile(services, alice, 0, 'Photo.JPG', 1, { ext: 'JPG' })).ext).toBe('jpg');
    expect((await addFile(services, alice, 0, 'README', 1, { ext: null })).ext).toBe('');
  });

  test('an invalid name is refused with 400', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const error = await rejected(addFile(services, alice, 0, 'a:b.txt', 1));
    expect(error.code).toBe(ResultCode.InvalidArgument);
    expect(error.message).toBe('name may not contain ":"');
  });

  test('a folder that is missing, another account\'s or in the bin is 404, and nothing is added', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const bob = await testAccount(services, 'bob');
    const bobs = await addFolder(services, bob, 0, 'bobs');
    const binned = await addFolder(services, alice, 0, 'binned');
    await services.db.updateTable('folders').set({ deleted_at: 1 }).where('id', '=', binned.id).execute();
    const before = await snapshot(services.db, alice);
    for (const folderId of [bobs.id, binned.id, 9999]) {
      expect((await rejected(addFile(services, alice, folderId, 'x.txt', 5))).code).toBe(ResultCode.NotFound);
    }
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('beyond the quota is 413, and nothing changes', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice', 1000);
    const folder = await addFolder(services, alice, 0, 'Docs');
    await addFile(services, alice, folder.id, 'a.bin', 600);
    const before = await snapshot(services.db, alice);
    const error = await rejected(addFile(services, alice, folder.id, 'b.bin', 401));
    expect(error.code).toBe(ResultCode.TooLarge);
    expect(error.message).toContain('quota');
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('a file that fills the quota exactly is accepted', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice', 1000);
    await addFile(services, alice, 0, 'a.bin', 600);
    await addFile(services, alice, 0, 'b.bin', 400);
    expect(await usedBytes(services, alice)).toBe(1000);
  });

  test('a negative size is 400', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const error = await rejected(addFile(services, alice, 0, 'a.bin', -1n));
    expect(error.code).toBe(ResultCode.InvalidArgument);
    expect(error.message).toBe('size may not be negative');
  });

  test('a size beyond 2^53 is 413', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    expect((await rejected(addFile(services, alice, 0, 'a.bin', 2n ** 53n))).code).toBe(ResultCode.TooLarge);
  });

  test('an empty file is fine', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const folder = await addFolder(services, alice, 0, 'Docs');
    expect((await addFile(services, alice, folder.id, 'empty.txt', 0n)).size).toBe(0);
    expect(await folderSizes(services.db, [folder.id])).toEqual([0]);
  });
});
