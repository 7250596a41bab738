/**
 * Reads outside a transaction are answered while another call's transaction is open, and read what
 * is committed (docs/design.md §9): on PostgreSQL from the pool, on SQLite
 * from the driver's read-only connection beside the writer (storage/db/engine/sqlite-driver.ts). Before
 * that, on SQLite, one account's long change (emptying a bin of 100,000 items) kept every other
 * account's reads waiting. Where a test awaits a read while a transaction is held open, a read that
 * waited for the transaction would never come: the test then fails by its timeout.
 *
 * Also what the routing must keep: statements that write outside a transaction are applied, a
 * transaction reads its own changes, and a transaction that fails gives the writer back.
 */
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { getFiles } from '../../src/operations/tree/listings';
import type { Database } from '../../src/storage/db/schema';
import { openTestServices } from '../helpers/database';
import { testEngine } from '../helpers/postgres';
import { readListing, testAccount, type TestAccount } from '../helpers/listing-fixtures';

function list(account: TestAccount, folder: number, order = 'name') {
  return readListing(getFiles(account.ctx, { uid: BigInt(account.id), token: 'test-token', sign: 'checked', dir: String(folder), order, desc: '0' }));
}

/**
 * A transaction on `db` that runs `change`, then stays open until `release` is called, then
 * commits (or rolls back, when `change` asked for it by throwing later: see `fail`).
 */
function heldTransaction(db: Kysely<Database>, change: (tx: Kysely<Database>) => Promise<unknown>, options: { fail?: boolean } = {}) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const done = db.transaction().execute(async (tx) => {
    await change(tx);
    opened();
    await released;
    if (options.fail) throw new Error('rolled back on purpose');
  });
  return { open, release, done };
}

/** Names of the account's live files in a folder, read outside any transaction. */
async function fileNames(db: Kysely<Database>, accountId: number, folder: number): Promise<string[]> {
  const rows = await db
    .selectFrom('files')
    .select('name')
    .where('account_id', '=', accountId)
    .where('folder_id', '=', folder)
    .where('deleted_at', 'is', null)
    .orderBy('name')
    .execute();
  return rows.map((row) => row.name);
}

describe('reads beside an open transaction', () => {
  it("another account's listing is answered while one account's transaction is open", async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const bob = await testAccount(services, 'bob');
    const alicesFolder = await alice.folder('Big');
    await alice.files(['a.txt', 'b.txt', 'c.txt'], { parent: alicesFolder });
    const bobsFolder = await bob.folder('Docs');
    await bob.files(['report.pdf', 'notes.txt'], { parent: bobsFolder });

    const change = heldTransaction(services.db, (tx) => tx.deleteFrom('files').where('account_id', '=', alice.id).execute());
    await change.open;
    // Both streamed while alice's transaction is open: bob's folder, and alice's as committed.
    const bobs = await list(bob, bobsFolder);
    const alices = await list(alice, alicesFolder, 'size');
    change.release();
    await change.done;

    expect(bobs.names).toEqual(['notes.txt', 'report.pdf']);
    expect(alices.names).toEqual(['a.txt', 'b.txt', 'c.txt']);
    expect((await list(alice, alicesFolder)).names).toEqual([]);
  });

  it('a read outside the transaction sees the state before it; after the commit, the state after it', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    await alice.files(['old.txt'], { parent: folder });

    const change = heldTransaction(services.db, (tx) => tx.updateTable('files').set({ name: 'new.txt' }).where('account_id', '=', alice.id).execute());
    await change.open;
    const during = await fileNames(services.db, alice.id, folder);
    change.release();
    await change.done;

    expect(during).toEqual(['old.txt']);
    expect(await fileNames(services.db, alice.id, folder)).toEqual(['new.txt']);
  });

  it('a transaction reads its own uncommitted changes', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    await alice.files(['old.txt'], { parent: folder });

    const inside = await services.db.transaction().execute(async (tx) => {
      await tx.updateTable('files').set({ name: 'new.txt' }).where('account_id', '=', alice.id).execute();
      return fileNames(tx, alice.id, folder);
    });

    expect(inside).toEqual(['new.txt']);
  });

  it('a read is answered while a listing holds its cursor open', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Big');
    await alice.files(['a.txt', 'b.txt', 'c.txt'], { parent: folder });

    const query = services.db.selectFrom('files').select('name').where('folder_id', '=', folder).orderBy('size').orderBy('name').compile();
    const cursor = services.db.getExecutor().stream<{ name: string }>(query, 1)[Symbol.asyncIterator]();
    const first = await cursor.next();
    const meanwhile = await fileNames(services.db, alice.id, folder);
    await cursor.return?.();

    expect(first.value?.rows).toEqual([{ name: 'a.txt' }]);
    expect(meanwhile).toEqual(['a.txt', 'b.txt', 'c.txt']);
  });

  it('a transaction that fails is rolled back and the next one runs', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    await alice.files(['old.txt'], { parent: folder });

    const failing = heldTransaction(services.db, (tx) => tx.updateTable('files').set({ name: 'lost.txt' }).where('account_id', '=', alice.id).execute(), {
      fail: true,
    });
    await failing.open;
    failing.release();
    await expect(failing.done).rejects.toThrow('rolled back on purpose');
    await services.db.transaction().execute((tx) => tx.updateTable('files').set({ name: 'kept.txt' }).where('account_id', '=', alice.id).execute());

    expect(await fileNames(services.db, alice.id, folder)).toEqual(['kept.txt']);
  });
});

describe('statements outside a transaction', () => {
  it('a write that begins as a query does (with … update) is applied, and read back at once', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    const [file] = await alice.files(['old.txt'], { parent: folder });

    await sql`with renamed(id, name) as (values (cast(${file} as bigint), cast('new.txt' as text)))
      update files set name = renamed.name from renamed where files.id = renamed.id`.execute(services.db);

    expect(await fileNames(services.db, alice.id, folder)).toEqual(['new.txt']);
  });

  it('an insert that returns rows returns them, and its row is read back at once', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');

    const row = await services.db
      .insertInto('folders')
      .values({ account_id: alice.id, parent_id: 0, name: 'New', name_key: 'new', sort_key: 'new', size: 0, created_at: 0, updated_at: 0, shared: 0, linked: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();

    const read = await services.db.selectFrom('folders').select('name').where('id', '=', row.id).executeTakeFirst();
    expect(read).toEqual({ name: 'New' });
  });

  it.runIf(testEngine() === 'sqlite')('a pragma runs on the connection that writes (pragma optimize writes statistics)', async () => {
    const services = await openTestServices();
    // A setting of each connection: the writer leaves checkpoints to a worker (0, wal-checkpoints.ts),
    // a reader has SQLite's default (1,000 pages).
    const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(services.db);
    expect(rows).toEqual([{ wal_autocheckpoint: 0 }]);
  });
});
