import { existsSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, test } from 'vitest';
import { closeDatabase, migrateToLatest, openDatabase } from '../../src/storage/db/database';
import { migrations } from '../../src/storage/db/migrations';
import { openTestServices, testConfig } from '../helpers/database';

describe('database and migrations', () => {
  test('the SQLite file is fss.sqlite in the data folder, which is created if missing', async () => {
    const config = testConfig();
    const dataDir = path.join(config.dataDir, 'nested', 'data');
    const db = await openDatabase({ ...config, dataDir });
    await closeDatabase(db);
    expect(existsSync(path.join(dataDir, 'fss.sqlite'))).toBe(true);
  });

  test('opening applies every migration', async () => {
    const { db } = await openTestServices();
    const applied = await db.selectFrom('kysely_migration' as never).select('name' as never).execute();
    expect(applied.map((row) => (row as { name: string }).name)).toEqual(Object.keys(migrations));
  });

  test('running the migrations again changes nothing', async () => {
    const { db } = await openTestServices();
    const schema = async () => (await sql<{ sql: string }>`select sql from sqlite_master order by name`.execute(db)).rows;
    const before = await schema();
    expect(await migrateToLatest(db)).toEqual([]);
    expect(await schema()).toEqual(before);
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

  test('SQLite runs in WAL mode with foreign keys enforced', async () => {
    const { db } = await openTestServices();
    expect((await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db)).rows[0].journal_mode).toBe('wal');
    expect((await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)).rows[0].foreign_keys).toBe(1);
    expect((await sql<{ timeout: number }>`pragma busy_timeout`.execute(db)).rows[0].timeout).toBeGreaterThan(0);
    // NORMAL = 1
    expect((await sql<{ synchronous: number }>`pragma synchronous`.execute(db)).rows[0].synchronous).toBe(1);
  });
});
