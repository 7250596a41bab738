/**
 * tus' per-upload lock as a row, so requests on one upload reaching two instances are serialized (docs/design.md §11).
 * No foreign key: tus locks an upload id before its row exists.
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
