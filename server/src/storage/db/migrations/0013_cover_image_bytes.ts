/** Cover images count against the quota (docs/sharing.md §4); covers stored before count 0 until replaced. */
import type { Kysely } from 'kysely';
import { migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    await db.schema
      .alterTable('shares')
      .addColumn('image_bytes', 'bigint', (col) => col.notNull().defaultTo(0))
      .execute();
  });
}
