/**
 * FileSearch's substring index over name_key (dialect.fileNameMatches), covering every file live or not so the bin
 * costs it nothing. Trigrams on both engines, so keys under 3 characters cannot use it.
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
 * SQLite: an external-content FTS5 trigram table (triggers reindex only when name_key changes). case_sensitive 1:
 * name_key is already folded by nameKey; FTS5's folding would be a second definition of "the same letter".
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

/** PostgreSQL: a GIN trigram index serving `name_key like '%…%'` (pg_trgm is trusted from PostgreSQL 13: the owner may create it). */
async function upPostgres(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`create index files_name_key_trgm on files using gin (name_key gin_trgm_ops)`.execute(db);
}
