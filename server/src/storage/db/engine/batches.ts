/**
 * Changes that grow with an account (100,000 rows to the bin), made in batches sized to take about
 * STATEMENT_TARGET_MS each, with the event loop given back between them; still one transaction.
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

/** Rows for the next piece to last about `targetMs`: at most twice or half the last count (one slow statement must not shrink it to a row). */
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

/** Runs `change` on `items` a batch at a time, sized from the last batch's time, pausing when a slice is used up. */
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

/** Before the next transaction of a long change: waits for the checkpoints when SQLite's WAL is over WAL_BACKLOG_PAGES, so it does not grow. */
export async function whenWalCaughtUp(db: Kysely<Database>): Promise<void> {
  await walCaughtUp(db, WAL_BACKLOG_PAGES, WAL_BACKLOG_WAIT_MS);
}

export { TimeSlices };
