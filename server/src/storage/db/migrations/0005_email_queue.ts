/**
 * The e-mail queue of e-mail sharing (DECISIONS.md §10, §15): what the `emails` table of
 * 0001_initial needs to be sent by any of several instances, and the per-account sending ledger.
 *
 * `emails` gains:
 * - `base_url`: the public base URL of the share link, fixed when the message is queued (FSS_PUBLIC_URL,
 *   or the base URL of the request that queued it), so that any instance builds the same link;
 * - `extraction_code_sealed`: the share's extraction code at queue time, AES-256-GCM-sealed under
 *   a key derived from the server secret (as shares.downpwd_sealed is); null for an open share;
 * - `locked_until`, `locked_by`: the sending lease. An instance claims a due row with one
 *   conditional UPDATE that sets them, so exactly one instance holds a row at a time; a lease that
 *   runs out (the instance died) makes the row claimable again.
 *
 * `email_sends`: one row per accepted e-mail share call (account, recipients, time), what the
 * sending rate limit counts. It is kept apart from `emails` because those go with their share
 * (on delete cascade): unsharing and sharing again must not reset the count. Rows older than the
 * longest window are deleted as the account sends again, so an account never has more than a
 * day's worth.
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
