/**
 * Changes whose size grows with what an account holds (a subtree of 100,000 rows to the bin, back,
 * or away for good), made in slices: the rows are read a chunk at a time, then changed by id in
 * batches of statements, and the event loop is given back between chunks and batches once a slice
 * is used up (time-slices.ts). A batch is sized so that its statement takes about
 * STATEMENT_TARGET_MS, measured as it goes: deleting a file costs far more than moving it (the
 * search indexes follow every row), so a fixed count would be either many round trips or one long
 * step. On SQLite, where statements run on the event loop, no single step then holds it long; on
 * PostgreSQL the batches are as many round trips. The work stays in the caller's transaction: all
 * or nothing as before.
 */
import type { Kysely, RawBuilder } from 'kysely';
import { TimeSlices } from '../../../time-slices';
import type { Database } from '../schema';
import { walCaughtUp } from './sqlite-driver';

/** Rows one read returns, and the most one statement changes. */
export const ROWS_PER_STATEMENT = 1_000;

/** What one statement of a batched change should take. */
const STATEMENT_TARGET_MS = 5;
/** The first batch's rows, before anything is measured. */
const FIRST_BATCH_ROWS = 100;

/** The rows `query` selects, read ROWS_PER_STATEMENT at a time, with pauses when a slice is used up. */
export async function selectInChunks<R>(db: Kysely<Database>, query: RawBuilder<R>, slices: TimeSlices): Promise<R[]> {
  const rows: R[] = [];
  for await (const chunk of db.getExecutor().stream<R>(query.compile(db), ROWS_PER_STATEMENT)) {
    for (const row of chunk.rows) rows.push(row);
    await slices.pauseIfDue();
  }
  return rows;
}

/**
 * How many rows the next piece of some work should take so that it lasts about `targetMs`, from
 * how long the last piece took per row: at most twice or half the last count (one slow statement,
 * SQLite writing out its page cache midway, must not shrink the pieces to a row each), between 1
 * and `most`.
 */
export class RowsForTime {
  #rows: number;

  constructor(
    private readonly targetMs: number,
    private readonly most: number,
    first: number,
  ) {
    this.#rows = Math.max(1, Math.min(first, most));
  }

  get rows(): number {
    return this.#rows;
  }

  /** A piece of `rows` rows took `ms`. */
  took(rows: number, ms: number): void {
    if (rows <= 0) return;
    const wanted = Math.round(this.targetMs / (Math.max(ms, 0.01) / rows));
    this.#rows = Math.max(1, Math.ceil(this.#rows / 2), Math.min(this.most, this.#rows * 2, wanted));
  }
}

/**
 * Runs `change` on `items` a batch at a time, each batch sized from the time the last one took
 * (STATEMENT_TARGET_MS, at most ROWS_PER_STATEMENT rows), with pauses when a slice is used up.
 */
export async function inBatches<T>(items: readonly T[], slices: TimeSlices, change: (batch: readonly T[]) => Promise<unknown>): Promise<void> {
  const sizes = new RowsForTime(STATEMENT_TARGET_MS, ROWS_PER_STATEMENT, FIRST_BATCH_ROWS);
  for (let start = 0; start < items.length; ) {
    const batch = items.slice(start, start + sizes.rows);
    const began = performance.now();
    await change(batch);
    sizes.took(batch.length, performance.now() - began);
    start += batch.length;
    await slices.pauseIfDue();
  }
}

/** Pages a long change lets SQLite's WAL hold before it waits for the checkpoints (some 40 MiB). */
const WAL_BACKLOG_PAGES = 10_000;
/** The longest a long change waits for them (a reader that holds an old snapshot stops the copy). */
const WAL_BACKLOG_WAIT_MS = 5_000;

/**
 * Before the next transaction of a change made of many (RecycleEmpty's steps): when SQLite's WAL
 * holds more than WAL_BACKLOG_PAGES, waits (without holding the event loop) until the checkpoints
 * have copied all of it back, so that the WAL starts over instead of growing by every transaction
 * (wal-checkpoints.ts caughtUp). Nothing to wait for on PostgreSQL.
 */
export async function whenWalCaughtUp(db: Kysely<Database>): Promise<void> {
  await walCaughtUp(db, WAL_BACKLOG_PAGES, WAL_BACKLOG_WAIT_MS);
}

export { TimeSlices };
