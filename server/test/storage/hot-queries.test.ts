/**
 * The compiled hot queries (storage/db/engine/hot-queries.ts, prepared-query.ts) read what Kysely would
 * read: on SQLite they run at once on a connection that is free (sqlite-driver.ts immediateRows),
 * the read-only one beside an open transaction, so they never see its uncommitted rows. On SQLite
 * and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { accountVersion, isLiveFolderOf } from '../../src/storage/db/engine/hot-queries';
import { openTestServices } from '../helpers/database';
import { testAccount } from '../helpers/listing-fixtures';

describe('hot queries', () => {
  it('a read beside an open transaction sees the state before it, and after its rollback', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const transaction = services.db
      .transaction()
      .execute(async (tx) => {
        await tx.updateTable('folders').set({ deleted_at: Date.now() }).where('id', '=', folder).execute();
        inside();
        await held;
        throw new Error('rolled back');
      })
      .catch(() => 'rolled back');
    await entered;
    const read = isLiveFolderOf(services.db, alice.id, folder);
    release();
    expect(await read).toBe(true);
    expect(await transaction).toBe('rolled back');
    expect(await isLiveFolderOf(services.db, alice.id, folder)).toBe(true);
  });

  it('a committed change is read at once by the next read', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    expect(await isLiveFolderOf(services.db, alice.id, folder)).toBe(true);
    const before = await accountVersion(services.db, alice.id);
    await services.db.updateTable('folders').set({ deleted_at: Date.now() }).where('id', '=', folder).execute();
    expect(await isLiveFolderOf(services.db, alice.id, folder)).toBe(false);
    expect(await accountVersion(services.db, alice.id)).toBeGreaterThan(before);
  });
});
