/**
 * FileSearch for keys of 1 or 2 characters on SQLite (search-repository.ts): the character pairs of
 * every file's name_key, so that a short key is an indexed lookup instead of a scan of the
 * account's names (migration 0009), whose cost is the account's size whatever the answer.
 *
 * Each file's grams are substr(name_key, n, 2) for every position n: its distinct character pairs,
 * plus its last character alone. That serves both lengths:
 * - a key of 2 characters is one gram: `gram = key`;
 * - a key of 1 character c is in a name if and only if some pair starts with c or the name ends
 *   with c, that is a gram whose first character is c: `gram between c and c || U+10FFFF` (the
 *   comparison is by code point: SQLite's binary collation compares UTF-8 bytes).
 * Single characters elsewhere in a name are not stored: pairs already cover them.
 *
 * Like the trigram index of 0004, it covers every file, live or not (the query narrows to live
 * files), so moving a folder of 100,000 files to the bin or restoring it costs nothing here; only
 * adding a file, renaming one and deleting it for good update it. Triggers keep it in step, as
 * 0004's do. SQLite triggers cannot use WITH, so positions come from a small table of numbers, long
 * enough for the longest name_key (4,096 characters, FSS_MAX_NAME_LENGTH's ceiling, and up to 3
 * code points per character when lower-cased).
 *
 * Measured on the benchmark's database (1.2 million files, names of 31 characters on average):
 * 36.6 million grams, 587 MB (with the index dropped below, the database grows from 777 MB to
 * 1,300 MB), built in 74 s by this migration; a key of 1–2 characters that matches nothing takes
 * 0.2–0.4 ms instead of 135–175 ms. The price is paid on writes: about 25 µs more per file added
 * and 50 µs more per file deleted for good (some 30 entries each); docs/design.md §10 ("Search").
 *
 * The index of 0009 (files_live_name_key), which only the scan read, is dropped on SQLite: it was
 * updated for every file moved to the bin or restored (and repeated the unique files_live_name).
 *
 * PostgreSQL gets nothing: pg_trgm extracts no trigram from a pattern of 1–2 characters, so such
 * keys keep the scan of 0009's index there (search-repository.ts).
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
