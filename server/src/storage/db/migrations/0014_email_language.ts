/** A share e-mail is written in the sharer's language, fixed at queue time (docs/protocol.md §16). */
import type { Kysely } from 'kysely';
import { migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    await db.schema.alterTable('emails').addColumn('language', 'text', (col) => col.notNull().defaultTo('en')).execute();
  });
}
