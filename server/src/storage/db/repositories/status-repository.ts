/** What /readyz and /metrics read from the database: whether it answers and is migrated, and the depth of its queues. */
import { sql, type Kysely } from 'kysely';
import { migrations } from '../migrations';
import type { Database } from '../schema';

/** One trivial query that also tells whether every migration this build knows is applied (a newer instance may add more). */
export async function databaseMigrated(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  const applied = new Set(rows.map((row) => row.name));
  return Object.keys(migrations).every((name) => applied.has(name));
}

export interface QueueDepth {
  readonly waiting: number;
  /** created_at of the oldest waiting entry (ms since the epoch); null when none waits. */
  readonly oldestAt: number | null;
}

export interface QueueDepths {
  readonly emails: QueueDepth;
  readonly encryptionJobs: QueueDepth;
  /** Uploads begun and neither completed nor expired: shared by every instance on this database. */
  readonly unfinishedUploads: number;
}

export async function queueDepths(db: Kysely<Database>, now: Date): Promise<QueueDepths> {
  const depth = (row: { waiting: unknown; oldest: unknown } | undefined): QueueDepth => ({
    waiting: Number(row?.waiting ?? 0),
    oldestAt: row?.oldest == null ? null : Number(row.oldest),
  });
  const [emails, jobs, uploads] = await Promise.all([
    db
      .selectFrom('emails')
      .select((eb) => [eb.fn.countAll().as('waiting'), eb.fn.min('created_at').as('oldest')])
      .where('status', '=', 'queued')
      .executeTakeFirst(),
    db
      .selectFrom('encryption_jobs')
      .select((eb) => [eb.fn.countAll().as('waiting'), eb.fn.min('created_at').as('oldest')])
      .where('finished_at', 'is', null)
      .executeTakeFirst(),
    db
      .selectFrom('uploads')
      .select((eb) => eb.fn.countAll().as('unfinished'))
      .where('completed_at', 'is', null)
      .where('expires_at', '>', now.getTime())
      .executeTakeFirst(),
  ]);
  return { emails: depth(emails), encryptionJobs: depth(jobs), unfinishedUploads: Number(uploads?.unfinished ?? 0) };
}
