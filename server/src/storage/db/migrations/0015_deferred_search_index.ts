/**
 * Copied files are indexed for FileSearch later (operations/admin/search-indexing.ts): a file row costs SQLite
 * 100–300 µs in the triggers of 0004 and 0010, so a copy of 100,000 files took a minute. `search_indexed` 0 marks
 * a file whose name is in neither index yet; the triggers skip such rows (an FTS5 'delete' of a row never inserted
 * corrupts the index), and search scans them through the partial index. The column is on both engines so the
 * schema stays one (fss migrate compares columns); PostgreSQL's GIN index needs no deferral, so its rows stay 1.
 */
import { sql, type Kysely } from 'kysely';
import { engineOf, migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    await db.schema.alterTable('files').addColumn('search_indexed', 'smallint', (col) => col.notNull().defaultTo(1)).execute();
    // name_key in the index: search's scan of these files tests it before reading a row.
    await db.schema.createIndex('files_search_pending').on('files').columns(['account_id', 'id', 'name_key']).where(sql<boolean>`search_indexed = 0`).execute();
    if (engineOf(db) === 'sqlite') await onlyIndexedRowsInTriggers(db);
  });
}

/** The triggers of 0004 and 0010 again, each for indexed rows only. */
async function onlyIndexedRowsInTriggers(db: Kysely<any>): Promise<void> {
  for (const name of ['files_name_search_insert', 'files_name_search_delete', 'files_name_search_update', 'file_name_grams_insert', 'file_name_grams_delete', 'file_name_grams_update']) {
    await sql`drop trigger ${sql.id(name)}`.execute(db);
  }
  const oldGrams = sql`delete from file_name_grams
      where account_id = old.account_id and file_id = old.id and gram in (
        select substr(old.name_key, n, 2) from file_name_gram_positions where n <= length(old.name_key));`;
  const newGrams = sql`insert or ignore into file_name_grams (account_id, gram, file_id)
      select new.account_id, substr(new.name_key, n, 2), new.id from file_name_gram_positions where n <= length(new.name_key);`;
  const oldTrigrams = sql`insert into files_name_search (files_name_search, rowid, name_key) values ('delete', old.id, old.name_key);`;
  const newTrigrams = sql`insert into files_name_search (rowid, name_key) values (new.id, new.name_key);`;
  await sql`create trigger files_name_search_insert after insert on files when new.search_indexed = 1 begin ${newTrigrams} end`.execute(db);
  await sql`create trigger files_name_search_delete after delete on files when old.search_indexed = 1 begin ${oldTrigrams} end`.execute(db);
  await sql`create trigger files_name_search_update after update of name_key on files
    when old.search_indexed = 1 and old.name_key is not new.name_key begin ${oldTrigrams} ${newTrigrams} end`.execute(db);
  await sql`create trigger file_name_grams_insert after insert on files when new.search_indexed = 1 begin ${newGrams} end`.execute(db);
  await sql`create trigger file_name_grams_delete after delete on files when old.search_indexed = 1 begin ${oldGrams} end`.execute(db);
  await sql`create trigger file_name_grams_update after update of name_key, account_id on files
    when old.search_indexed = 1 and (old.name_key is not new.name_key or old.account_id is not new.account_id)
    begin ${oldGrams} ${newGrams} end`.execute(db);
  // 0008's version bump, not for the indexer's own update (it sets search_indexed alone, which no listing shows).
  await sql`drop trigger files_listing_version_update`.execute(db);
  await sql`create trigger files_listing_version_update after update on files when old.search_indexed = new.search_indexed begin
      insert into listing_versions (account_id, version) values (new.account_id, 1) on conflict (account_id) do update set version = version + 1;
    end`.execute(db);
}
