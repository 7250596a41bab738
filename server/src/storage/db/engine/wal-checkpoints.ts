/**
 * SQLite's WAL checkpoints, off the event loop. In WAL mode a commit appends pages to the `-wal`
 * file, and a checkpoint copies them back into the database file. By default the connection that
 * commits runs the checkpoint itself, inside its commit, once the WAL holds 1,000 pages: a commit
 * of 64 MiB (1,000 bin entries 256 folders deep) then copied and synced 64 MiB before returning
 * (240 ms), and any small write that happened to cross the mark paid for the pages of others.
 * better-sqlite3 runs on the event loop, so every call of every account waited as long.
 *
 * Here the service's connection never checkpoints (wal_autocheckpoint = 0). A timer reads the
 * WAL-index header (commit-stamps.ts) four times a second, and once a thousand pages or more wait,
 * a worker thread with a connection of its own runs a PASSIVE checkpoint: it copies what no reader
 * still needs, blocking neither readers nor the writer. The worker starts with the first
 * checkpoint, so a database that never writes much (a test, the CLI) never starts one. Should the
 * worker fail, the connection checkpoints for itself again, as SQLite does by default.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { WAL_INDEX_HEADER_BYTES } from './commit-stamps';

/** Pages waiting in the WAL before a checkpoint is asked for: SQLite's own default mark. */
export const CHECKPOINT_PAGES = 1_000;
const CHECK_EVERY_MS = 250;
/** How often caughtUp looks again. */
const CATCH_UP_POLL_MS = 20;

/** In the WAL index: the header's last valid frame (mxFrame), and the frames already copied back (nBackfill). */
const MX_FRAME_OFFSET = 16;
const BACKFILL_OFFSET = 2 * WAL_INDEX_HEADER_BYTES;

/** The worker: one connection, a PASSIVE checkpoint per message. CommonJS, run from a string (the bundle has no file for it). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
parentPort.on('message', () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true });
  } catch (error) {
    parentPort.postMessage({ ok: false, error: String((error && error.message) || error) });
  }
});
`;

export class WalCheckpoints {
  readonly #database: BetterSqlite3.Database;
  readonly #fd: number;
  readonly #scratch = Buffer.alloc(BACKFILL_OFFSET + 4);
  readonly #timer: NodeJS.Timeout;
  #worker: Worker | undefined;
  #running = false;
  #closed = false;

  private constructor(database: BetterSqlite3.Database, fd: number) {
    this.#database = database;
    this.#fd = fd;
    database.pragma('wal_autocheckpoint = 0');
    this.#timer = setInterval(() => this.#check(), CHECK_EVERY_MS);
    this.#timer.unref();
  }

  /** Checkpoints for a database file in WAL mode; null otherwise (in memory, read-only, another journal). */
  static of(database: BetterSqlite3.Database): WalCheckpoints | null {
    if (database.memory || database.readonly) return null;
    if (String(database.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return null;
    try {
      return new WalCheckpoints(database, openSync(`${database.name}-shm`, 'r'));
    } catch {
      return null;
    }
  }

  /** Frames in the WAL not yet copied back, or null when the index cannot be read. */
  pendingPages(): number | null {
    const frames = this.#read();
    return frames && Math.max(0, frames.last - frames.backfilled);
  }

  /** The WAL's last valid frame (mxFrame) and the frames already copied back (nBackfill), or null. */
  #read(): { last: number; backfilled: number } | null {
    let length: number;
    try {
      length = readSync(this.#fd, this.#scratch, 0, this.#scratch.length, 0);
    } catch {
      return null;
    }
    if (length !== this.#scratch.length) return null;
    const little = os.endianness() === 'LE';
    const read = (offset: number) => (little ? this.#scratch.readUInt32LE(offset) : this.#scratch.readUInt32BE(offset));
    return { last: read(MX_FRAME_OFFSET), backfilled: read(BACKFILL_OFFSET) };
  }

  /**
   * When the WAL holds more than `backlog` frames, resolves once all are copied back (asking for
   * checkpoints meanwhile, whatever their number), or after `timeoutMs`; at once otherwise, and
   * when the index cannot be read or the checkpoints are no longer ours. For a change made of many
   * transactions: SQLite starts the WAL over only in a transaction that begins with all of it
   * copied back, which transactions that follow each other closely never do; the WAL then grows
   * by what every one of them writes (a RecycleEmpty of 100,000 items made it 1 GiB, where one
   * transaction took 60 MiB). Once this resolves, the next transaction starts it over.
   */
  async caughtUp(backlog: number, timeoutMs: number): Promise<void> {
    const frames = this.#read();
    if (frames === null || frames.last <= backlog) return;
    const deadline = performance.now() + timeoutMs;
    while (!this.#closed && performance.now() < deadline) {
      const pending = this.pendingPages();
      if (pending === null || pending === 0) return;
      this.#checkpoint();
      await new Promise((resolve) => setTimeout(resolve, CATCH_UP_POLL_MS));
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#worker?.terminate();
    closeSync(this.#fd);
  }

  #check(): void {
    if (this.#closed || this.#running) return;
    const pending = this.pendingPages();
    if (pending === null || pending < CHECKPOINT_PAGES) return;
    this.#checkpoint();
  }

  /** Asks the worker for a checkpoint, unless one is under way. */
  #checkpoint(): void {
    if (this.#closed || this.#running) return;
    try {
      this.#running = true;
      (this.#worker ??= this.#startWorker()).postMessage('checkpoint');
    } catch {
      this.#giveUp();
    }
  }

  #startWorker(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file: this.#database.name } });
    worker.unref();
    worker.on('message', (answer: { ok: boolean }) => {
      this.#running = false;
      if (!answer.ok) this.#giveUp();
    });
    worker.on('error', () => this.#giveUp());
    return worker;
  }

  /** The worker cannot checkpoint: the connection does it itself again, as by default. */
  #giveUp(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    void this.#worker?.terminate();
    closeSync(this.#fd);
    if (this.#database.open) this.#database.pragma(`wal_autocheckpoint = ${CHECKPOINT_PAGES}`);
  }
}
