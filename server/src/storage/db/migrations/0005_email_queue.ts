/**
 * What `emails` needs to be sent by any instance (base URL and sealed extraction code fixed at queue time, a lease),
 * and `email_sends`, the rate limit's ledger, apart from `emails` so unsharing does not reset the count.
 */
import type { Kysely } from 'kysely';
import { addIdColumn, migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    await db.schema.alterTable('emails').addColumn('base_url', 'text', (col) => col.notNull().defaultTo('')).execute();
    await db.schema.alterTable('emails').addColumn('extraction_code_sealed', 'text').execute();
    await db.schema.alterTable('emails').addColumn('locked_until', 'bigint').execute();
    await db.schema.alterTable('emails').addColumn('locked_by', 'text').execute();

    await addIdColumn(db, db.schema.createTable('email_sends'))
      .addColumn('account_id', 'bigint', (col) => col.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('recipients', 'bigint', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .execute();
    // The rate limit's sums: one account's rows of the last day.
    await db.schema.createIndex('email_sends_account').on('email_sends').columns(['account_id', 'created_at']).execute();
  });
}
