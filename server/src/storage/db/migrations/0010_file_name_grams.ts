/**
 * SQLite: each file's character pairs (and last character), so a 1–2 character key is an index lookup (0.2–0.4 ms
 * instead of 135–175 ms on 1.2 M files), not 0009's scan, whose index is dropped here. A 1-character key c matches
 * grams between c and c || U+10FFFF. Covers every file, so the bin costs nothing; costs some 25–50 µs per file
 * written. PostgreSQL keeps the scan: pg_trgm extracts no trigram from 1–2 characters.
 */
import { sql, type Kysely } from 'kysely';
import { engineOf, migrateAtomically } from '../engine/dialect';

/** Longest name_key whose grams are all indexed: 4,096 characters × 3 code points each when lower-cased, and more. */
const POSITIONS = 16_384;

export async function up(db: Kysely<any>): Promise<void> {
  if (engineOf(db) !== 'sqlite') return;
  await migrateAtomically(db, async (db) => {
    await sql`create table file_name_gram_positions (n integer primary key)`.execute(db);
    await sql`
      insert into file_name_gram_positions (n)
      with recursive positions(n) as (select 1 union all select n + 1 from positions where n < ${sql.lit(POSITIONS)})
      select n from positions`.execute(db);
    // Keyed for the lookup (account, gram) with the files side by side, newest last.
    await sql`
      create table file_name_grams (
        account_id integer not null,
        gram text not null,
        file_id integer not null,
        primary key (account_id, gram, file_id)
      ) without rowid`.execute(db);
    await sql`
      create trigger file_name_grams_insert after insert on files begin
        insert or ignore into file_name_grams (account_id, gram, file_id)
          select new.account_id, substr(new.name_key, n, 2), new.id
          from file_name_gram_positions where n <= length(new.name_key);
      end`.execute(db);
    await sql`
      create trigger file_name_grams_delete after delete on files begin
        delete from file_name_grams
        where account_id = old.account_id and file_id = old.id and gram in (
          select substr(old.name_key, n, 2) from file_name_gram_positions where n <= length(old.name_key));
      end`.execute(db);
    await sql`
      create trigger file_name_grams_update after update of name_key, account_id on files
      when old.name_key is not new.name_key or old.account_id is not new.account_id begin
        delete from file_name_grams
        where account_id = old.account_id and file_id = old.id and gram in (
          select substr(old.name_key, n, 2) from file_name_gram_positions where n <= length(old.name_key));
        insert or ignore into file_name_grams (account_id, gram, file_id)
          select new.account_id, substr(new.name_key, n, 2), new.id
          from file_name_gram_positions where n <= length(new.name_key);
      end`.execute(db);
    await sql`drop index files_live_name_key`.execute(db);
    // Files that existed before this migration, in key order so that the index is written in one pass.
    await sql`
      insert or ignore into file_name_grams (account_id, gram, file_id)
      select files.account_id, substr(files.name_key, p.n, 2), files.id
      from files join file_name_gram_positions p on p.n <= length(files.name_key)
      order by 1, 2, 3`.execute(db);
  });
}
