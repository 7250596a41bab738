/**
 * Batched changes (storage/db/engine/batches.ts): the rows of a query read a chunk at a time, and a
 * change run over a list in statements of a few milliseconds each, with the event loop given back
 * in between. On SQLite and PostgreSQL.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { inBatches, ROWS_PER_STATEMENT, selectInChunks, TimeSlices } from '../../src/storage/db/engine/batches';
import { openTestServices } from '../helpers/database';
import { testAccount } from '../helpers/listing-fixtures';

describe('selectInChunks', () => {
  it('reads every row of a query bigger than a chunk, in order', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const names = Array.from({ length: 2_345 }, (_, i) => `f${String(i).padStart(4, '0')}`);
    const ids = await alice.files(names);
    const rows = await selectInChunks(services.db, sql<{ id: number }>`select id from files where account_id = ${alice.id} order by id`, new TimeSlices());
    expect(rows.map((row) => Number(row.id))).toEqual([...ids].sort((a, b) => a - b));
  });
});

describe('inBatches', () => {
  it('hands every item over once, in order, in batches of at most ROWS_PER_STATEMENT', async () => {
    const items = Array.from({ length: 5_000 }, (_, i) => i);
    const batches: number[][] = [];
    await inBatches(items, new TimeSlices(), async (batch) => batches.push([...batch]));
    expect(batches.flat()).toEqual(items);
    expect(batches.every((batch) => batch.length >= 1 && batch.length <= ROWS_PER_STATEMENT)).toBe(true);
  });

  it('makes the batches smaller when each item costs more, and gives the event loop back between them', async () => {
    const items = Array.from({ length: 300 }, (_, i) => i);
    const sizes: number[] = [];
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    try {
      await inBatches(items, new TimeSlices(), async (batch) => {
        sizes.push(batch.length);
        // 0.2 ms of work per item, on the event loop, as a statement of SQLite is.
        const until = performance.now() + 0.2 * batch.length;
        while (performance.now() < until);
      });
    } finally {
      clearInterval(timer);
    }
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(300);
    expect(Math.max(...sizes.slice(2))).toBeLessThan(sizes[0]);
    expect(turns).toBeGreaterThan(0);
  });
});
