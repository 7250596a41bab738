import { existsSync } from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { describe, expect, onTestFinished, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config';
import { closeDatabase, migrateToLatest, openDatabase } from '../../src/storage/db/engine/database';
import { engineOf } from '../../src/storage/db/engine/dialect';
import { migrations } from '../../src/storage/db/migrations';
import { openTestServices, testConfig } from '../helpers/database';
import { createEmptyDatabase, testEngine } from '../helpers/postgres';

const onSqlite = testEngine() === 'sqlite';
const onPostgres = testEngine() === 'postgres';

/** The schema as the engine describes it: every table's columns and every index, in a stable order. */
async function schemaOf(db: Kysely<any>): Promise<unknown[]> {
  if (engineOf(db) === 'sqlite') return (await sql<{ sql: string }>`select sql from sqlite_master order by name`.execute(db)).rows;
  const columns = await sql`
    select table_name, column_name, data_type, is_nullable, column_default, collation_name
    from information_schema.columns where table_schema = 'public' order by table_name, column_name`.execute(db);
  const indexes = await sql`select indexname, indexdef from pg_indexes where schemaname = 'public' order by indexname`.execute(db);
  return [...columns.rows, ...indexes.rows];
}

describe('database and migrations', () => {
  test('opening applies every migration', async () => {
    const { db } = await openTestServices();
    const applied = await db.selectFrom('kysely_migration' as never).select('name' as never).execute();
    expect(applied.map((row) => (row as { name: string }).name)).toEqual(Object.keys(migrations));
  });

  test('running the migrations again changes nothing', async () => {
    const { db } = await openTestServices();
    const before = await schemaOf(db);
    expect(before.length).toBeGreaterThan(20);
    expect(await migrateToLatest(db)).toEqual([]);
    expect(await schemaOf(db)).toEqual(before);
  });

  test('reopening an existing database keeps its data', async () => {
    const config = testConfig();
    const first = await openDatabase(config);
    await first.insertInto('accounts').values({ name: 'a', name_key: 'a', password_hash: 'x', quota_bytes: 1, created_at: 0 }).execute();
    await closeDatabase(first);
    const second = await openDatabase(config);
    expect(await second.selectFrom('accounts').select('name').execute()).toEqual([{ name: 'a' }]);
    await closeDatabase(second);
  });

  test('ids, sizes, times, counts and sums read as numbers, flags as 0/1', async () => {
    const { db } = await openTestServices();
    const big = 2 ** 52 + 1;
    const account = await db
      .insertInto('accounts')
      .values({ name: 'a', name_key: 'a', password_hash: 'x', quota_bytes: big, created_at: 1_767_225_600_123 })
      .returning(['id', 'quota_bytes', 'used_bytes', 'created_at'])
      .executeTakeFirstOrThrow();
    expect(account).toEqual({ id: 1001, quota_bytes: big, used_bytes: 0, created_at: 1_767_225_600_123 });
    await db.insertInto('content').values({ sha256: 'a'.repeat(64), size: 3, storage_key: 'k', created_at: 0 }).execute();
    const content = await db.selectFrom('content').select(['id', 'size', 'encrypted']).executeTakeFirstOrThrow();
    expect(content).toEqual({ id: 1, size: 3, encrypted: 0 });
    const totals = await db
      .selectFrom('accounts')
      .select((eb) => [eb.fn.countAll().as('n'), eb.fn.sum('quota_bytes').as('total'), eb.fn.max('created_at').as('newest')])
      .executeTakeFirstOrThrow();
    expect(totals).toEqual({ n: 1, total: big, newest: 1_767_225_600_123 });
    // Streamed rows (listings read through a cursor on PostgreSQL) have the same shape.
    const streamed = [];
    for await (const row of db.selectFrom('accounts').select(['id', 'quota_bytes']).stream()) streamed.push(row);
    expect(streamed).toEqual([{ id: 1001, quota_bytes: big }]);
  });
});

describe('configuration', () => {
  test('FSS_DATABASE_URL chooses PostgreSQL; without it the SQLite file; the pool size defaults to 10', () => {
    expect(loadConfig({}).databaseUrl).toBeUndefined();
    expect(loadConfig({}).databasePoolSize).toBe(10);
    const config = loadConfig({ FSS_DATABASE_URL: 'postgres://fss:secret@db.example.com:5432/fss', FSS_DATABASE_POOL_SIZE: '25' });
    expect(config.databaseUrl).toBe('postgres://fss:secret@db.example.com:5432/fss');
    expect(config.databasePoolSize).toBe(25);
    expect(loadConfig({ FSS_DATABASE_URL: 'postgresql://db/fss' }).databaseUrl).toBe('postgresql://db/fss');
  });

  test('a database URL that is not postgres:// is refused without repeating it (it may hold a password)', () => {
    for (const url of ['mysql://fss:secret@db/fss', 'not a url secret']) {
      expect(() => loadConfig({ FSS_DATABASE_URL: url })).toThrow(ConfigError);
      try {
        loadConfig({ FSS_DATABASE_URL: url });
      } catch (error) {
        expect(String(error)).not.toContain('secret');
      }
    }
    expect(() => loadConfig({ FSS_DATABASE_POOL_SIZE: '0' })).toThrow(ConfigError);
  });
});

describe.runIf(onSqlite)('SQLite', () => {
  test('the SQLite file is fss.sqlite in the data folder, which is created if missing', async () => {
    const config = testConfig();
    const dataDir = path.join(config.dataDir, 'nested', 'data');
    const db = await openDatabase({ ...config, dataDir });
    await closeDatabase(db);
    expect(existsSync(path.join(dataDir, 'fss.sqlite'))).toBe(true);
  });

  test('SQLite runs in WAL mode with foreign keys enforced', async () => {
    const { db } = await openTestServices();
    expect((await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db)).rows[0].journal_mode).toBe('wal');
    expect((await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)).rows[0].foreign_keys).toBe(1);
    expect((await sql<{ timeout: number }>`pragma busy_timeout`.execute(db)).rows[0].timeout).toBeGreaterThan(0);
    // NORMAL = 1
    expect((await sql<{ synchronous: number }>`pragma synchronous`.execute(db)).rows[0].synchronous).toBe(1);
  });
});

describe.runIf(onPostgres)('PostgreSQL', () => {
  test('three instances starting at once on an empty database migrate it once, and all start', async () => {
    const empty = await createEmptyDatabase();
    onTestFinished(() => empty.drop());
    const config = testConfig({ databaseUrl: empty.url });
    const dbs = await Promise.all([openDatabase(config), openDatabase(config), openDatabase(config)]);
    onTestFinished(async () => {
      await Promise.all(dbs.map(closeDatabase));
    });
    const applied = await dbs[0].selectFrom('kysely_migration' as never).select('name' as never).execute();
    expect(applied.map((row) => (row as { name: string }).name)).toEqual(Object.keys(migrations));
    for (const db of dbs) expect(await db.selectFrom('accounts').select('id').execute()).toEqual([]);
    // And a fourth, later, finds nothing to do.
    expect(await migrateToLatest(dbs[1])).toEqual([]);
  });

  test('the data folder holds no SQLite file', async () => {
    const { config } = await openTestServices();
    expect(existsSync(path.join(config.dataDir, 'fss.sqlite'))).toBe(false);
  });

  test('file names are indexed for search by a pg_trgm GIN index; sort keys compare by code point', async () => {
    const { db } = await openTestServices();
    const index = await sql<{ indexdef: string }>`select indexdef from pg_indexes where indexname = 'files_name_key_trgm'`.execute(db);
    expect(index.rows[0]?.indexdef).toMatch(/USING gin \(name_key gin_trgm_ops\)/);
    const collations = await sql<{ table_name: string; collation_name: string }>`
      select table_name, collation_name from information_schema.columns
      where table_schema = 'public' and column_name = 'sort_key' order by table_name`.execute(db);
    expect(collations.rows).toEqual([
      { table_name: 'files', collation_name: 'C' },
      { table_name: 'folders', collation_name: 'C' },
    ]);
  });
});

describe('text with U+0000 (which only an HTTP form can bring)', () => {
  test('is stored, read and looked up on both engines instead of failing the statement', async () => {
    const { db } = await openTestServices();
    await db.insertInto('throttle').values({ key: 'login:?a\u0000b@203.0.113.7', failures: 1, window_start: 0 }).execute();
    const rows = await db.selectFrom('throttle').select('key').where('key', 'in', ['login:?a\u0000b@203.0.113.7']).execute();
    expect(rows).toHaveLength(1);
    expect(await db.selectFrom('shares').select('id').where('code', '=', 'abc\u0000').execute()).toEqual([]);
    expect((await sql<{ n: number }>`select count(*) as n from throttle where key = ${'login:?a\u0000b@203.0.113.7'}`.execute(db)).rows[0].n).toBe(1);
  });
});
