/**
 * WAL checkpoints off the event loop (storage/db/engine/wal-checkpoints.ts): the service's own SQLite
 * connection never copies the WAL back into the database file in its commits; a worker thread
 * does it once a thousand pages wait. A change made of many transactions waits for it between
 * them when the WAL grows long, so that the WAL starts over. SQLite only ("sqliteOnly" in
 * vitest.config.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { walCaughtUp } from '../../src/storage/db/engine/sqlite-driver';
import { CHECKPOINT_PAGES } from '../../src/storage/db/engine/wal-checkpoints';
import { openTestServices } from '../helpers/database';

/** The WAL index header's last frame and the frames already copied back (commit-stamps.ts, walformat.html). */
function walIndex(dataDir: string): { frames: number; copied: number } {
  const shm = readFileSync(path.join(dataDir, 'fss.sqlite-shm'));
  return { frames: shm.readUInt32LE(16), copied: shm.readUInt32LE(96) };
}

async function writePages(db: Awaited<ReturnType<typeof openTestServices>>['db'], pages: number): Promise<void> {
  await sql`create table filler (x text)`.execute(db);
  // A row of 20,000 characters fills about five pages of 4 KiB.
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < pages / 5; i++) await sql`insert into filler values (${'y'.repeat(20_000)})`.execute(tx);
  });
}

describe('WAL checkpoints', () => {
  it('a commit copies nothing back itself; a worker checkpoints the WAL soon after', async () => {
    const services = await openTestServices();
    await writePages(services.db, 2 * CHECKPOINT_PAGES);

    const right = walIndex(services.config.dataDir);
    expect(right.frames).toBeGreaterThan(CHECKPOINT_PAGES);
    expect(right.copied).toBe(0);
    await expect.poll(() => walIndex(services.config.dataDir).copied, { timeout: 10_000, interval: 100 }).toBe(right.frames);
  });

  it('below a thousand pages waiting, nothing is checkpointed', async () => {
    const services = await openTestServices();
    await writePages(services.db, CHECKPOINT_PAGES / 4);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(walIndex(services.config.dataDir).copied).toBe(0);
  });

  it('a change made of many transactions, waiting for the checkpoints between them, keeps the WAL from growing', async () => {
    const services = await openTestServices();
    await sql`create table filler (x text)`.execute(services.db);
    // Transactions of about five pages each, one after the other, as RecycleEmpty's steps.
    const step = () => sql`insert into filler values (${'y'.repeat(20_000)})`.execute(services.db);
    let largest = 0;
    for (let i = 0; i < 200; i++) {
      await walCaughtUp(services.db, 100, 10_000);
      await step();
      largest = Math.max(largest, walIndex(services.config.dataDir).frames);
    }
    // Left alone, 200 transactions of five pages and more make some 1,000 frames (the first test).
    expect(largest).toBeLessThan(200);
  });

  it('below the backlog, there is nothing to wait for', async () => {
    const services = await openTestServices();
    await writePages(services.db, 50);
    const before = walIndex(services.config.dataDir);
    await walCaughtUp(services.db, 1_000, 10_000);
    expect(walIndex(services.config.dataDir)).toEqual(before);
  });
});
