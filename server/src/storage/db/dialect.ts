/**
 * The few places where SQLite and PostgreSQL differ. Everything else (queries, migrations) is
 * written once against Kysely. A difference that is not in this file is a bug.
 *
 * What is deliberately *not* a difference:
 * - case-insensitive uniqueness uses a normalized `*_key` column, not COLLATE NOCASE (SQLite) or
 *   citext (PostgreSQL);
 * - partial indexes (`create index … where …`), `insert … on conflict … do update` and
 *   `returning` are written the same way on both;
 * - times are bigint epoch milliseconds, so no date functions differ;
 * - flags are 0/1 integers rather than PostgreSQL booleans, so rows read the same on both.
 */
import {
  PostgresAdapter,
  sql,
  type AliasedRawBuilder,
  type ColumnDefinitionBuilder,
  type CreateTableBuilder,
  type Kysely,
} from 'kysely';

export type Engine = 'sqlite' | 'postgres';

/** Which engine a Kysely instance (or a transaction of one) talks to. */
export function engineOf(db: Kysely<any>): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * Adds the auto-increment primary key `id`.
 * - SQLite: exactly `integer primary key` makes the column the rowid; AUTOINCREMENT keeps SQLite
 *   from reusing the ids of deleted rows, so a stale client id can never name a newer item.
 * - PostgreSQL: a bigint identity column (identities never reuse values either).
 */
export function addIdColumn<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, any>): CreateTableBuilder<T, any> {
  return engineOf(db) === 'postgres'
    ? table.addColumn('id', 'bigint', (col: ColumnDefinitionBuilder) => col.generatedByDefaultAsIdentity().primaryKey())
    : table.addColumn('id', 'integer', (col: ColumnDefinitionBuilder) => col.primaryKey().autoIncrement());
}

/**
 * Makes the next id of `table` be `first` (accounts start at 1001).
 * - SQLite: AUTOINCREMENT continues from the table's row in sqlite_sequence.
 * - PostgreSQL: restarts the identity's sequence.
 */
export async function startIdsAt(db: Kysely<any>, table: string, first: number): Promise<void> {
  if (engineOf(db) === 'postgres') {
    await sql`alter table ${sql.table(table)} alter column id restart with ${sql.lit(first)}`.execute(db);
  } else {
    await sql`insert into sqlite_sequence (name, seq) values (${table}, ${first - 1})`.execute(db);
  }
}

/**
 * Whether an error is a unique-constraint violation, so that a race on a unique name becomes a
 * 409 rather than a server fault.
 * - SQLite (better-sqlite3): code SQLITE_CONSTRAINT_UNIQUE or SQLITE_CONSTRAINT_PRIMARYKEY.
 * - PostgreSQL (pg): SQLSTATE 23505.
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/**
 * How bigint columns reach JavaScript.
 * - SQLite (better-sqlite3): INTEGER values arrive as numbers (safeIntegers stays off).
 * - PostgreSQL (pg): int8 arrives as a string unless told otherwise; the PostgreSQL dialect
 *   registers this parser for type OID 20, so that rows have the same shape on both engines.
 * Every stored integer stays below 2^53, and this refuses one that does not rather than round it.
 */
export function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`integer out of range: ${text}`);
  return value;
}

/**
 * Runs a migration's statements all-or-nothing.
 * - PostgreSQL: Kysely's Migrator already runs each migration in a transaction.
 * - SQLite: it does not (its adapter declares no transactional DDL, although SQLite has it), so
 *   a failing migration would leave half a schema behind; this opens the transaction itself.
 */
export async function migrateAtomically(db: Kysely<any>, up: (db: Kysely<any>) => Promise<void>): Promise<void> {
  if (db.isTransaction) return up(db);
  await db.transaction().execute(up);
}

/**
 * FileSearch's substring index (migration 0004_file_name_search): the ids of files, of every
 * account, live or not, whose name_key contains `key` as a literal substring, as a derived table
 * `name_matches(id)`. The caller joins it to files, narrows it to one account's live files, and
 * reads it in descending id order, which both engines serve from the index without sorting.
 * Returns null when the index cannot serve a key this short (fewer than 3 characters, the length
 * of a trigram on both engines); the caller then scans instead.
 * - SQLite: the FTS5 trigram table files_name_search; `key` becomes one phrase ("" escapes ").
 * - PostgreSQL: LIKE, which the pg_trgm GIN index files_name_key_trgm serves.
 */
export function fileNameMatches(db: Kysely<any>, key: string): AliasedRawBuilder<{ id: number }, 'name_matches'> | null {
  if ([...key].length < 3) return null;
  if (engineOf(db) === 'postgres') {
    return sql<{ id: number }>`(select id from files where name_key like ${containsPattern(key)} escape '\\')`.as('name_matches');
  }
  const phrase = `"${key.replaceAll('"', '""')}"`;
  return sql<{ id: number }>`(select rowid as id from files_name_search where files_name_search match ${phrase})`.as('name_matches');
}

/**
 * A LIKE pattern (to be used with `escape '\'`) matching any text that contains `text` literally:
 * `%`, `_` and `\` lose their special meaning. Written the same on both engines.
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}

/**
 * Keeps the query planner's statistics current as tables grow.
 * - SQLite: gathers none by itself; `PRAGMA optimize` analyzes the tables whose statistics are
 *   missing or stale (cheap when nothing changed).
 * - PostgreSQL: autovacuum analyzes on its own; nothing to do.
 */
export async function refreshPlannerStatistics(db: Kysely<any>): Promise<void> {
  if (engineOf(db) === 'sqlite') await sql`pragma optimize`.execute(db);
}
