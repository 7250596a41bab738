/**
 * Copy (docs/protocol.md §10.8) on a real database: copies share content, trees arrive with their names and
 * sizes, taken names are numbered, and every refusal (quota, cycle, foreign id, encrypted, item limit) changes nothing.
 */
import { describe, expect, test } from 'vitest';
import { defaultLimits } from '../../src/config';
import type { Services } from '../../src/operations/context';
import { folderEncrypt } from '../../src/operations/encryption/encryption';
import { ResultCode } from '../../src/operations/errors';
import { copy } from '../../src/operations/tree/copy';
import { folderAdd } from '../../src/operations/tree/folders';
import { openTestServices } from '../helpers/database';
import { openSession, signed as encryptionSigned, storeFile } from '../helpers/encryption';
import { rejected } from '../helpers/refusals';
import { addFile, addFolder, as, countingStatements, folderSizes, recomputedSize, snapshot, testAccount } from '../helpers/tree';

const signed = { uid: 0n, token: 'test-token', sign: '' };

const callCopy = (services: Services, accountId: number, dirids: string, fids: string, todir: number) =>
  copy(as(services, accountId), { ...signed, dirids, fids, todir: BigInt(todir) });

async function aliceAndBob(quotaBytes?: number, maxCopyItems = defaultLimits.maxCopyItems) {
  const services = await openTestServices({ config: { limits: { ...defaultLimits, maxCopyItems } } });
  return { services, alice: await testAccount(services, 'alice', quotaBytes), bob: await testAccount(services, 'bob') };
}

async function contentCount(services: Services): Promise<number> {
  const row = await services.db.selectFrom('content').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('Copy', () => {
  test('a file copy is a new record sharing the same content: no content row is added', async () => {
    const { services, alice } = await aliceAndBob();
    const target = await addFolder(services, alice, 0, 'target');
    const f = await addFile(services, alice, 0, 'f.txt', 5);
    const contents = await contentCount(services);
    expect(await callCopy(services, alice, '', String(f.id), target.id)).toEqual({ kind: 'empty' });
    const { files, usedBytes } = await snapshot(services.db, alice);
    const rows = await services.db.selectFrom('files').select(['folder_id', 'content_id']).where('account_id', '=', alice).execute();
    expect(files.map((row) => [row.folder_id, row.name])).toEqual([[0, 'f.txt'], [target.id, 'f.txt']]);
    expect(new Set(rows.map((row) => row.content_id)).size).toBe(1);
    expect(await contentCount(services)).toBe(contents);
    expect(Number(usedBytes)).toBe(10);
  });

  test('a folder tree is copied with its names and sizes; ancestors of the target grow', async () => {
    const { services, alice } = await aliceAndBob();
    const outer = await addFolder(services, alice, 0, 'outer');
    const target = await addFolder(services, alice, outer.id, 'target');
    const a = await addFolder(services, alice, 0, 'a');
    const b = await addFolder(services, alice, a.id, 'b');
    await addFolder(services, alice, b.id, 'c');
    await addFile(services, alice, a.id, 'one.txt', 3);
    await addFile(services, alice, b.id, 'two.txt', 4);
    await callCopy(services, alice, String(a.id), '', target.id);
    const { folders, files } = await snapshot(services.db, alice);
    const copyOfA = folders.find((row) => row.parent_id === target.id)!;
    const copyOfB = folders.find((row) => row.parent_id === copyOfA.id)!;
    expect([copyOfA.name, copyOfA.size, copyOfB.name, copyOfB.size]).toEqual(['a', 7, 'b', 4]);
    expect(folders.filter((row) => row.parent_id === copyOfB.id).map((row) => row.name)).toEqual(['c']);
    expect(files.filter((row) => row.folder_id === copyOfA.id).map((row) => row.name)).toEqual(['one.txt']);
    expect(files.filter((row) => row.folder_id === copyOfB.id).map((row) => row.name)).toEqual(['two.txt']);
    expect(await folderSizes(services.db, [outer.id, target.id, a.id])).toEqual([7, 7, 7]);
    for (const folder of folders) expect(folder.size).toBe(await recomputedSize(services.db, alice, folder.id));
  });

  test('a taken name gets a number, as FileAdd gives it', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'a');
    const f = await addFile(services, alice, 0, 'report.pdf', 1);
    await callCopy(services, alice, String(a.id), String(f.id), 0);
    await callCopy(services, alice, '', String(f.id), 0);
    const { folders, files } = await snapshot(services.db, alice);
    expect(folders.map((row) => row.name).sort()).toEqual(['a', 'a (1)']);
    expect(files.map((row) => row.name).sort()).toEqual(['report (1).pdf', 'report (2).pdf', 'report.pdf']);
  });

  test('a copy that does not fit in the quota is refused with 413 and changes nothing', async () => {
    const { services, alice } = await aliceAndBob(10);
    const a = await addFolder(services, alice, 0, 'a');
    await addFile(services, alice, a.id, 'f.txt', 6);
    const before = await snapshot(services.db, alice);
    const error = await rejected(callCopy(services, alice, String(a.id), '', 0));
    expect(error.code).toBe(ResultCode.TooLarge);
    expect(error.message).toMatch(/quota/);
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('a folder copied into itself or beneath itself is refused with 409', async () => {
    const { services, alice } = await aliceAndBob();
    const a = await addFolder(services, alice, 0, 'a');
    const b = await addFolder(services, alice, a.id, 'b');
    const before = await snapshot(services.db, alice);
    for (const todir of [a.id, b.id]) expect((await rejected(callCopy(services, alice, String(a.id), '', todir))).code).toBe(ResultCode.Conflict);
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test("another account's folder, file or destination is 404", async () => {
    const { services, alice, bob } = await aliceAndBob();
    const mine = await addFolder(services, alice, 0, 'mine');
    const bobsFolder = await addFolder(services, bob, 0, 'bobs');
    const bobsFile = await addFile(services, bob, 0, 'b.txt', 1);
    const before = await snapshot(services.db, alice);
    // One call at a time: calls started together would reject before their turn to be awaited.
    for (const call of [
      () => callCopy(services, alice, String(bobsFolder.id), '', mine.id),
      () => callCopy(services, alice, '', String(bobsFile.id), mine.id),
      () => callCopy(services, alice, String(mine.id), '', bobsFolder.id),
    ]) {
      expect((await rejected(call())).code).toBe(ResultCode.NotFound);
    }
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('encrypted folders, folders holding encrypted ones, and encrypted destinations are refused with 423', async () => {
    const services = await openTestServices();
    const alice = await openSession(services, 'alice');
    const add = async (dirid: number, name: string) => (await folderAdd(alice.ctx, encryptionSigned(alice, { dirid: BigInt(dirid), name }))).item.id;
    const outer = await add(0, 'outer');
    const secret = await add(outer, 'secret');
    const plain = await add(0, 'plain');
    await storeFile(services, alice, secret, 'plan.txt', 'the plan');
    await folderEncrypt(alice.ctx, encryptionSigned(alice, { dirid: BigInt(secret), password: 'open sesame', password_tip: '' }));
    const before = await snapshot(services.db, alice.uid);
    for (const [dirids, todir] of [[secret, 0], [outer, 0], [plain, secret]]) {
      expect((await rejected(callCopy(services, alice.uid, String(dirids), '', todir))).code).toBe(ResultCode.Locked);
    }
    expect(await snapshot(services.db, alice.uid)).toEqual(before);
  });

  test('more items than FSS_MAX_COPY_ITEMS is refused with 413 and changes nothing; exactly the limit is copied', async () => {
    const { services, alice } = await aliceAndBob(undefined, 3);
    const a = await addFolder(services, alice, 0, 'a');
    await addFile(services, alice, a.id, 'one.txt', 1);
    await addFile(services, alice, a.id, 'two.txt', 1);
    const f = await addFile(services, alice, 0, 'f.txt', 1);
    const before = await snapshot(services.db, alice);
    const error = await rejected(callCopy(services, alice, String(a.id), String(f.id), 0));
    expect(error.code).toBe(ResultCode.TooLarge);
    expect(error.message).toMatch(/at most 3/);
    expect(await snapshot(services.db, alice)).toEqual(before);
    await callCopy(services, alice, String(a.id), '', 0);
    expect((await snapshot(services.db, alice)).files).toHaveLength(5);
  });

  test('the statements run do not grow with the items copied (set-based: no query per item)', async () => {
    const { services, alice } = await aliceAndBob();
    const statementsFor = async (name: string, files: number) => {
      const folder = await addFolder(services, alice, 0, name);
      const inner = await addFolder(services, alice, folder.id, 'inner');
      for (let i = 0; i < files; i++) await addFile(services, alice, i % 2 ? folder.id : inner.id, `f${i}.txt`, 1);
      const counted = countingStatements(services.db);
      await copy(as({ ...services, db: counted.db }, alice), { ...signed, dirids: String(folder.id), fids: '', todir: 0n });
      return counted.count();
    };
    expect(await statementsFor('small', 2)).toBe(await statementsFor('large', 40)); // both within one INSERT batch
  });

  test('a folder selected together with a folder inside it: both are copied, each whole', async () => {
    const { services, alice } = await aliceAndBob();
    const target = await addFolder(services, alice, 0, 'target');
    const a = await addFolder(services, alice, 0, 'a');
    const b = await addFolder(services, alice, a.id, 'b');
    await addFile(services, alice, b.id, 'f.txt', 2);
    await callCopy(services, alice, `${a.id},${b.id}`, '', target.id);
    const { folders, files, usedBytes } = await snapshot(services.db, alice);
    expect(folders.filter((row) => row.parent_id === target.id).map((row) => row.name).sort()).toEqual(['a', 'b']);
    expect(files).toHaveLength(3);
    expect(Number(usedBytes)).toBe(6);
    expect(await folderSizes(services.db, [target.id])).toEqual([4]);
  });
});
