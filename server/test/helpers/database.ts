import { randomBytes } from 'node:crypto';
/**
 * A fresh data folder and migrated database per test, removed when the test finishes. Call these
 * inside a test or a beforeEach (they register their cleanup with onTestFinished).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { loadConfig, type Config } from '../../src/config';
import type { CallContext, Caller, Services } from '../../src/operations/context';
import { passwordHashQueue } from '../../src/operations/crypto/hash-queue';
import { callCaches } from '../../src/operations/caches';
import { prepareContentStores } from '../../src/storage/content/stores';
import { closeDatabase, openDatabase } from '../../src/storage/db/engine/database';
import { testS3SettingsOrNone } from './content';
import { perTestDatabaseUrl, testEngine } from './postgres';

/** A temporary directory, removed after the current test. */
export function tempDir(prefix = 'fss-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The default configuration, with a temporary data folder and a silent log. On PostgreSQL
 * (FSS_TEST_DATABASE=postgres) it names the test's own fresh database (helpers/postgres.ts), which
 * `fss` processes started on the same data folder use too (helpers/service-process.ts).
 */
export function testConfig(overrides: Partial<Config> = {}): Config {
  const dataDir = overrides.dataDir ?? tempDir();
  const databaseUrl = 'databaseUrl' in overrides ? overrides.databaseUrl : testEngine() === 'postgres' ? perTestDatabaseUrl(dataDir) : undefined;
  // FSS_TEST_CONTENT=s3: content under a prefix of this configuration's own (helpers/content.ts).
  return { ...loadConfig({ FSS_DATA_DIR: dataDir }), log: () => {}, s3: testS3SettingsOrNone(), ...overrides, databaseUrl };
}

/**
 * The settings (as environment variables) of the test's data folder `dataDir` and its database, for
 * what reads them itself: the `fss` command, or a process of its own (another instance).
 */
export function testEnv(dataDir: string): Record<string, string> {
  const { databaseUrl } = testConfig({ dataDir });
  return { FSS_DATA_DIR: dataDir, ...(databaseUrl === undefined ? {} : { FSS_DATABASE_URL: databaseUrl }) };
}

/** A clock that stands still until a test moves it. */
export interface TestClock {
  now(): Date;
  advance(ms: number): void;
  set(at: Date): void;
}

export function testClock(start = new Date('2026-01-01T00:00:00.000Z')): TestClock {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance: (ms) => {
      current += ms;
    },
    set: (at) => {
      current = at.getTime();
    },
  };
}

export interface TestServices extends Services {
  readonly clock: TestClock;
}

/** Services over a new, migrated database (SQLite in a temporary data folder, or PostgreSQL), on a test clock. */
export async function openTestServices(options: { config?: Partial<Config>; clock?: TestClock } = {}): Promise<TestServices> {
  const config = testConfig(options.config);
  const clock = options.clock ?? testClock();
  await prepareContentStores(config); // as buildApp does: the S3 modules, when content is in S3
  const db = await openDatabase(config);
  onTestFinished(() => closeDatabase(db));
  return { db, config, clock, now: () => clock.now(), secret: randomBytes(32), passwordHashes: passwordHashQueue(config), caches: callCaches(config) };
}

/** The context an operation receives, as the protocol layer would build it. */
export function callContext<C extends Caller | null = null>(services: Services, caller = null as C, clientAddress = '203.0.113.7'): CallContext<C> {
  return { services, caller, clientAddress, baseUrl: 'http://fss.test' };
}
