/**
 * SQL for FileSearch (DECISIONS.md §13): the account's live files whose name contains a keyword.
 *
 * The keyword arrives as a key (operations/tree/names.ts nameKey: NFC, lower case) and is compared
 * with files.name_key as a literal substring, so that one rule serves every script.
 *
 * Two paths, chosen by the key's length:
 * - 3 characters or more: the substring index of migration 0004 (dialect.fileNameMatches), read
 *   newest first (descending id) and stopped after `limit` hits of this account. The index spans
 *   all accounts, so its cost grows with the matches it walks past: this account's first `limit`
 *   hits, plus other accounts' matches interleaved with them.
 * - 1 or 2 characters (common in Chinese and Japanese: "报告"): trigrams cannot serve them.
 *   - SQLite: the character pairs of migration 0010 (file_name_grams, keyed by account and gram):
 *     a 2-character key is one gram, a 1-character key every gram that starts with it. A key that
 *     matches nothing costs a lookup (0.2–0.4 ms) rather than a scan of the account (0.15 s
 *     per million files).
 *   - PostgreSQL: the account's live files are scanned, stopping at `limit` hits, reading the
 *     index of migration 0009 alone (account, folder_id, name_key of live files), never the
 *     table's rows. A common key stops early; a rare one reads the account's whole index once.
 */
import { sql, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { containsPattern, engineOf, fileNameMatches } from '../engine/dialect';
import { fileNotBeneathLockedFolder } from './encryption-repository';
import type { Database } from '../schema';

/**
 * The query that finds up to `limit` candidate ids, exported so that tests can read its plan.
 * Candidates are the account's live files; which ones come first when more than `limit` match is
 * the index's order (see above), not the listing order: callers sort what they keep.
 */
export function fileSearchCandidates(
  db: Kysely<Database>,
  accountId: number,
  key: string,
  limit: number,
  unlockedFor: number | null = null,
): SelectQueryBuilder<Database, any, { id: number }> {
  const withoutLockedFiles = withoutFilesLockedFor(accountId, unlockedFor);
  const indexed = fileNameMatches(db, key);
  if (indexed) {
    // CROSS JOIN: the index drives, newest first, and each match is read by its id.
    return db
      .selectFrom(indexed)
      .crossJoin('files')
      .whereRef('files.id', '=', 'name_matches.id')
      .select('files.id')
      .where('files.account_id', '=', accountId)
      .where('files.deleted_at', 'is', null)
      .where('files.binned_under', 'is', null)
      .$call(withoutLockedFiles)
      .orderBy('name_matches.id', 'desc')
      .limit(limit);
  }
  if (engineOf(db) === 'sqlite') {
    // CROSS JOIN: the grams drive, and each file is read by its id. A pair is read newest first
    // from the index; a single character's files come from several grams, in no order (sorting
    // them would read them all).
    const pair = [...key].length === 2;
    return db
      .selectFrom(fileNameGrams(accountId, key).as('name_matches'))
      .crossJoin('files')
      .whereRef('files.id', '=', 'name_matches.id')
      .select('files.id')
      .where('files.deleted_at', 'is', null)
      .where('files.binned_under', 'is', null)
      .$call(withoutLockedFiles)
      .$if(pair, (query) => query.orderBy('name_matches.id', 'desc'))
      .limit(limit);
  }
  return db
    .selectFrom(liveFileNames(accountId).as('files'))
    .select('files.id')
    .where(sql<SqlBool>`files.name_key like ${containsPattern(key)} escape '\\'`)
    .$call(withoutLockedFiles)
    .limit(limit);
}

/**
 * SQLite: the ids of the account's files, live or not, whose name_key contains `key` of 1 or 2
 * characters, from the grams of migration 0010. A file holds a character c if one of its grams
 * (its character pairs and its last character) starts with c: the grams from c to c followed by
 * the last code point, U+10FFFF. One file can hold several such grams: distinct.
 */
function fileNameGrams(accountId: number, key: string) {
  if ([...key].length === 2) {
    return sql<{ id: number }>`(select file_id as id from file_name_grams where account_id = ${accountId} and gram = ${key})`;
  }
  return sql<{ id: number }>`(select distinct file_id as id from file_name_grams
    where account_id = ${accountId} and gram between ${key} and ${key} || char(1114111))`;
}

/**
 * PostgreSQL: the account's live files as the scan of short keys reads them: id, folder_id (for
 * the locked-folder condition) and name_key, which the index of migration 0009 holds, so that the
 * scan can read the index alone.
 */
function liveFileNames(accountId: number) {
  return sql<{ id: number; folder_id: number; name_key: string }>`(select id, folder_id, name_key from files
    where account_id = ${accountId} and deleted_at is null and binned_under is null)`;
}

/**
 * Where search hides files beneath locked folders (DECISIONS.md §11, §13: "not in locked
 * folders"): encrypted folders whose key the session (token id `unlockedFor`; null: none) has not
 * unlocked, and everything below them (encryption-repository fileNotBeneathLockedFolder). Files
 * that are themselves encrypted stay hits, shown with encrypted="1" and their tip. It is a
 * condition of the candidate query, not a filter afterwards, so that the hit limit counts visible
 * hits only.
 */
function withoutFilesLockedFor(accountId: number, unlockedFor: number | null) {
  return <QB extends SelectQueryBuilder<any, any, any>>(query: QB): QB => query.where(fileNotBeneathLockedFolder(accountId, unlockedFor)) as QB;
}

/** Up to `limit` ids of the account's live files whose name_key contains `key`, not beneath a folder locked for the session. */
export async function findFileIdsByName(db: Kysely<Database>, accountId: number, key: string, limit: number, unlockedFor: number | null = null): Promise<number[]> {
  // No name holds U+0000 (operations/tree/names.ts), and neither FTS5 nor LIKE takes it: nothing matches.
  if (key.includes('\u0000')) return [];
  const rows = await fileSearchCandidates(db, accountId, key, limit, unlockedFor).execute();
  return rows.map((row) => row.id);
}
