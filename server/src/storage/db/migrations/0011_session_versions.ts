/**
 * Sessions move the account's version too (a token deleted, or a column deciding its validity rewritten), so kept
 * token and folder checks stay correct. A touch (last seen, idle expiry) does not: it only lengthens a session.
 * PostgreSQL's transition-table triggers cannot name columns, so its update trigger compares old and new rows.
 */
import { sql, type Kysely } from 'kysely';
import { engineOf, migrateAtomically } from '../engine/dialect';

/** The columns of a token whose change makes what was read of it stale. */
const DECIDING_COLUMNS = ['account_id', 'api_key_id', 'token_hash', 'sealed_signing_key', 'created_at', 'expires_at'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    if (engineOf(db) === 'postgres') await upPostgres(db);
    else await upSqlite(db);
  });
}

async function upSqlite(db: Kysely<any>): Promise<void> {
  const bump = (row: 'new' | 'old') => sql.raw(`
      insert into listing_versions (account_id, version) values (${row}.account_id, 1)
        on conflict (account_id) do update set version = version + 1;`);
  const columns = sql.raw(DECIDING_COLUMNS.join(', '));
  await sql`create trigger tokens_listing_version_delete after delete on tokens begin ${bump('old')} end`.execute(db);
  await sql`create trigger tokens_listing_version_update after update of ${columns} on tokens begin ${bump('new')} end`.execute(db);
  await sql`create trigger tokens_listing_version_account_change after update of account_id on tokens
      when old.account_id <> new.account_id begin ${bump('old')} end`.execute(db);
}

async function upPostgres(db: Kysely<any>): Promise<void> {
  const changed = sql.raw(DECIDING_COLUMNS.map((column) => `o.${column} is distinct from n.${column}`).join(' or '));
  await sql`create function fss_tokens_versions_after_update() returns trigger language plpgsql as $$
    declare
      account bigint;
    begin
      for account in
        select o.account_id from changed_rows o join new_rows n on n.id = o.id where ${changed}
        union
        select n.account_id from changed_rows o join new_rows n on n.id = o.id where ${changed}
      loop
        perform fss_bump_listing_version(account);
      end loop;
      return null;
    end $$`.execute(db);
  await sql`create trigger tokens_listing_version_delete after delete on tokens
      referencing old table as changed_rows for each statement execute function fss_listing_versions_after_statement()`.execute(db);
  await sql`create trigger tokens_listing_version_update after update on tokens
      referencing old table as changed_rows new table as new_rows for each statement execute function fss_tokens_versions_after_update()`.execute(db);
}
