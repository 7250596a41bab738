/**
 * On SQLite, a stream that the database must sort before its first row (a listing in an order no
 * index serves) is read in a worker thread (storage/db/engine/sorting-worker.ts, routed by
 * sqlite-driver.ts): the sort does not hold the event loop, and the rows are the same. The engine's
 * own behaviour, so SQLite only.
 */
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/db/schema';
import { openTestServices } from '../helpers/database';
import { testAccount, type TestAccount } from '../helpers/listing-fixtures';

/** The live files of an account's folder, as a listing selects them. */
function filesIn(db: Kysely<Database>, account: TestAccount, folder: number) {
  return db
    .selectFrom('files')
    .select('name')
    .where('account_id', '=', account.id)
    .where('folder_id', '=', folder)
    .where('deleted_at', 'is', null)
    .where('binned_under', 'is', null);
}

/** Their names by size (no index serves it: SQLite sorts), `rows` per chunk. */
function bySize(db: Kysely<Database>, account: TestAccount, folder: number, rows: number) {
  const query = filesIn(db, account, folder).orderBy('size').orderBy('sort_key').orderBy('id').compile();
  return db.getExecutor().stream<{ name: string }>(query, rows)[Symbol.asyncIterator]();
}

/** By name: the listing index serves that order, so the reader streams it as it reads. */
function byName(db: Kysely<Database>, account: TestAccount, folder: number, rows: number) {
  const query = filesIn(db, account, folder).orderBy('sort_key').orderBy('id').compile();
  return db.getExecutor().stream<{ name: string }>(query, rows)[Symbol.asyncIterator]();
}

/** How many turns of the event loop pass while `work` runs. */
async function turnsDuring<T>(work: Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let running = true;
  const count = () => {
    if (!running) return;
    turns++;
    setImmediate(count);
  };
  setImmediate(count);
  const value = await work;
  running = false;
  return { value, turns };
}

describe.runIf((process.env.FSS_TEST_DATABASE ?? 'sqlite') === 'sqlite')('streams that sort, on SQLite', () => {
  it('are read outside the event loop: it turns while the first chunk is sorted; a stream in index order is read in the loop', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    await alice.files(['b.txt', 'a.txt', 'c.txt'], { parent: folder });

    const sorted = await turnsDuring(bySize(services.db, alice, folder, 10).next());
    const inOrder = await turnsDuring(byName(services.db, alice, folder, 10).next());

    expect(sorted.value.value?.rows).toEqual([{ name: 'a.txt' }, { name: 'b.txt' }, { name: 'c.txt' }]);
    expect(sorted.turns).toBeGreaterThan(0);
    expect(inOrder.value.value?.rows).toEqual([{ name: 'a.txt' }, { name: 'b.txt' }, { name: 'c.txt' }]);
    expect(inOrder.turns).toBe(0);
  });

  it('hand out every row, a chunk at a time, in order', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    const names = Array.from({ length: 250 }, (_, i) => `f${String(249 - i).padStart(3, '0')}.txt`);
    await alice.files(names, { parent: folder });

    const chunks: string[][] = [];
    const cursor = bySize(services.db, alice, folder, 100);
    for (let next = await cursor.next(); !next.done; next = await cursor.next()) chunks.push(next.value.rows.map((row) => row.name));

    expect(chunks.map((chunk) => chunk.length)).toEqual([100, 100, 50]);
    expect(chunks.flat()).toEqual([...names].sort());
  });

  it('each sees what was committed before it began, also while another is still open', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    await alice.files(['a.txt', 'b.txt'], { parent: folder });

    const first = bySize(services.db, alice, folder, 1);
    expect((await first.next()).value?.rows).toEqual([{ name: 'a.txt' }]);
    await alice.files(['c.txt'], { parent: folder });
    const second = bySize(services.db, alice, folder, 10);
    const seen = (await second.next()).value?.rows;
    await first.return?.();

    expect(seen).toEqual([{ name: 'a.txt' }, { name: 'b.txt' }, { name: 'c.txt' }]);
  });

  it('a stream read to its end and the next one, on the connection kept for it, sees what was committed in between', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    await alice.files(['a.txt'], { parent: folder });

    const first = bySize(services.db, alice, folder, 10);
    const before = (await first.next()).value?.rows;
    expect((await first.next()).done).toBe(true);
    await alice.files(['b.txt'], { parent: folder });
    const after = (await bySize(services.db, alice, folder, 10).next()).value?.rows;

    expect(before).toEqual([{ name: 'a.txt' }]);
    expect(after).toEqual([{ name: 'a.txt' }, { name: 'b.txt' }]);
  });

  it('a stream closed early lets the next ones run', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const folder = await alice.folder('Docs');
    await alice.files(['a.txt', 'b.txt', 'c.txt'], { parent: folder });

    for (let i = 0; i < 20; i++) {
      const cursor = bySize(services.db, alice, folder, 1);
      await cursor.next();
      await cursor.return?.();
    }
    const last = bySize(services.db, alice, folder, 10);

    expect((await last.next()).value?.rows).toEqual([{ name: 'a.txt' }, { name: 'b.txt' }, { name: 'c.txt' }]);
  });
});
