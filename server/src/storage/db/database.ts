/**
 * Opens the metadata database and brings its schema up to date. The choice of engine is made here
 * and nowhere else: the embedded default is a SQLite file in the data folder; PostgreSQL
 * (FSS_DATABASE_URL) plugs into createDialect with the same migrations and repositories.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type Dialect } from 'kysely';
import type { Config } from '../../config';
import { migrationProvider } from './migrations';
import type { Database } from './schema';

export const SQLITE_FILE_NAME = 'fss.sqlite';

/** How long a writer waits for another process's write lock (e.g. the CLI beside the server). */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export async function openDatabase(config: Config): Promise<Kysely<Database>> {
  const db = new Kysely<Database>({ dialect: createDialect(config) });
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return db;
}

export async function closeDatabase(db: Kysely<Database>): Promise<void> {
  await db.destroy();
}

/** Applies the migrations not yet applied; returns their names (none when up to date). */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
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

function createDialect(config: Config): Dialect {
  return sqliteDialect(config.dataDir);
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
  return new SqliteDialect({ database: sqlite });
}
