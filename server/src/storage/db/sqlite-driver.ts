/**
 * The SQLite dialect of the embedded installation: Kysely's own SqliteDialect (its query compiler,
 * adapter and introspector) over a driver of ours, which differs from Kysely's SqliteDriver in two
 * ways that matter on the path of every call (bench/README.md, "Call throughput"):
 *
 * - Prepared statements are kept, by SQL text, in a bounded LRU cache. Kysely's driver prepares
 *   every statement on every call, which cost about as much as running it. A cached statement is
 *   safe to reuse: the one connection runs one statement at a time (the mutex below), and SQLite
 *   re-prepares a statement by itself when the schema changes under it.
 * - A stream reads its rows synchronously, `chunkSize` rows per iteration, instead of one row per
 *   `await`: a listing of 1,000 rows is one step of the event loop, not 1,000.
 *
 * What stays as in Kysely: SQLite has one connection, held by one user at a time behind a mutex.
 * A transaction holds it from `begin` to `commit`/`rollback`, so nothing else runs inside another's
 * transaction; a stream holds it while it is open, because an open better-sqlite3 iterator blocks
 * every other statement on the connection.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { CommitStamps } from './commit-stamps';
import { WalCheckpoints } from './wal-checkpoints';
import {
  CompiledQuery,
  IdentifierNode,
  RawNode,
  createQueryId,
  SqliteDialect,
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';

/** How many prepared statements are kept. The service runs a few hundred distinct statements at most. */
export const STATEMENT_CACHE_SIZE = 500;

/** Rows read per stream iteration when the reader does not say (Kysely's stream() default is 100). */
const DEFAULT_CHUNK_ROWS = 100;

/** SqliteDialect with our driver: `new CachingSqliteDialect(database)`. */
export class CachingSqliteDialect extends SqliteDialect {
  readonly #database: BetterSqlite3.Database;
  readonly #cacheSize: number;

  constructor(database: BetterSqlite3.Database, cacheSize = STATEMENT_CACHE_SIZE) {
    super({ database });
    this.#database = database;
    this.#cacheSize = cacheSize;
  }

  #driver: CachingSqliteDriver | undefined;

  override createDriver(): Driver {
    this.#driver = new CachingSqliteDriver(this.#database, this.#cacheSize);
    return this.#driver;
  }

  /**
   * Lets `db` (the Kysely instance made with this dialect) run reads at once (immediateRows).
   * Only that instance: another one over the same database (withPlugin, a transaction) has plugins
   * or a connection of its own, and goes through Kysely as usual.
   */
  serveImmediateReads(db: object): void {
    if (!this.#driver) throw new Error('the dialect has no driver yet: make the Kysely instance first');
    immediateReaders.set(db, this.#driver);
  }
}

/** The drivers whose Kysely instance may run reads at once (CachingSqliteDialect.serveImmediateReads). */
const immediateReaders = new WeakMap<object, CachingSqliteDriver>();

/**
 * The rows of `query` run now, synchronously, when `db` allows it (serveImmediateReads), the
 * statement only reads, and the connection is free: no transaction open, no stream reading. That is
 * exactly what running it through Kysely would do (the connection taken and given back, no plugin,
 * no result transformation on SQLite), without the round trip of promises that costs more than a
 * small read itself on the path of every call. Undefined otherwise: run it through Kysely then.
 */
export function immediateRows<R>(db: object, query: CompiledQuery): R[] | undefined {
  return immediateReaders.get(db)?.readNow<R>(query);
}

/**
 * The commit stamps (commit-stamps.ts) of the database `db` reads, when `db` is an instance that
 * reads at once (serveImmediateReads) over a file in WAL mode; null otherwise. Never for a
 * transaction: inside one, its own uncommitted changes count and no stamp shows them.
 */
export function commitStampsOf(db: object): CommitStamps | null {
  return immediateReaders.get(db)?.commitStamps ?? null;
}

/**
 * Whether another user waits for the one connection of the SQLite database `db` reads (an instance
 * that reads at once: serveImmediateReads); false elsewhere (PostgreSQL has a pool). A long reader
 * (a listing's cursor) lets go of the connection between chunks when it is wanted.
 */
export function connectionWanted(db: object): boolean {
  return immediateReaders.get(db)?.connectionWanted ?? false;
}

/**
 * Prepared statements by SQL text, least recently used first (a Map keeps insertion order; a hit
 * moves its entry to the end). Evicted statements are simply dropped: better-sqlite3 finalizes them
 * when they are collected.
 */
export class StatementCache {
  readonly #statements = new Map<string, BetterSqlite3.Statement>();

  constructor(
    private readonly database: BetterSqlite3.Database,
    private readonly capacity: number,
  ) {}

  get size(): number {
    return this.#statements.size;
  }

  statement(sqlText: string): BetterSqlite3.Statement {
    const cached = this.#statements.get(sqlText);
    if (cached) {
      this.#statements.delete(sqlText);
      this.#statements.set(sqlText, cached);
      return cached;
    }
    const prepared = this.database.prepare(sqlText);
    if (this.capacity <= 0) return prepared;
    if (this.#statements.size >= this.capacity) {
      const oldest = this.#statements.keys().next().value as string;
      this.#statements.delete(oldest);
    }
    this.#statements.set(sqlText, prepared);
    return prepared;
  }
}

class CachingSqliteDriver implements Driver {
  readonly #database: BetterSqlite3.Database;
  readonly #connection: CachingSqliteConnection;
  readonly #mutex = new ConnectionMutex();
  readonly commitStamps: CommitStamps | null;
  /** WAL checkpoints in a worker thread, never in a commit of ours (wal-checkpoints.ts). */
  readonly #checkpoints: WalCheckpoints | null;

  constructor(database: BetterSqlite3.Database, cacheSize: number) {
    this.#database = database;
    this.#connection = new CachingSqliteConnection(new StatementCache(database, cacheSize));
    this.commitStamps = CommitStamps.of(database);
    this.#checkpoints = WalCheckpoints.of(database);
  }

  async init(): Promise<void> {}

  /** See connectionWanted. */
  get connectionWanted(): boolean {
    return this.#mutex.wanted;
  }

  /** See immediateRows. */
  readNow<R>(query: CompiledQuery): R[] | undefined {
    if (this.#mutex.held) return undefined;
    return this.#connection.readNow<R>(query);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock();
    return this.#connection;
  }

  async releaseConnection(): Promise<void> {
    this.#mutex.unlock();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(savepointCommand('savepoint', name), createQueryId()));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(savepointCommand('rollback to', name), createQueryId()));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(savepointCommand('release', name), createQueryId()));
  }

  async destroy(): Promise<void> {
    this.commitStamps?.close();
    await this.#checkpoints?.close();
    this.#database.close();
  }
}

/** `savepoint "name"` and the like, the name quoted by the compiler (as Kysely's own driver does). */
function savepointCommand(command: string, name: string): RawNode {
  return RawNode.createWithChildren([RawNode.createWithSql(`${command} `), IdentifierNode.create(name)]);
}

class CachingSqliteConnection implements DatabaseConnection {
  constructor(private readonly statements: StatementCache) {}

  /** The rows of a statement that reads; undefined for one that writes. */
  readNow<R>(compiledQuery: CompiledQuery): R[] | undefined {
    const statement = this.statements.statement(compiledQuery.sql);
    return statement.reader ? (statement.all(compiledQuery.parameters as unknown[]) as R[]) : undefined;
  }

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const statement = this.statements.statement(compiledQuery.sql);
    const parameters = compiledQuery.parameters as unknown[];
    if (statement.reader) return Promise.resolve({ rows: statement.all(parameters) as R[] });
    const { changes, lastInsertRowid } = statement.run(parameters);
    return Promise.resolve({
      numAffectedRows: changes === undefined || changes === null ? undefined : BigInt(changes),
      insertId: lastInsertRowid === undefined || lastInsertRowid === null ? undefined : BigInt(lastInsertRowid),
      rows: [],
    });
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize = DEFAULT_CHUNK_ROWS): AsyncIterableIterator<QueryResult<R>> {
    const statement = this.statements.statement(compiledQuery.sql);
    // Only a statement that returns rows can be streamed (a select, or an insert … returning).
    if (!statement.reader) throw new Error('the SQLite driver streams queries that return rows only');
    const rowsPerChunk = Math.max(1, Math.floor(chunkSize));
    const rows = statement.iterate(compiledQuery.parameters as unknown[]) as IterableIterator<R>;
    try {
      for (;;) {
        const chunk: R[] = [];
        let next = rows.next();
        while (!next.done) {
          chunk.push(next.value);
          if (chunk.length === rowsPerChunk) break;
          next = rows.next();
        }
        if (chunk.length > 0) yield { rows: chunk };
        if (next.done) return;
      }
    } finally {
      // Closes the statement's cursor when the reader stops early, so the connection is free again.
      rows.return?.();
    }
  }
}

/** One holder at a time, in the order they asked (as Kysely's own SQLite mutex). */
class ConnectionMutex {
  #held = false;
  readonly #waiting: Array<() => void> = [];

  get held(): boolean {
    return this.#held;
  }

  /** Whether anyone waits for it. */
  get wanted(): boolean {
    return this.#waiting.length > 0;
  }

  lock(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  unlock(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}
