/**
 * The invariants that concurrent calls must not break (docs/design.md §8, "PostgreSQL"): names
 * unique in a folder across folders and files, no cycles, nothing live beneath a folder in the bin,
 * the quota, upload reservations and download limits. Each test starts its calls at once. On
 * SQLite they run one writer at a time anyway; on PostgreSQL they run on separate connections of the
 * pool, really at once, and the account's row lock and the conditional updates must hold.
 */
import { describe, expect, test } from 'vitest';
import { OpError, ResultCode } from '../../src/operations/errors';
import { addFileRecord, inTreeTransaction } from '../../src/operations/tree/file-records';
import { folderAdd, move } from '../../src/operations/tree/folders';
import { folderAndFileDelete } from '../../src/operations/tree/recycle-bin';
import { beginUpload } from '../../src/operations/content/uploads';
import { findAccount } from '../../src/storage/db/repositories/accounts-repository';
import { countShareDownload, upsertShares } from '../../src/storage/db/repositories/shares-repository';
import { folderSizeMismatches, misplacedItems, usedBytesMismatches } from '../../src/storage/db/repositories/integrity-repository';
import { openTestServices, type TestServices } from '../helpers/database';
import { addContent, addFolder, as, testAccount } from '../helpers/tree';

const signed = { uid: 0n, token: 'test-token', sign: '' };

/** FileAdd's transaction (the account lock, the quota, a free name) over a new content row. */
async function fileAdd(services: TestServices, accountId: number, folderId: number, name: string, size: number) {
  const content = await addContent(services, size);
  return inTreeTransaction(services.db, (tx) =>
    addFileRecord(tx, services, accountId, {
      name,
      ext: name.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : '',
      size,
      folderId,
      sha256: content.sha256,
      claimContent: async () => ({ contentId: content.id, keyId: null }),
    }),
  );
}

/** The outcomes of calls started together: values, or the OpErrors' codes (anything else fails the test). */
async function together<T>(calls: ReadonlyArray<() => Promise<T>>): Promise<Array<T | number>> {
  const settled = await Promise.allSettled(calls.map((call) => call()));
  return settled.map((outcome) => {
    if (outcome.status === 'fulfilled') return outcome.value;
    if (outcome.reason instanceof OpError) return outcome.reason.code;
    throw outcome.reason;
  });
}

async function consistent(services: TestServices): Promise<void> {
  expect(await misplacedItems(services.db)).toEqual([]);
  expect(await folderSizeMismatches(services.db)).toEqual([]);
  expect(await usedBytesMismatches(services.db)).toEqual([]);
}

async function liveNames(services: TestServices, accountId: number, folderId: number): Promise<string[]> {
  const folders = await services.db
    .selectFrom('folders')
    .select('name')
    .where('account_id', '=', accountId)
    .where('parent_id', '=', folderId)
    .where('deleted_at', 'is', null)
    .where('binned_under', 'is', null)
    .execute();
  const files = await services.db
    .selectFrom('files')
    .select('name')
    .where('account_id', '=', accountId)
    .where('folder_id', '=', folderId)
    .where('deleted_at', 'is', null)
    .where('binned_under', 'is', null)
    .execute();
  return [...folders, ...files].map((row) => row.name).sort();
}

describe('concurrent changes keep the invariants', () => {
  test('ten FileAdds of one name at once get ten different names', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const added = await together(Array.from({ length: 10 }, () => () => fileAdd(services, alice, 0, 'report.txt', 1)));
    expect(added.every((item) => typeof item === 'object')).toBe(true);
    const names = await liveNames(services, alice, 0);
    expect(names).toHaveLength(10);
    expect(new Set(names.map((name) => name.toLowerCase())).size).toBe(10);
    await consistent(services);
  });

  test('a folder and files of one name at once: the folder has the name or is refused with 409, never both', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const ctx = as(services, alice);
    const outcomes = await together<unknown>([
      () => folderAdd(ctx, { ...signed, dirid: 0n, name: 'Data' }),
      () => fileAdd(services, alice, 0, 'data', 1),
      () => folderAdd(ctx, { ...signed, dirid: 0n, name: 'DATA' }),
      () => fileAdd(services, alice, 0, 'Data', 1),
    ]);
    for (const outcome of outcomes) if (typeof outcome === 'number') expect(outcome).toBe(ResultCode.Conflict);
    const keys = (await liveNames(services, alice, 0)).map((name) => name.toLowerCase());
    expect(new Set(keys).size).toBe(keys.length);
    await consistent(services);
  });

  test('A into B and B into A at once: one moves, the other is 409, and there is no cycle', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const a = await addFolder(services, alice, 0, 'A');
    const b = await addFolder(services, alice, 0, 'B');
    const ctx = as(services, alice);
    const outcomes = await together<unknown>([
      () => move(ctx, { ...signed, dirids: String(a.id), fids: '', todir: BigInt(b.id) }),
      () => move(ctx, { ...signed, dirids: String(b.id), fids: '', todir: BigInt(a.id) }),
    ]);
    expect(outcomes.filter((outcome) => outcome === ResultCode.Conflict)).toHaveLength(1);
    expect(await liveNames(services, alice, 0)).toHaveLength(1);
    await consistent(services);
  });

  test('files added into a folder while it goes to the bin: each is added before (and binned with it) or refused', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await addFolder(services, alice, 0, 'Going');
    const ctx = as(services, alice);
    const outcomes = await together<unknown>([
      ...Array.from({ length: 4 }, (_, i) => () => fileAdd(services, alice, folder.id, `early ${i}.txt`, 10)),
      () => folderAndFileDelete(ctx, { ...signed, dirids: String(folder.id), fids: '', is_real: 0 }),
      ...Array.from({ length: 4 }, (_, i) => () => fileAdd(services, alice, folder.id, `late ${i}.txt`, 10)),
    ]);
    for (const outcome of outcomes) if (typeof outcome === 'number') expect(outcome).toBe(ResultCode.NotFound);
    expect(await liveNames(services, alice, 0)).toEqual([]);
    const live = await services.db.selectFrom('files').select('id').where('deleted_at', 'is', null).where('binned_under', 'is', null).execute();
    expect(live).toEqual([]);
    await consistent(services);
  });

  test('FileAdds beyond the quota at once: the used bytes never pass it', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice', 1000);
    const outcomes = await together(Array.from({ length: 12 }, (_, i) => () => fileAdd(services, alice, 0, `f${i}.bin`, 300)));
    expect(outcomes.filter((outcome) => typeof outcome === 'object')).toHaveLength(3);
    expect(outcomes.filter((outcome) => outcome === ResultCode.TooLarge)).toHaveLength(9);
    expect((await findAccount(services.db, { id: alice }))?.usedBytes).toBe(900);
    await consistent(services);
  });

  test('upload reservations beyond the quota at once: they never add up past it', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice', 1000);
    const id = (i: number) => i.toString(16).padStart(32, '0');
    const outcomes = await together(Array.from({ length: 10 }, (_, i) => () => beginUpload(services, alice, id(i + 1), 300)));
    expect(outcomes.filter((outcome) => typeof outcome === 'object')).toHaveLength(3);
    expect(outcomes.filter((outcome) => outcome === ResultCode.TooLarge)).toHaveLength(7);
  });

  test('downloads of a share at once never pass its limit', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await addFolder(services, alice, 0, 'Shared');
    const [share] = await upsertShares(
      services.db,
      alice,
      'folder',
      [{ itemId: folder.id, code: 'c0de', downpwdSealed: null, downloadLimit: 3, description: '' }],
      services.now(),
    );
    const counted = await Promise.all(Array.from({ length: 20 }, () => countShareDownload(services.db, share.id)));
    expect(counted.filter(Boolean)).toHaveLength(3);
  });
});
