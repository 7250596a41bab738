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
 * - flags are 0/1 integers rather than PostgreSQL booleans, so rows read the same on both;
 * - LIKE: SQLite's ignores ASCII case, PostgreSQL's does not; every LIKE here compares `name_key`
 *   with a pattern made from a key, both lower case already, so both answer the same;
 * - text order: only `sort_key` is ever sorted on, and it compares by code point on both (BINARY
 *   on SQLite, `collate "C"` on PostgreSQL: 0002_item_order_and_search).
 *
 * Concurrency (docs/design.md §8, "PostgreSQL"): SQLite runs one writer at a time, so every
 * transaction sees the database as it left it. PostgreSQL runs transactions at READ COMMITTED,
 * and every invariant is kept by the statements themselves, the same SQL on both engines:
 * - the tree of one account (names unique across folders and files, no cycles, sizes, nothing
 *   beneath a binned folder): its changes first take the account's row lock
 *   (items-repository.lockAccountTree), so they run one after another; the partial unique
 *   indexes stay the last word on names (isUniqueViolation below becomes 409);
 * - quota: one conditional UPDATE (items-repository.reserveQuota), which PostgreSQL re-checks on
 *   the row it locks; upload reservations are summed under the same row lock;
 * - download limits, link hits, throttle counters, the e-mail queue's leases, job leases:
 *   single conditional statements (`… where downloads < download_limit`, `on conflict do update`);
 * - content that loses its last reference: the rows are locked before the delete (lockRows below).
 * No transaction needs SERIALIZABLE, so none has to be retried for a serialization failure.
 */
import {
  OperationNodeTransformer,
  PostgresAdapter,
  sql,
  type AliasedRawBuilder,
  type ColumnDefinitionBuilder,
  type CreateTableBuilder,
  type Kysely,
  type KyselyPlugin,
  type PrimitiveValueListNode,
  type ValueNode,
} from 'kysely';
import pg from 'pg';

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
 * The highest id `table` has ever handed out, deleted rows included (0 when none): what a copy of
 * the table must continue after (`fss migrate`, storage/db/engine/installation-copy.ts), so that no id is
 * handed out twice, not even one whose row is gone.
 * - SQLite: AUTOINCREMENT keeps it in sqlite_sequence (accounts: 1000 before the first, startIdsAt).
 * - PostgreSQL: the last value of the identity's sequence, once one has been drawn.
 */
export async function lastIssuedId(db: Kysely<any>, table: string): Promise<number> {
  const { rows } =
    engineOf(db) === 'postgres'
      ? await sql<{ last: number | null }>`select pg_sequence_last_value(pg_get_serial_sequence(${table}, 'id')::regclass) as last`.execute(db)
      : await sql<{ last: number | null }>`select seq as last from sqlite_sequence where name = ${table}`.execute(db);
  return Number(rows[0]?.last ?? 0);
}

/**
 * Makes the next id of `table` follow both `lastIssued` and every id the table holds, after rows
 * were inserted with their ids given (`fss migrate` keeps every id), which does not move an
 * identity on.
 * - PostgreSQL: setval on the identity's sequence (to 1, not yet drawn, when both are 0).
 * - SQLite: AUTOINCREMENT continues after the highest id inserted already; sqlite_sequence is
 *   raised to `lastIssued` where that is higher.
 */
export async function continueIdsAfterCopy(db: Kysely<any>, table: string, lastIssued: number): Promise<void> {
  if (engineOf(db) === 'postgres') {
    await sql`
      select setval(pg_get_serial_sequence(${table}, 'id'), greatest(last, 1), last > 0)
      from (select greatest(${sql.lit(lastIssued)}::bigint, coalesce(max(id), 0)) as last from ${sql.table(table)}) highest`.execute(db);
  } else {
    const updated = await sql`update sqlite_sequence set seq = max(seq, ${lastIssued}) where name = ${table}`.execute(db);
    if (Number(updated.numAffectedRows ?? 0) === 0 && lastIssued > 0) {
      await sql`insert into sqlite_sequence (name, seq) values (${table}, ${lastIssued})`.execute(db);
    }
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
 * Whether an error is a foreign-key violation: a row pointed at what a concurrent change deleted
 * (content removed under an upload's claim, a key deleted under an encryption).
 * - SQLite (better-sqlite3): code SQLITE_CONSTRAINT_FOREIGNKEY.
 * - PostgreSQL (pg): SQLSTATE 23503.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503';
}

/**
 * Whether an error is a CHECK-constraint violation.
 * - SQLite (better-sqlite3): code SQLITE_CONSTRAINT_CHECK.
 * - PostgreSQL (pg): SQLSTATE 23514.
 */
export function isCheckViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_CHECK' || code === '23514';
}

/**
 * Text with U+0000 in it, which only an HTTP form can bring (`%00`; XML cannot carry it).
 * - SQLite stores and compares it like any other character.
 * - PostgreSQL's text cannot hold it at all: a parameter with it fails the statement (22021). The
 *   PostgreSQL dialect (database.ts) therefore gives every string parameter through this plugin,
 *   which writes U+0000 as U+FFFF: a noncharacter, which no valid name holds either way and which
 *   the XML writer drops from answers as it drops U+0000. So a lookup by such a value (a share
 *   code, a throttle key of a login name) finds nothing, as it does on SQLite, and a description
 *   with one is stored and answered alike, instead of the call failing.
 */
class NulInText extends OperationNodeTransformer {
  protected override transformValue(node: ValueNode): ValueNode {
    return typeof node.value === 'string' && node.value.includes('\u0000') ? { ...node, value: withoutNul(node.value) } : node;
  }

  protected override transformPrimitiveValueList(node: PrimitiveValueListNode): PrimitiveValueListNode {
    if (!node.values.some((value) => typeof value === 'string' && value.includes('\u0000'))) return node;
    return { ...node, values: node.values.map((value) => (typeof value === 'string' ? withoutNul(value) : value)) };
  }
}

const withoutNul = (text: string) => text.replaceAll('\u0000', '\uffff');

const nulInText = new NulInText();

export const postgresTextPlugin: KyselyPlugin = {
  transformQuery: (args) => nulInText.transformNode(args.node),
  transformResult: async (args) => args.result,
};

/**
 * Locks the rows `ids` of `table` (by primary key `id`) until the transaction `tx` ends, so that
 * what the transaction reads next about them is the latest committed state, and no other
 * transaction can reference or change them before it commits.
 * - PostgreSQL: `select … for update`, in id order (two lockers never wait for each other in a
 *   circle). Under READ COMMITTED a later statement of the transaction then sees every change
 *   committed before the lock was granted: e.g. content removal, after locking the content rows,
 *   sees a file that a concurrent FileAdd committed pointing at one of them, and keeps it.
 * - SQLite: nothing to do: one writer at a time, and the transaction sees its own database.
 */
export async function lockRows(tx: Kysely<any>, table: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0 || engineOf(tx) === 'sqlite') return;
  await sql`select id from ${sql.table(table)} where id in (${sql.join(ids)}) order by id for update`.execute(tx);
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
 * How numeric values reach JavaScript.
 * - SQLite: `sum()` of integers is an integer (a number), `count(*)` too.
 * - PostgreSQL: `count(*)` is int8 (parseInt8 above); `sum()` of bigint is numeric, which pg hands
 *   over as a string. This reads it as a number, so that sums read the same on both engines; a
 *   whole number beyond 2^53 is refused rather than rounded.
 */
export function parseNumeric(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) throw new RangeError(`number out of range: ${text}`);
  return value;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * The pg type parsers of the PostgreSQL pool (database.ts): int8 and numeric as numbers (above),
 * every other type as pg reads it. Given to the pool, not set globally, so that no other user of pg
 * in the process is affected. Cursors (listings) use the same parsers.
 * smallint (the 0/1 flags) and integer arrive as numbers without help.
 */
export const postgresTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (format !== 'binary' && oid === INT8_OID) return parseInt8;
    if (format !== 'binary' && oid === NUMERIC_OID) return parseNumeric;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

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
 *   FTS5 indexes every character.
 * - PostgreSQL: LIKE, which the pg_trgm GIN index files_name_key_trgm serves; the index narrows
 *   the rows and LIKE decides, so what matches is exactly what matches on SQLite. pg_trgm makes
 *   trigrams of words only (letters and digits, as the database's LC_CTYPE classifies them: a
 *   UTF-8 locale knows every script), so a key of punctuation alone ("...") would read the whole
 *   index: such a key is scanned like a short one.
 */
export function fileNameMatches(db: Kysely<any>, key: string): AliasedRawBuilder<{ id: number }, 'name_matches'> | null {
  if ([...key].length < 3) return null;
  if (engineOf(db) === 'postgres') {
    if (!/[\p{L}\p{N}]/u.test(key)) return null;
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
