/**
 * Commit stamps (storage/db/engine/commit-stamps.ts): the WAL-index header of an SQLite file, read from
 * its `-shm` file, is the same between two readings exactly when nothing committed between them,
 * from this connection, another one, or another process. And what the account's version keeps by
 * it (hot-queries.ts accountVersion) is read again after any commit.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CommitStamps, WAL_INDEX_HEADER_BYTES } from '../../src/storage/db/engine/commit-stamps';
import { accountVersion } from '../../src/storage/db/engine/hot-queries';
import { openTestServices, tempDir } from '../helpers/database';
import { testAccount } from '../helpers/listing-fixtures';
import { testEngine } from '../helpers/postgres';

/** A WAL-mode database with one table, and its stamps. */
function walDatabase(): { file: string; db: SQLite.Database; stamps: CommitStamps } {
  const file = path.join(tempDir(), 'stamps.sqlite');
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.exec('create table t (n integer)');
  const stamps = CommitStamps.of(db)!;
  onTestFinished(() => {
    stamps.close();
    db.close();
  });
  return { file, db, stamps };
}

describe('commit stamps', () => {
  it('stay the same while only reads run', () => {
    const { db, stamps } = walDatabase();
    const before = stamps.current()!;
    for (let i = 0; i < 10; i++) db.prepare('select count(*) from t').get();
    expect(stamps.unchangedSince(before)).toBe(true);
  });

  it('change with a commit of this connection', () => {
    const { db, stamps } = walDatabase();
    const before = stamps.current()!;
    db.prepare('insert into t values (1)').run();
    expect(stamps.unchangedSince(before)).toBe(false);
  });

  it('change with a commit of another connection', () => {
    const { file, stamps } = walDatabase();
    const before = stamps.current()!;
    const other = new SQLite(file);
    other.prepare('insert into t values (1)').run();
    other.close();
    expect(stamps.unchangedSince(before)).toBe(false);
  });

  it('change with a commit of another process', () => {
    const { file, stamps } = walDatabase();
    const before = stamps.current()!;
    const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    const script = `const D = require(${JSON.stringify(betterSqlite)}); const d = new D(process.argv[1]); d.prepare('insert into t values (2)').run(); d.close();`;
    execFileSync(process.execPath, ['-e', script, file]);
    expect(stamps.unchangedSince(before)).toBe(false);
  });

  it('stay the same when a transaction is rolled back', () => {
    const { db, stamps } = walDatabase();
    const before = stamps.current()!;
    db.exec('begin');
    db.prepare('insert into t values (1)').run();
    db.exec('rollback');
    expect(stamps.unchangedSince(before)).toBe(true);
  });

  it('never repeat across commits, checkpoints and restarted WALs', () => {
    const { db, stamps } = walDatabase();
    const seen = new Set<string>([stamps.current()!.toString('hex')]);
    for (let i = 0; i < 300; i++) {
      db.prepare('insert into t values (?)').run(i);
      if (i % 25 === 0) db.pragma('wal_checkpoint(TRUNCATE)');
      const stamp = stamps.current()!.toString('hex');
      expect(seen.has(stamp)).toBe(false);
      seen.add(stamp);
    }
  });

  it('cannot tell while the two copies of the header differ (a commit half written)', () => {
    const indexFile = path.join(tempDir(), 'torn-shm');
    const header = Buffer.alloc(WAL_INDEX_HEADER_BYTES, 7);
    header[12] = 1;
    const other = Buffer.from(header);
    other[20] ^= 1;
    writeFileSync(indexFile, Buffer.concat([header, other, Buffer.alloc(40)]));
    const stamps = CommitStamps.ofIndexFile(indexFile)!;
    onTestFinished(() => stamps.close());
    expect(stamps.current()).toBeNull();
    expect(stamps.unchangedSince(header)).toBe(false);
    writeFileSync(indexFile, Buffer.concat([header, header, Buffer.alloc(40)]));
    expect(stamps.current()).toEqual(header);
  });

  it('cannot tell from a header not yet set up, or a file too short', () => {
    const indexFile = path.join(tempDir(), 'short-shm');
    const unset = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
    writeFileSync(indexFile, Buffer.concat([unset, unset]));
    const stamps = CommitStamps.ofIndexFile(indexFile)!;
    onTestFinished(() => stamps.close());
    expect(stamps.current()).toBeNull();
    writeFileSync(indexFile, Buffer.alloc(20));
    expect(stamps.current()).toBeNull();
  });

  it('are not offered for a database that is not in WAL mode', () => {
    const db = new SQLite(path.join(tempDir(), 'rollback-journal.sqlite'));
    const inMemory = new SQLite(':memory:');
    onTestFinished(() => {
      db.close();
      inMemory.close();
    });
    db.pragma('journal_mode = DELETE');
    expect(CommitStamps.of(db)).toBeNull();
    expect(CommitStamps.of(inMemory)).toBeNull();
  });
});

describe.runIf(testEngine() === 'sqlite')('the account version kept by commit stamps', () => {
  it('is read again after another connection commits', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    await alice.folder('Docs');
    const before = await accountVersion(services.db, alice.id);
    const other = new SQLite(path.join(services.config.dataDir, 'fss.sqlite'));
    other.prepare('update listing_versions set version = version + 5 where account_id = ?').run(alice.id);
    other.close();
    expect(await accountVersion(services.db, alice.id)).toBe(before + 5);
  });

  it('is answered at once, as committed, while this instance holds a transaction open', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    await alice.folder('Docs');
    const committed = await accountVersion(services.db, alice.id);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const transaction = services.db.transaction().execute(async (tx) => {
      await tx.updateTable('folders').set({ name: 'renamed' }).where('account_id', '=', alice.id).execute();
      inside();
      await held;
    });
    await entered;
    let answered: number | undefined;
    const read = accountVersion(services.db, alice.id).then((version) => (answered = version));
    await new Promise((resolve) => setImmediate(resolve));
    // Without a kept version the read would wait for the connection, that is for the commit.
    expect(answered).toBe(committed);
    release();
    await Promise.all([read, transaction]);
    expect(await accountVersion(services.db, alice.id)).toBeGreaterThan(committed);
  });
});
