/**
 * The few places where SQLite and PostgreSQL differ; everything else is written once against Kysely, and a
 * difference not in this file is a bug. Concurrency and the invariants' locks: docs/design.md, "PostgreSQL".
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

export type Engine = 'sqlite' | 'postgres';

/** Which engine a Kysely instance (or a transaction of one) talks to. */
export function engineOf(db: Kysely<any>): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** Adds the auto-increment key `id`; AUTOINCREMENT / identity never reuse ids, so a stale id never names a newer item. */
export function addIdColumn<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, any>): CreateTableBuilder<T, any> {
  return engineOf(db) === 'postgres'
    ? table.addColumn('id', 'bigint', (col: ColumnDefinitionBuilder) => col.generatedByDefaultAsIdentity().primaryKey())
    : table.addColumn('id', 'integer', (col: ColumnDefinitionBuilder) => col.primaryKey().autoIncrement());
}

/** Makes the next id of `table` be `first` (accounts start at 1001). */
export async function startIdsAt(db: Kysely<any>, table: string, first: number): Promise<void> {
  if (engineOf(db) === 'postgres') {
    await sql`alter table ${sql.table(table)} alter column id restart with ${sql.lit(first)}`.execute(db);
  } else {
    await sql`insert into sqlite_sequence (name, seq) values (${table}, ${first - 1})`.execute(db);
  }
}

/** The highest id `table` ever handed out, deleted rows included (0 when none): where `fss migrate`'s copy continues. */
export async function lastIssuedId(db: Kysely<any>, table: string): Promise<number> {
  const { rows } =
    engineOf(db) === 'postgres'
      ? await sql<{ last: number | null }>`select pg_sequence_last_value(pg_get_serial_sequence(${table}, 'id')::regclass) as last`.execute(db)
      : await sql<{ last: number | null }>`select seq as last from sqlite_sequence where name = ${table}`.execute(db);
  return Number(rows[0]?.last ?? 0);
}

/** Makes the next id of `table` follow both `lastIssued` and every id it holds, after a copy inserted rows with their ids. */
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

/** Whether a driver error carries one of `codes` (SQLite's names, PostgreSQL's SQLSTATEs). */
const hasCode = (error: unknown, codes: readonly string[]) => codes.includes((error as { code?: unknown } | null)?.code as string);

/** A unique-constraint violation, so that a race on a unique name becomes a 409 rather than a server fault. */
export const isUniqueViolation = (error: unknown): boolean => hasCode(error, ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505']);

/** A foreign-key violation: a row pointed at what a concurrent change deleted. */
export const isForeignKeyViolation = (error: unknown): boolean => hasCode(error, ['SQLITE_CONSTRAINT_FOREIGNKEY', '23503']);

export const isCheckViolation = (error: unknown): boolean => hasCode(error, ['SQLITE_CONSTRAINT_CHECK', '23514']);

/**
 * PostgreSQL's text cannot hold U+0000 (only an HTTP form's `%00` brings it): every string parameter has it as U+FFFF,
 * a noncharacter no valid name holds and the XML writer drops, so lookups and stored text answer as on SQLite.
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
 * Locks rows `ids` of `table` until `tx` ends (PostgreSQL only, in id order so lockers never wait in a circle): later
 * statements then see every change committed before the lock. SQLite has one writer, so nothing to do.
 */
export async function lockRows(tx: Kysely<any>, table: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0 || engineOf(tx) === 'sqlite') return;
  await sql`select id from ${sql.table(table)} where id in (${sql.join(ids)}) order by id for update`.execute(tx);
}

/** int8 as a number, so rows have the same shape on both engines; refuses (never rounds) a value beyond 2^53. */
export function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`integer out of range: ${text}`);
  return value;
}

/** PostgreSQL's numeric (`sum()` of bigint) as a number, as SQLite answers it; refuses a whole number beyond 2^53. */
export function parseNumeric(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) throw new RangeError(`number out of range: ${text}`);
  return value;
}

/** Runs a migration all-or-nothing: Kysely's Migrator declares no transactional DDL for SQLite, so this opens one. */
export async function migrateAtomically(db: Kysely<any>, up: (db: Kysely<any>) => Promise<void>): Promise<void> {
  if (db.isTransaction) return up(db);
  await db.transaction().execute(up);
}

/**
 * FileSearch's substring index as a derived table `name_matches(id)` (FTS5 trigrams on SQLite, pg_trgm + LIKE on
 * PostgreSQL; both match exactly the same). Null when a key is too short (< 3) or, on PostgreSQL, has no letter or
 * digit (pg_trgm indexes words only, so it would read the whole index): the caller then scans.
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

/** A LIKE pattern (with `escape '\'`) matching any text that contains `text` literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}

/** Keeps the planner's statistics current: SQLite gathers none by itself (`PRAGMA optimize`); autovacuum does it on PostgreSQL. */
export async function refreshPlannerStatistics(db: Kysely<any>): Promise<void> {
  if (engineOf(db) === 'sqlite') await sql`pragma optimize`.execute(db);
}
