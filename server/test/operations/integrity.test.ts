/**
 * The integrity check (`fss fsck`): a tree built by the operations passes it in every state; each
 * kind of damage is found, and what can be repaired is.
 */
import { describe, expect, test } from 'vitest';
import type { Services } from '../../src/operations/context';
import { addFileRecord } from '../../src/operations/tree/file-records';
import { checkIntegrity, problemCount } from '../../src/operations/admin/integrity';
import { deleteForGood, moveToBin, restoreItems } from '../../src/operations/tree/recycle-bin';
import { contentStoreFor } from '../../src/storage/content/stores';
import { openTestServices } from '../helpers/database';
import { storeTestContent } from '../helpers/stored-files';
import { addFolder, testAccount } from '../helpers/tree';

/** A file whose bytes are really in the store, added as FileAdd adds it. */
async function addStoredFile(services: Services, accountId: number, folderId: number, name: string, bytes: string) {
  const content = await storeTestContent(services, `${bytes} ${name}`);
  return services.db.transaction().execute((tx) =>
    addFileRecord(tx, services, accountId, {
      name,
      ext: name.split('.').pop() ?? '',
      size: content.size,
      folderId,
      sha256: content.sha256,
      claimContent: async () => ({ contentId: content.contentId, keyId: null }),
    }),
  );
}

/** Two accounts, nested folders, files at several depths. */
async function buildTree(services: Services) {
  const alice = await testAccount(services, 'alice');
  const top = await addFolder(services, alice, 0, 'Top');
  const middle = await addFolder(services, alice, top.id, 'Middle');
  const bottom = await addFolder(services, alice, middle.id, 'Bottom');
  const files = [
    await addStoredFile(services, alice, 0, 'root.txt', 'r'),
    await addStoredFile(services, alice, top.id, 'top.txt', 'tt'),
    await addStoredFile(services, alice, middle.id, 'middle.txt', 'mmm'),
    await addStoredFile(services, alice, bottom.id, 'bottom.txt', 'bbbb'),
  ];
  const bob = await testAccount(services, 'bob');
  await addStoredFile(services, bob, 0, 'bob.txt', 'bob');
  return { alice, top, middle, bottom, files };
}

describe('integrity check', () => {
  test('a tree built by the operations has no problems', async () => {
    const services = await openTestServices();
    await buildTree(services);
    expect(problemCount(await checkIntegrity(services))).toBe(0);
  });

  test('a tree stays consistent through the recycle bin: delete, restore, delete for good', async () => {
    const services = await openTestServices();
    const { alice, middle, files } = await buildTree(services);
    await moveToBin(services, alice, { folderIds: [middle.id], fileIds: [files[0].id] });
    expect(problemCount(await checkIntegrity(services))).toBe(0);
    await restoreItems(services, alice, { folderIds: [middle.id], fileIds: [] });
    expect(problemCount(await checkIntegrity(services))).toBe(0);
    await deleteForGood(services, alice, { folderIds: [middle.id], fileIds: [files[0].id] });
    expect(problemCount(await checkIntegrity(services))).toBe(0);
  });

  test('a wrong folder size is found and repaired', async () => {
    const services = await openTestServices();
    const { top } = await buildTree(services);
    await services.db.updateTable('folders').set({ size: 1 }).where('id', '=', top.id).execute();
    const found = await checkIntegrity(services, { repair: true });
    expect(found.folderSizes).toEqual([{ id: top.id, stored: 1, expected: expect.any(Number) }]);
    expect(problemCount(await checkIntegrity(services))).toBe(0);
  });

  test("a wrong account's used bytes are found and repaired", async () => {
    const services = await openTestServices();
    const { alice } = await buildTree(services);
    await services.db.updateTable('accounts').set({ used_bytes: 0 }).where('id', '=', alice).execute();
    expect((await checkIntegrity(services, { repair: true })).usedBytes.map((a) => a.id)).toEqual([alice]);
    expect(problemCount(await checkIntegrity(services))).toBe(0);
  });

  test('bytes no row knows are orphans: found, and removed by repair', async () => {
    const services = await openTestServices();
    await buildTree(services);
    const orphan = await storeTestContent(services, 'nobody refers to me');
    await services.db.deleteFrom('content').where('id', '=', orphan.contentId).execute();
    const found = await checkIntegrity(services, { repair: true });
    expect(found.content.orphans).toEqual([orphan.key]);
    expect(await contentStoreFor(services.config).stat(orphan.key)).toBeNull();
    expect(problemCount(await checkIntegrity(services))).toBe(0);
  });

  test('missing bytes of a file are reported, and no repair hides them', async () => {
    const services = await openTestServices();
    await buildTree(services);
    const row = await services.db.selectFrom('content').select(['id', 'storage_key']).orderBy('id').executeTakeFirstOrThrow();
    await contentStoreFor(services.config).delete(row.storage_key);
    const found = await checkIntegrity(services, { repair: true });
    expect(found.content.damaged).toEqual([{ contentId: row.id, storageKey: row.storage_key, problem: 'missing' }]);
    expect(problemCount(await checkIntegrity(services))).toBe(1);
  });

  test('a live item under a parent that is gone is reported', async () => {
    const services = await openTestServices();
    const { middle } = await buildTree(services);
    await services.db.updateTable('folders').set({ parent_id: 999_999 }).where('id', '=', middle.id).execute();
    const found = await checkIntegrity(services);
    expect(found.misplaced).toContainEqual({ type: 'folder', id: middle.id, problem: expect.stringContaining('parent') });
  });
});
