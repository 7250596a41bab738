/**
 * The streamed listings of listings-repository.ts read a batch of rows at a time (context.ts
 * BatchedItemSource): a batch holds up to a chunk of the cursor, the batches together are the
 * listing in order, and a reader that pauses between batches lets go of the cursor and resumes
 * after the last row handed out, whatever changed meanwhile. On SQLite and PostgreSQL.
 */
import { sql } from 'kysely';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { FileItem } from '../../src/operations/context';
import type { SortKey } from '../../src/catalog/results';
import { CURSOR_IDLE_MS, streamChildFiles, type ListingOrder } from '../../src/storage/db/repositories/listings-repository';
import { openTestServices } from '../helpers/database';
import { testEngine } from '../helpers/postgres';
import { testAccount, type TestAccount } from '../helpers/listing-fixtures';

/** More than one chunk of the cursor (STREAM_CHUNK_ROWS, 1,000), so that a listing has several batches. */
const FILES = 2_500;

async function setup(): Promise<TestAccount> {
  const services = await openTestServices();
  return testAccount(services, 'alice');
}

/** FILES files named f0000…, with sizes and times that repeat, so that every order has ties. */
async function fillRoot(alice: TestAccount): Promise<void> {
  const names = Array.from({ length: FILES }, (_, i) => `f${String(i).padStart(4, '0')}.txt`);
  await alice.files(names);
  // Sizes and times in a few values each: the key ties, then sort_key and id decide.
  for (const [modulo, size] of [[0, 7], [1, 3], [2, 7]] as const) {
    await alice.db
      .updateTable('files')
      .set({ size, updated_at: Date.UTC(2026, 0, 1 + modulo) })
      .where('account_id', '=', alice.id)
      .where(sql<boolean>`id % 3 = ${modulo}`)
      .execute();
  }
}

const names = (items: readonly FileItem[]) => items.map((item) => item.name);

async function readAll(alice: TestAccount, order: ListingOrder): Promise<string[]> {
  const all: FileItem[] = [];
  for await (const item of streamChildFiles(alice.db, alice.id, 0, order)) all.push(item);
  return names(all);
}

/** Lets the idle cursor be closed (fake timers), as a client that stops reading for a while. */
async function pause(): Promise<void> {
  await vi.advanceTimersByTimeAsync(3 * CURSOR_IDLE_MS);
}

function fakeTimers(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  onTestFinished(() => {
    vi.useRealTimers();
  });
}

describe('a streamed listing read by batches', () => {
  it('hands out batches of at most a chunk of rows, which together are the listing in order', async () => {
    const alice = await setup();
    await fillRoot(alice);
    const order: ListingOrder = { key: 'name', descending: false };
    const batches: FileItem[][] = [];
    for await (const batch of streamChildFiles(alice.db, alice.id, 0, order).batches()) batches.push([...batch]);
    expect(batches.length).toBeGreaterThan(1);
    expect(batches.every((batch) => batch.length > 0 && batch.length <= 1_000)).toBe(true);
    expect(names(batches.flat())).toEqual(await readAll(alice, order));
    expect(batches.flat()).toHaveLength(FILES);
  });

  it.each<[SortKey, boolean]>([
    ['name', false],
    ['name', true],
    ['time', true],
    ['size', false],
  ])('resumes after a pause between batches at the row after the last one handed out (order=%s descending=%s)', async (key, descending) => {
    const alice = await setup();
    await fillRoot(alice);
    const order: ListingOrder = { key, descending };
    const expected = await readAll(alice, order);
    fakeTimers();

    const batches = streamChildFiles(alice.db, alice.id, 0, order).batches()[Symbol.asyncIterator]();
    const read: FileItem[] = [];
    for (let next = await batches.next(); !next.done; next = await batches.next()) {
      read.push(...next.value);
      await pause();
      // Were the paused cursor still open, this query would wait for SQLite's one connection forever.
      expect(await alice.db.selectFrom('files').select('id').where('account_id', '=', alice.id).limit(1).execute()).toHaveLength(1);
    }
    expect(names(read)).toEqual(expected);
  });

  it('after a pause, lists what changed beyond the last row handed out, and nothing again before it', async () => {
    const alice = await setup();
    await fillRoot(alice);
    const order: ListingOrder = { key: 'name', descending: false };
    fakeTimers();

    const batches = streamChildFiles(alice.db, alice.id, 0, order).batches()[Symbol.asyncIterator]();
    const first = await batches.next();
    const handedOut = first.done ? [] : names(first.value);
    const last = handedOut.at(-1)!;
    expect(last).toBe('f0999.txt');
    await pause();
    // While the reader pauses: a file before the resume point and one after it are added, one after
    // it is removed, and the last file handed out is renamed to the end of the order.
    await alice.files(['a-early.txt', 'f1500b.txt']);
    await alice.db.deleteFrom('files').where('account_id', '=', alice.id).where('name', '=', 'f2000.txt').execute();
    await alice.db
      .updateTable('files')
      .set({ name: 'zz.txt', name_key: 'zz.txt', sort_key: 'zz.txt' })
      .where('account_id', '=', alice.id)
      .where('name', '=', last)
      .execute();

    const rest: string[] = [];
    for (let next = await batches.next(); !next.done; next = await batches.next()) rest.push(...names(next.value));
    expect(rest[0]).toBe('f1000.txt');
    expect(rest).toContain('f1500b.txt');
    expect(rest).not.toContain('f2000.txt');
    expect(rest).not.toContain('a-early.txt');
    // The renamed file now sorts after the resume point: it is met again, under its new name.
    expect(rest.at(-1)).toBe('zz.txt');
    expect(rest.filter((name) => handedOut.includes(name))).toEqual([]);
  });

  it('a reader that keeps reading lets a query that waits in between two batches, and goes on where it was', async () => {
    const alice = await setup();
    await fillRoot(alice);
    const order: ListingOrder = { key: 'name', descending: false };
    const expected = await readAll(alice, order);
    const batches = streamChildFiles(alice.db, alice.id, 0, order).batches()[Symbol.asyncIterator]();
    const read: FileItem[] = [];
    const first = await batches.next();
    if (!first.done) read.push(...first.value);
    // Asked while the cursor is open: on SQLite it waits for the one connection, which the listing
    // gives up as it reads on (no pause of the reader needed); on PostgreSQL it has a connection of its own.
    let answeredAfter: number | undefined;
    const waiting = alice.db
      .selectFrom('files')
      .select('id')
      .where('account_id', '=', alice.id)
      .limit(1)
      .execute()
      .then(() => (answeredAfter = read.length));
    for (let next = await batches.next(); !next.done; next = await batches.next()) read.push(...next.value);
    await waiting;
    // On PostgreSQL the two race on their own connections: no order to hold them to.
    if (testEngine() === 'sqlite') expect(answeredAfter).toBeLessThan(FILES);
    expect(names(read)).toEqual(expected);
  });

  it('item by item, a batched listing reads the same items (what the listing cache collects)', async () => {
    const alice = await setup();
    await alice.files(['b.txt', 'a.txt', 'c.txt']);
    expect(await readAll(alice, { key: 'name', descending: true })).toEqual(['c.txt', 'b.txt', 'a.txt']);
  });

  it('a listing whose reader stops after its first batch releases the cursor', async () => {
    const alice = await setup();
    await fillRoot(alice);
    for await (const batch of streamChildFiles(alice.db, alice.id, 0, { key: 'name', descending: false }).batches()) {
      expect(batch.length).toBeGreaterThan(0);
      break;
    }
    expect(await readAll(alice, { key: 'size', descending: true })).toHaveLength(FILES);
  });
});
