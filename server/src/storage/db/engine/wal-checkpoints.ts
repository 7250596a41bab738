/**
 * SQLite's WAL checkpoints in a worker thread (wal_autocheckpoint = 0): by default a commit that crosses 1,000 pages
 * copies and syncs them itself, on the event loop (240 ms for 64 MiB). A PASSIVE checkpoint blocks no one.
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
   * Resolves once the WAL over `backlog` frames is all copied back, or after `timeoutMs`: SQLite starts the WAL over
   * only then, so a change made of many close transactions (RecycleEmpty) otherwise grows it to 1 GiB.
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
