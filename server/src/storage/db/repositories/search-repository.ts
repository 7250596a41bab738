/**
 * SQL for FileSearch and FolderSearch. FileSearch: live files whose name_key contains the keyword's key literally (one rule for every script).
 * Keys of 3+ characters read the substring index newest first (dialect.fileNameMatches); 1–2 characters read the
 * character pairs of 0010 on SQLite, and scan the account's index of 0009 alone on PostgreSQL.
 */
import { sql, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { containsPattern, engineOf, fileNameMatches } from '../engine/dialect';
import { fileNotBeneathLockedFolder, folderNotBeneathLockedFolder } from './encryption-repository';
import { isLive } from './folder-paths';
import type { Database } from '../schema';

/** The query for up to `limit` candidate ids, in the index's order (callers sort what they keep); exported for plan tests. */
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

/** SQLite: ids whose name_key contains a 1–2 character `key`, from the grams of 0010 (grams from c to c + U+10FFFF). */
function fileNameGrams(accountId: number, key: string) {
  if ([...key].length === 2) {
    return sql<{ id: number }>`(select file_id as id from file_name_grams where account_id = ${accountId} and gram = ${key})`;
  }
  return sql<{ id: number }>`(select distinct file_id as id from file_name_grams
    where account_id = ${accountId} and gram between ${key} and ${key} || char(1114111))`;
}

/** PostgreSQL: the columns the short-key scan reads, all in the index of 0009, so the scan reads the index alone. */
function liveFileNames(accountId: number) {
  return sql<{ id: number; folder_id: number; name_key: string }>`(select id, folder_id, name_key from files
    where account_id = ${accountId} and deleted_at is null and binned_under is null)`;
}

/**
 * Hides files beneath folders locked for the session (`unlockedFor`; encrypted files themselves stay hits), as a
 * condition of the candidate query so that the hit limit counts visible hits only.
 */
function withoutFilesLockedFor(accountId: number, unlockedFor: number | null) {
  return <QB extends SelectQueryBuilder<any, any, any>>(query: QB): QB => query.where(fileNotBeneathLockedFolder(accountId, unlockedFor)) as QB;
}

/** Up to `limit` ids of the account's live files whose name_key contains `key`, not beneath a folder locked for the session. */
export async function findFileIdsByName(db: Kysely<Database>, accountId: number, key: string, limit: number, unlockedFor: number | null = null): Promise<number[]> {
  // No name holds U+0000 (operations/tree/names.ts), and neither FTS5 nor LIKE takes it: nothing matches.
  if (key.includes('\u0000')) return [];
  // SQLite: files whose names are not indexed yet (0015) are read first; the two sets never overlap.
  const pending = engineOf(db) === 'sqlite' ? await pendingFileMatches(db, accountId, key, limit, unlockedFor).execute() : [];
  const indexed = pending.length < limit ? await fileSearchCandidates(db, accountId, key, limit - pending.length, unlockedFor).execute() : [];
  return [...pending, ...indexed].map((row) => row.id);
}

/**
 * SQLite: the account's live files not yet in the indexes (0015_deferred_search_index) whose name_key contains
 * `key` literally, newest first, through the partial index of such files (a few seconds' worth after a Copy).
 */
function pendingFileMatches(db: Kysely<Database>, accountId: number, key: string, limit: number, unlockedFor: number | null) {
  return db
    .selectFrom('files')
    .select('files.id')
    .where('files.account_id', '=', accountId)
    .where(sql<SqlBool>`files.search_indexed = 0`)
    .where(sql<SqlBool>`instr(files.name_key, ${key}) > 0`)
    .where('files.deleted_at', 'is', null)
    .where('files.binned_under', 'is', null)
    .$call(withoutFilesLockedFor(accountId, unlockedFor))
    .orderBy('files.id', 'desc')
    .limit(limit);
}

/**
 * Indexes up to `limit` files not yet indexed (0015), in one transaction; returns how many. SQLite: their character
 * pairs sorted by key (the table's order, so the pages are written in one pass) and their trigrams, then the flag.
 * PostgreSQL keeps its GIN index itself: only the flag (rows copied from SQLite by fss migrate).
 */
export async function indexPendingFiles(db: Kysely<Database>, limit: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const found = await sql<{ id: number }>`select id from files where search_indexed = 0 order by account_id, id limit ${limit}`.execute(tx);
    if (found.rows.length === 0) return 0;
    const ids = found.rows.map((row) => Number(row.id));
    if (engineOf(tx) === 'postgres') {
      await sql`update files set search_indexed = 1 where id = any(cast(${ids} as bigint[]))`.execute(tx);
      return ids.length;
    }
    // CROSS JOIN: each file, then its positions by range (joined the other way, every position is tried per file).
    const batch = sql`json_each(${JSON.stringify(ids)}) as batch cross join files on files.id = batch.value`;
    await sql`insert or ignore into file_name_grams (account_id, gram, file_id)
      select files.account_id, substr(files.name_key, p.n, 2), files.id
      from ${batch} cross join file_name_gram_positions as p where p.n <= length(files.name_key)
      order by 1, 2, 3`.execute(tx);
    await sql`insert into files_name_search (rowid, name_key) select files.id, files.name_key from ${batch}`.execute(tx);
    await sql`update files set search_indexed = 1 where id in (select value from json_each(${JSON.stringify(ids)}))`.execute(tx);
    return ids.length;
  });
}

/**
 * FolderSearch: up to `limit` ids of the account's live folders whose name_key contains `key` literally, not beneath
 * a folder locked for the session. Accounts hold far fewer folders than files, so this scans their folders without
 * a substring index.
 */
export async function findFolderIdsByName(db: Kysely<Database>, accountId: number, key: string, limit: number, unlockedFor: number | null = null): Promise<number[]> {
  if (key.includes('\u0000')) return [];
  const rows = await db
    .selectFrom('folders')
    .select('folders.id')
    .where('folders.account_id', '=', accountId)
    .where(isLive('folders'))
    .where(sql<SqlBool>`folders.name_key like ${containsPattern(key)} escape '\\'`)
    .where(folderNotBeneathLockedFolder(accountId, unlockedFor))
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}
