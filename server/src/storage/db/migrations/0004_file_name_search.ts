/**
 * FileSearch's substring index: "which files have a name containing this text", answered from an
 * index rather than a scan of every name (DECISIONS.md §13). Queries go through
 * dialect.fileNameMatches; the index covers every file of every account, live or not (the query
 * narrows to one account's live files), so moving a file to the bin or restoring it costs nothing
 * here.
 *
 * What is indexed is name_key (NFC, lower case: operations/tree/names.ts nameKey), and the keyword is
 * turned into its key the same way, so the match is case-insensitive in every script. Both
 * engines index trigrams, so keys shorter than 3 characters cannot use the index (the search
 * repository scans the account's names for those).
 */
import { sql, type Kysely } from 'kysely';
import { engineOf, migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    if (engineOf(db) === 'postgres') await upPostgres(db);
    else await upSqlite(db);
  });
}

/**
 * SQLite: an FTS5 table with the trigram tokenizer over files.name_key, as an external-content
 * table (it stores only the index; names stay in files). Triggers keep it in step with files:
 * FTS5 must be told the old value to remove it, so an update reindexes only when name_key
 * actually changes (files rows are also updated for sizes, flags, moves and the bin).
 * case_sensitive 1: name_key and the keyword are already lower-cased by nameKey; FTS5's own case
 * folding would be a second, slightly different definition of "the same letter".
 */
async function upSqlite(db: Kysely<any>): Promise<void> {
  await sql`
    create virtual table files_name_search using fts5(
      name_key, content='files', content_rowid='id', tokenize='trigram case_sensitive 1'
    )`.execute(db);
  await sql`
    create trigger files_name_search_insert after insert on files begin
      insert into files_name_search (rowid, name_key) values (new.id, new.name_key);
    end`.execute(db);
  await sql`
    create trigger files_name_search_delete after delete on files begin
      insert into files_name_search (files_name_search, rowid, name_key) values ('delete', old.id, old.name_key);
    end`.execute(db);
  await sql`
    create trigger files_name_search_update after update of name_key on files
    when old.name_key is not new.name_key begin
      insert into files_name_search (files_name_search, rowid, name_key) values ('delete', old.id, old.name_key);
      insert into files_name_search (rowid, name_key) values (new.id, new.name_key);
    end`.execute(db);
  // Files that existed before this migration.
  await sql`insert into files_name_search (files_name_search) values ('rebuild')`.execute(db);
}

/**
 * PostgreSQL: a GIN trigram index on name_key, which serves `name_key like '%…%'`. Creating the
 * extension needs a role allowed to (pg_trgm is a trusted extension from PostgreSQL 13 on: the
 * database owner may).
 */
async function upPostgres(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`create index files_name_key_trgm on files using gin (name_key gin_trgm_ops)`.execute(db);
}
