/**
 * Id lists (DECISIONS.md §8) and the check that ids name the caller's live items (§3: one 404 for
 * missing, another account's, and in the bin).
 */
import { describe, expect, test } from 'vitest';
import { OpError, ResultCode } from '../../src/operations/errors';
import { itemIdOf, parseIdList, parseIdLists, requireFiles, requireFolder, requireFolders, requireParent } from '../../src/operations/tree/id-lists';
import { openTestServices } from '../helpers/database';
import { addFile, addFolder, testAccount } from '../helpers/tree';
import { rejected } from '../helpers/refusals';

function thrown(run: () => unknown): OpError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OpError);
    return error as OpError;
  }
  throw new Error('nothing was thrown');
}


describe('parseIdList', () => {
  test('reads comma-separated ids', () => {
    expect(parseIdList('3,1,2', 'fids', 1000)).toEqual([3, 1, 2]);
  });

  test('tolerates whitespace around ids', () => {
    expect(parseIdList(' 3 ,\t1,\n2 ', 'fids', 1000)).toEqual([3, 1, 2]);
  });

  test('collapses duplicates, also written with leading zeros', () => {
    expect(parseIdList('7,8,7,007', 'fids', 1000)).toEqual([7, 8]);
  });

  test('skips empty entries: a trailing comma is harmless', () => {
    expect(parseIdList('1,,2,', 'fids', 1000)).toEqual([1, 2]);
  });

  test('an empty or missing list is empty', () => {
    expect(parseIdList('', 'fids', 1000)).toEqual([]);
    expect(parseIdList(null, 'fids', 1000)).toEqual([]);
    expect(parseIdList(' , ', 'fids', 1000)).toEqual([]);
  });

  test.each(['a', '1;2', '-1', '+1', '1.5', '1 2', '0x10', '١'])('refuses %j with 400, naming the list', (text) => {
    const error = thrown(() => parseIdList(`5,${text}`, 'dirids', 1000));
    expect(error.code).toBe(ResultCode.InvalidArgument);
    expect(error.message).toMatch(/^dirids must be comma-separated ids: ".*" is not an id$/);
  });

  test('accepts exactly the limit of distinct ids and refuses one more', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(parseIdList(ids.join(','), 'fids', 1000)).toHaveLength(1000);
    const error = thrown(() => parseIdList([...ids, 1001].join(','), 'fids', 1000));
    expect(error.code).toBe(ResultCode.InvalidArgument);
    expect(error.message).toBe('fids holds more than 1000 ids');
  });

  test('duplicates do not count against the limit', () => {
    expect(parseIdList(Array(2000).fill('9').join(','), 'fids', 1000)).toEqual([9]);
  });

  test('ids no item can have (0, beyond 2^53) are not syntax errors: they parse to 0, which nothing has', () => {
    expect(parseIdList('0,99999999999999999999', 'fids', 1000)).toEqual([0]);
    expect(itemIdOf(-5n)).toBe(0);
    expect(itemIdOf(2n ** 60n)).toBe(0);
    expect(itemIdOf(42n)).toBe(42);
  });
});

describe('parseIdLists', () => {
  test('one list may be empty when the other is not', () => {
    expect(parseIdLists('', '4', 1000)).toEqual({ folderIds: [], fileIds: [4] });
    expect(parseIdLists('4', null, 1000)).toEqual({ folderIds: [4], fileIds: [] });
  });

  test('both empty is 400', () => {
    const error = thrown(() => parseIdLists(' ', '', 1000));
    expect(error.code).toBe(ResultCode.InvalidArgument);
    expect(error.message).toBe('dirids and fids are both empty: name at least one item');
  });
});

describe('requiring live items of the caller', () => {
  test('finds all the folders and files asked for', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    const a = await addFolder(services, alice, 0, 'A');
    const b = await addFolder(services, alice, a.id, 'B');
    const f = await addFile(services, alice, b.id, 'x.txt', 3);
    expect([...(await requireFolders(services.db, alice, [a.id, b.id])).keys()]).toEqual(expect.arrayContaining([a.id, b.id]));
    expect((await requireFiles(services.db, alice, [f.id])).get(f.id)).toMatchObject({ name: 'x.txt', dir: b.id, size: 3 });
  });

  test('a missing id, another account\'s id and an item in the bin get the same 404', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const bob = await testAccount(services, 'bob');
    const mine = await addFolder(services, alice, 0, 'mine');
    const binned = await addFolder(services, alice, 0, 'binned');
    const beneath = await addFolder(services, alice, binned.id, 'beneath');
    const bobs = await addFolder(services, bob, 0, 'bobs');
    await services.db.updateTable('folders').set({ deleted_at: 1 }).where('id', '=', binned.id).execute();
    await services.db.updateTable('folders').set({ binned_under: binned.id }).where('id', '=', beneath.id).execute();

    for (const id of [9999, bobs.id, binned.id, beneath.id]) {
      const error = await rejected(requireFolders(services.db, alice, [mine.id, id]));
      expect(error.code).toBe(ResultCode.NotFound);
      expect(error.message).toBe(`folder ${id} not found`);
    }
  });

  test('requireParent takes 0 as the root and refuses a folder that is not the caller\'s', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const bob = await testAccount(services, 'bob');
    const bobs = await addFolder(services, bob, 0, 'bobs');
    expect(await requireParent(services.db, alice, 0n)).toBe(0);
    expect((await rejected(requireParent(services.db, alice, BigInt(bobs.id)))).code).toBe(ResultCode.NotFound);
    expect((await rejected(requireParent(services.db, alice, -1n))).code).toBe(ResultCode.NotFound);
  });

  test('the root is not a folder that can be named by id', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services);
    expect((await rejected(requireFolder(services.db, alice, 0n))).code).toBe(ResultCode.NotFound);
  });
});
