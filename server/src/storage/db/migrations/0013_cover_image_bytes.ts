/**
 * Cover images count against their owner's quota (docs/sharing.md §4): `shares.image_bytes` is the
 * size of the stored (re-encoded) cover, added to the account's `used_bytes` when the cover is
 * stored and taken off again whenever the cover goes (replaced, Unshare, the item deleted for good).
 *
 * Covers stored before this migration keep their bytes as they are and count 0: their size was
 * never checked against anything, and charging it now could put an account over its quota with no
 * upload of its own. Replacing such a cover counts the new one.
 */
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
