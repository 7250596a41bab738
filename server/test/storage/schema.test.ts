import type { Kysely } from 'kysely';
import { describe, expect, test } from 'vitest';
import { isCheckViolation, isForeignKeyViolation, isUniqueViolation } from '../../src/storage/db/engine/dialect';
import type { Database } from '../../src/storage/db/schema';
import { openTestServices } from '../helpers/database';

async function withAccount() {
  const services = await openTestServices();
  const { db } = services;
  const account = await db
    .insertInto('accounts')
    .values({ name: 'alice', name_key: 'alice', password_hash: 'x', quota_bytes: 100, created_at: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  const content = await db
    .insertInto('content')
    .values({ sha256: 'a'.repeat(64), size: 3, storage_key: 'aa/aaaa', created_at: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { db, accountId: account.id, contentId: content.id };
}

const times = { created_at: 0, updated_at: 0 };

function addFolder(db: Kysely<Database>, accountId: number, name: string, extra: { parent_id?: number; deleted_at?: number; binned_under?: number } = {}) {
  return db
    .insertInto('folders')
    .values({ account_id: accountId, parent_id: 0, name, name_key: name.toLowerCase(), ...times, ...extra })
    .returning('id')
    .executeTakeFirstOrThrow();
}

function addFile(db: Kysely<Database>, accountId: number, contentId: number, name: string, extra: { folder_id?: number; deleted_at?: number } = {}) {
  return db
    .insertInto('files')
    .values({
      account_id: accountId,
      folder_id: 0,
      name,
      name_key: name.toLowerCase(),
      ext: 'txt',
      sha256: 'a'.repeat(64),
      content_id: contentId,
      ...times,
      ...extra,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

describe('schema', () => {
  test('account ids start at 1001', async () => {
    const { accountId } = await withAccount();
    expect(accountId).toBe(1001);
  });

  test('account names are unique by their normalized key', async () => {
    const { db } = await withAccount();
    const error = await failure(
      db.insertInto('accounts').values({ name: 'ALICE', name_key: 'alice', password_hash: 'x', quota_bytes: 1, created_at: 0 }).execute(),
    );
    expect(isUniqueViolation(error)).toBe(true);
  });

  test('two live folders cannot share a name key in one folder', async () => {
    const { db, accountId } = await withAccount();
    await addFolder(db, accountId, 'Docs');
    expect(isUniqueViolation(await failure(addFolder(db, accountId, 'docs')))).toBe(true);
  });

  test('a folder in the bin does not hold its name: deleted directly, or beneath a deleted folder', async () => {
    const { db, accountId } = await withAccount();
    const parent = await addFolder(db, accountId, 'Parent');
    await addFolder(db, accountId, 'Docs', { deleted_at: 1 });
    await addFolder(db, accountId, 'Docs');
    await addFolder(db, accountId, 'Sub', { parent_id: parent.id, binned_under: parent.id });
    await addFolder(db, accountId, 'Sub', { parent_id: parent.id });
  });

  test('the same name is fine in another folder or another account', async () => {
    const { db, accountId } = await withAccount();
    const other = await db
      .insertInto('accounts')
      .values({ name: 'bob', name_key: 'bob', password_hash: 'x', quota_bytes: 1, created_at: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const parent = await addFolder(db, accountId, 'Parent');
    await addFolder(db, accountId, 'Docs');
    await addFolder(db, accountId, 'Docs', { parent_id: parent.id });
    await addFolder(db, other.id, 'Docs');
  });

  test('files follow the same live-name rule', async () => {
    const { db, accountId, contentId } = await withAccount();
    await addFile(db, accountId, contentId, 'Report.txt');
    expect(isUniqueViolation(await failure(addFile(db, accountId, contentId, 'report.TXT')))).toBe(true);
    await db.updateTable('files').set({ deleted_at: 5 }).where('name', '=', 'Report.txt').execute();
    await addFile(db, accountId, contentId, 'report.TXT');
  });

  test('plaintext content is stored once per hash; encrypted content may repeat it', async () => {
    const { db } = await withAccount();
    const duplicate = db.insertInto('content').values({ sha256: 'a'.repeat(64), size: 3, storage_key: 'other', created_at: 0 }).execute();
    expect(isUniqueViolation(await failure(duplicate))).toBe(true);
    for (const key of ['enc1', 'enc2']) {
      await db.insertInto('content').values({ sha256: 'a'.repeat(64), size: 30, storage_key: key, encrypted: 1, created_at: 0 }).execute();
    }
  });

  test('foreign keys hold: a file needs existing content', async () => {
    const { db, accountId } = await withAccount();
    expect(isForeignKeyViolation(await failure(addFile(db, accountId, 9999, 'x.txt')))).toBe(true);
  });

  test('flags accept only 0 and 1', async () => {
    const { db, accountId } = await withAccount();
    const error = await failure(
      db
        .insertInto('folders')
        .values({ account_id: accountId, parent_id: 0, name: 'x', name_key: 'x', shared: 2 as 1, ...times })
        .execute(),
    );
    expect(isCheckViolation(error)).toBe(true);
  });

  test('one share per item, and share codes are unique', async () => {
    const { db, accountId } = await withAccount();
    const share = { account_id: accountId, item_type: 'folder' as const, item_id: 1, ...times };
    await db.insertInto('shares').values({ ...share, code: 'c1' }).execute();
    expect(isUniqueViolation(await failure(db.insertInto('shares').values({ ...share, code: 'c2' }).execute()))).toBe(true);
    expect(isUniqueViolation(await failure(db.insertInto('shares').values({ ...share, item_id: 2, code: 'c1' }).execute()))).toBe(true);
  });

  test('deleting an account deletes what it owns', async () => {
    const { db, accountId, contentId } = await withAccount();
    await addFolder(db, accountId, 'Docs');
    await addFile(db, accountId, contentId, 'a.txt');
    await db.deleteFrom('accounts').where('id', '=', accountId).execute();
    expect(await db.selectFrom('folders').select('id').execute()).toEqual([]);
    expect(await db.selectFrom('files').select('id').execute()).toEqual([]);
  });
});
