/** Opens the metadata database (SQLite file by default, PostgreSQL with FSS_DATABASE_URL) and migrates it. */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql, type Dialect } from 'kysely';
import type { Config } from '../../../config';
import { engineOf, postgresTextPlugin } from './dialect';
import type { PostgresPool } from './postgres-dialect';
import { migrationProvider, migrations } from '../migrations';
import type { Database } from '../schema';
import { CachingSqliteDialect } from './sqlite-driver';

export const SQLITE_FILE_NAME = 'fss.sqlite';

/** How long a writer waits for another process's write lock (e.g. the CLI beside the server). */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export async function openDatabase(config: Config): Promise<Kysely<Database>> {
  const db = await openDatabaseUnmigrated(config);
  // Migrations may run (or wait for another instance's) for minutes: on PostgreSQL, over a connection without the call timeouts.
  const migrating = config.databaseUrl === undefined ? db : await openDatabaseUnmigrated({ ...config, databaseTimeoutMs: 0 });
  try {
    await migrateToLatest(migrating);
  } catch (error) {
    await db.destroy();
    throw error;
  } finally {
    if (migrating !== db) await migrating.destroy();
  }
  return db;
}

export async function closeDatabase(db: Kysely<Database>): Promise<void> {
  await db.destroy();
}

/** The database of `config` not yet migrated: `fss migrate` migrates its target only when it writes to it. */
export async function openDatabaseUnmigrated(config: Config): Promise<Kysely<Database>> {
  const { dialect, pool } = await createDialect(config);
  const db = new Kysely<Database>({ dialect, plugins: config.databaseUrl === undefined ? [] : [postgresTextPlugin] });
  if (pool) pools.set(db, pool);
  // The compiled hot queries read at once when the connection is free (prepared-query.ts).
  if (dialect instanceof CachingSqliteDialect) dialect.serveImmediateReads(db);
  return db;
}

/** The embedded SQLite file in `dataDir`, read-only and not migrated, so `fss migrate` can never change its source. */
export function openSqliteReadOnly(dataDir: string): Kysely<Database> {
  const sqlite = new SQLite(path.join(dataDir, SQLITE_FILE_NAME), { readonly: true, fileMustExist: true });
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
}

/**
 * PostgreSQL advisory lock key ("fss-migr") so instances starting at once migrate one after the other: Kysely's own
 * lock exists only once its bookkeeping tables do, and creating those races.
 */
const MIGRATION_LOCK_KEY = 0x6673732d6d696772n;

/** Applies the migrations not yet applied; returns their names (none when up to date). */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  if (engineOf(db) === 'sqlite' || db.isTransaction) return migrate(db);
  // The common case, a start on an up-to-date database, costs one query and takes no lock.
  if (await isUpToDate(db)) return [];
  // A session lock, so on one connection: the lock, the migrations and the unlock.
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(conn);
    try {
      return await migrate(conn);
    } finally {
      await sql`select pg_advisory_unlock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(conn);
    }
  });
}

/** Whether every migration is recorded as applied (false when even the record is missing). */
async function isUpToDate(db: Kysely<any>): Promise<boolean> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    const applied = new Set(rows.map((row) => row.name));
    return Object.keys(migrations).every((name) => applied.has(name));
  } catch {
    return false;
  }
}

async function migrate(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((result) => result.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String((error as Error).message ?? error)}`, {
      cause: error,
    });
  }
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/** Each PostgreSQL database's pool, by its dialect and its Kysely (for /metrics); SQLite has none. */
const pools = new WeakMap<Kysely<Database>, PostgresPool>();

/** The connections of `db`'s pool: open, idle, and requests waiting for one; null on SQLite. */
export function poolUse(db: Kysely<Database>): { readonly total: number; readonly idle: number; readonly waiting: number } | null {
  const pool = pools.get(db);
  return pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount } : null;
}

/** PostgreSQL's module (and pg with it) is loaded only by an installation that uses it. */
async function createDialect(config: Config): Promise<{ dialect: Dialect; pool?: PostgresPool }> {
  if (config.databaseUrl === undefined) return { dialect: sqliteDialect(config.dataDir) };
  return (await import('./postgres-dialect')).postgresDialect(config.databaseUrl, config);
}

function sqliteDialect(dataDir: string): Dialect {
  // 0700: the folder holds password hashes and, in the embedded default, the content itself.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const sqlite = new SQLite(path.join(dataDir, SQLITE_FILE_NAME));
  // WAL lets readers run while one writer writes, and the CLI work beside a running server.
  sqlite.pragma('journal_mode = WAL');
  // SQLite leaves foreign keys off unless asked, per connection.
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  // In WAL mode NORMAL is durable against application crashes; only a power loss can lose the
  // last transactions, never corrupt the file.
  sqlite.pragma('synchronous = NORMAL');
  // Without statistics SQLite's planner may prefer an account-wide index scan to an id lookup;
  // this gathers them where they are missing or stale (cheap: it analyzes only what needs it).
  sqlite.pragma('optimize = 0x10002');
  // Our driver (sqlite-driver.ts): Kysely's SqliteDialect with a statement cache and chunked streams.
  return new CachingSqliteDialect(sqlite);
}
