/**
 * The upload lock shared by every instance (docs/design.md §11, "Running several instances";
 * operations/content/upload-locks.ts): tus serializes the requests on one upload (a PATCH writing, a
 * HEAD reading the offset, a DELETE) with a lock per upload, which @tus/server keeps in one
 * process's memory by default. With several instances behind a load balancer, two requests on one
 * upload may reach two instances, so the lock is a row here.
 *
 * `upload_locks`: one row per lock held, deleted when it is let go. `name` is the upload id (or
 * `<id>/completion` for the completion of an upload). `holder` is one acquisition (random), and
 * `instance` the process holding it (`host:pid:random`), whose single periodic statement extends
 * the `expires_at` of every lock it holds. A lock whose lease has run out (its instance died or lost
 * the database) may be taken over by the next request. `release_requested` is how a request on
 * another instance asks the holder to let go: tus ends the older request, as a client resuming on
 * a new connection expects.
 *
 * No foreign key: tus locks an upload id before its row exists (creation), and a lock outlives
 * nothing: rows are few (the locks held at this moment) and short-lived. Expired rows that nobody
 * took over are deleted by housekeeping.
 */
import { sql, type Kysely } from 'kysely';
import { migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    await db.schema
      .createTable('upload_locks')
      .addColumn('name', 'text', (col) => col.primaryKey())
      .addColumn('holder', 'text', (col) => col.notNull())
      .addColumn('instance', 'text', (col) => col.notNull())
      .addColumn('acquired_at', 'bigint', (col) => col.notNull())
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .addColumn('release_requested', 'smallint', (col) => col.notNull().defaultTo(0))
      .addCheckConstraint('upload_locks_release_requested_flag', sql`release_requested in (0, 1)`)
      .execute();
    // The holder's periodic renewal and its look for release requests: the locks of one instance.
    await db.schema.createIndex('upload_locks_instance').on('upload_locks').column('instance').execute();
  });
}
