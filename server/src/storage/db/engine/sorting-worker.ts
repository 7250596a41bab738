/**
 * Streams SQLite must sort before their first row (or that materialize), read in a worker thread: better-sqlite3
 * does that work in the first step, on the event loop (70–200 ms for 100,000 items). A connection per open cursor, so
 * one cursor's snapshot holds no other read; rows come back a chunk per request, so memory stays at a chunk. A closed
 * cursor's connection is kept for the next with its prepared statements: opening one and preparing on it read the
 * schema again, some 3 ms a listing.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { CompiledQuery, QueryResult } from 'kysely';

/** Idle connections the worker keeps, and statements each keeps prepared (a listing's shapes are a few dozen). */
const KEPT_CONNECTIONS = 2;
const KEPT_STATEMENTS = 200;

/** The worker (CommonJS, run from a string: the bundle has no file for it): a connection and cursor per stream. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const cursors = new Map();
const idle = [];
function connection() {
  const kept = idle.pop();
  if (kept) return kept;
  const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
  return { db, statements: new Map() };
}
function close(id) {
  const cursor = cursors.get(id);
  if (!cursor) return;
  cursors.delete(id);
  try { cursor.rows.return(); } catch (error) { cursor.connection.db.close(); throw error; }
  if (idle.length < ${KEPT_CONNECTIONS}) idle.push(cursor.connection);
  else cursor.connection.db.close();
}
parentPort.on('message', (message) => {
  const { type, id } = message;
  try {
    if (type === 'next') {
      // The first request of a cursor opens it: a connection of its own, so that its snapshot is no other's.
      if (message.sql !== undefined) {
        const cursor = { connection: connection(), rows: { return() {} } };
        cursors.set(id, cursor);
        const { db, statements } = cursor.connection;
        let statement = statements.get(message.sql);
        if (!statement) {
          if (statements.size >= ${KEPT_STATEMENTS}) statements.clear();
          statements.set(message.sql, (statement = db.prepare(message.sql)));
        }
        cursor.rows = statement.iterate(message.parameters);
      }
      const cursor = cursors.get(id);
      if (!cursor) throw new Error('no such cursor');
      const rows = [];
      let done = false;
      while (rows.length < message.rows) {
        const next = cursor.rows.next();
        if (next.done) { done = true; break; }
        rows.push(next.value);
      }
      if (done) close(id);
      parentPort.postMessage({ id, rows, done });
    } else if (type === 'close') {
      close(id);
    }
  } catch (error) {
    try { close(id); } catch {}
    if (type !== 'close') parentPort.postMessage({ id, error: String((error && error.message) || error), code: error && error.code });
  }
});
`;

interface Answer {
  readonly id: number;
  readonly rows?: unknown[];
  readonly done?: boolean;
  readonly error?: string;
  readonly code?: string;
}

type Waiting = { resolve: (answer: Answer) => void; reject: (error: Error) => void };

export class SortingWorker {
  #worker: Worker | undefined;
  #nextId = 1;
  /** The request of each cursor that waits for its answer (a cursor asks for one chunk at a time). */
  readonly #waiting = new Map<number, Waiting>();
  #closed = false;

  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs: number,
  ) {}

  /** The rows of `query`, `chunkRows` at a time, read in the worker. */
  async *stream<R>(query: CompiledQuery, chunkRows: number): AsyncIterableIterator<QueryResult<R>> {
    const worker = this.#started();
    const id = this.#nextId++;
    const rows = Math.max(1, Math.floor(chunkRows));
    let done = false;
    try {
      for (let first = true; !done; first = false) {
        const answer = await this.#ask(worker, first ? { type: 'next', id, rows, sql: query.sql, parameters: query.parameters } : { type: 'next', id, rows });
        done = answer.done === true;
        if (answer.rows && answer.rows.length > 0) yield { rows: answer.rows as R[] };
      }
    } finally {
      // A reader that stops early: the worker closes the cursor and its connection (after an error it has).
      if (!done && this.#worker === worker) worker.postMessage({ type: 'close', id });
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failAll(new Error('the database is closed'));
    await worker?.terminate();
  }

  #started(): Worker {
    if (this.#closed) throw new Error('the database is closed');
    if (this.#worker) return this.#worker;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file: this.file, busyTimeoutMs: this.busyTimeoutMs } });
    // Only a stream that waits for it keeps the process alive (#ask).
    worker.unref();
    worker.on('message', (answer: Answer) => {
      const waiting = this.#waiting.get(answer.id);
      if (!waiting) return;
      this.#waiting.delete(answer.id);
      if (this.#waiting.size === 0) worker.unref();
      if (answer.error === undefined) waiting.resolve(answer);
      else waiting.reject(Object.assign(new Error(answer.error), answer.code ? { code: answer.code } : {}));
    });
    const fail = (error: Error) => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the sorting worker stopped (exit code ${code})`)));
    this.#worker = worker;
    return worker;
  }

  /** Sends a request for the next chunk of a cursor (the first one opens it) and waits for its answer. */
  #ask(worker: Worker, message: { type: 'next'; id: number; rows: number; sql?: string; parameters?: readonly unknown[] }): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      this.#waiting.set(message.id, { resolve, reject });
      worker.ref();
      worker.postMessage(message);
    });
  }

  #failAll(error: Error): void {
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const { reject } of waiting) reject(error);
  }
}
