/**
 * Kysely's SqliteDialect over a driver of ours (docs/design.md, "The database"): a writer and a read-only reader,
 * so a long write does not stop other accounts' reads (WAL); prepared statements kept per connection (Kysely
 * prepares on every call); streams read a chunk per iteration, and streams that sort go to a worker thread.
 * A transaction holds the writer from begin to commit; a read outside one takes whichever connection is free.
 */
import SQLite from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { CommitStamps } from './commit-stamps';
import { SortingWorker } from './sorting-worker';
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
import { Lru } from '../../../lru';

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

/** Lets `db` (this dialect's own instance, not a transaction or withPlugin) run reads at once (immediateRows). */
  serveImmediateReads(db: object): void {
    if (!this.#driver) throw new Error('the dialect has no driver yet: make the Kysely instance first');
    immediateReaders.set(db, this.#driver);
  }
}

/** The drivers whose Kysely instance may run reads at once (CachingSqliteDialect.serveImmediateReads). */
const immediateReaders = new WeakMap<object, CachingSqliteDriver>();

/**
 * The rows of a read-only `query` run synchronously when `db` allows it and a connection is free, as Kysely would
 * run it, without the promise round trip that costs more than a small read; undefined otherwise.
 */
export function immediateRows<R>(db: object, query: CompiledQuery): R[] | undefined {
  return immediateReaders.get(db)?.readNow<R>(query);
}

/** The commit stamps of `db`'s file in WAL mode; never for a transaction, whose own uncommitted changes count. */
export function commitStampsOf(db: object): CommitStamps | null {
  return immediateReaders.get(db)?.commitStamps ?? null;
}

/** Whether another read waits for `db`'s reader, so that a long reader (a listing's cursor) lets go between chunks. */
export function connectionWanted(db: object): boolean {
  return immediateReaders.get(db)?.connectionWanted ?? false;
}

/** Resolves once `db`'s WAL is checkpointed when it holds more than `backlog` frames, or after `timeoutMs`. */
export function walCaughtUp(db: object, backlog: number, timeoutMs: number): Promise<void> {
  return immediateReaders.get(db)?.walCaughtUp(backlog, timeoutMs) ?? Promise.resolve();
}

/** Prepared statements by SQL text, least recently used evicted (better-sqlite3 finalizes them when collected). */
export class StatementCache {
  readonly #statements: Lru<string, BetterSqlite3.Statement>;

  constructor(
    private readonly database: BetterSqlite3.Database,
    capacity: number,
  ) {
    this.#statements = new Lru(Math.max(0, capacity));
  }

  /** The statement of `sqlText`; one that returns rows answers arrays (rowOf makes them objects). */
  statement(sqlText: string): BetterSqlite3.Statement {
    let statement = this.#statements.get(sqlText);
    if (!statement) {
      statement = this.database.prepare(sqlText);
      if (statement.reader) statement.raw(true);
      this.#statements.set(sqlText, statement);
    }
    return statement;
  }
}

const columnNames = new WeakMap<BetterSqlite3.Statement, readonly string[]>();

/**
 * A row read raw, as the object Kysely expects: better-sqlite3 builds row objects through V8's API at
 * about twice the cost of arrays and this loop (a 100-row listing: 420 → 320 µs).
 */
function rowOf<R>(statement: BetterSqlite3.Statement, values: readonly unknown[]): R {
  let names = columnNames.get(statement);
  if (!names) columnNames.set(statement, (names = statement.columns().map((column) => column.name)));
  const row: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) row[names[i]] = values[i];
  return row as R;
}

const rowsOf = <R>(statement: BetterSqlite3.Statement, rows: readonly unknown[][]): R[] => rows.map((values) => rowOf<R>(statement, values));

class CachingSqliteDriver implements Driver {
  readonly #writer: SqliteConnection;
  /** The read-only connection; the writer itself where there is none. */
  readonly #reader: SqliteConnection;
  readonly commitStamps: CommitStamps | null;
  /** WAL checkpoints in a worker thread, never in a commit of ours (wal-checkpoints.ts). */
  readonly #checkpoints: WalCheckpoints | null;
  /** Streams that sort, read in a worker thread (sorting-worker.ts); null without a reader. */
  readonly #sorter: SortingWorker | null;
  /** Whether a statement of the reader sorts before its first row (its plan, read once). */
  readonly #sorts = new WeakMap<BetterSqlite3.Statement, boolean>();

  constructor(database: BetterSqlite3.Database, cacheSize: number) {
    this.#writer = new SqliteConnection(database, cacheSize);
    const reader = openReader(database);
    this.#reader = reader ? new SqliteConnection(reader, cacheSize) : this.#writer;
    this.#sorter = reader ? new SortingWorker(database.name, Number(database.pragma('busy_timeout', { simple: true }))) : null;
    this.commitStamps = CommitStamps.of(database);
    this.#checkpoints = WalCheckpoints.of(database);
  }

  async init(): Promise<void> {}

  /** See connectionWanted: only readers wait for the reader (streams live there). */
  get connectionWanted(): boolean {
    return this.#reader.mutex.wanted;
  }

  /** See walCaughtUp. */
  walCaughtUp(backlog: number, timeoutMs: number): Promise<void> {
    return this.#checkpoints?.caughtUp(backlog, timeoutMs) ?? Promise.resolve();
  }

  /** See immediateRows. */
  readNow<R>(query: CompiledQuery): R[] | undefined {
    if (!this.readsOnly(query.sql)) return undefined;
    const free = this.freeForRead();
    return free?.rows<R>(query);
  }

/** Whether `sqlText` only reads; pragmas go to the writer whatever SQLite says (`pragma optimize` analyzes). */
  readsOnly(sqlText: string): boolean {
    return READ_STATEMENT.test(sqlText) && this.#reader.statements.statement(sqlText).readonly;
  }

/** The sorting worker when SQLite's plan sorts or materializes before the first row (so the event loop is not held). */
  sorterFor(query: CompiledQuery): SortingWorker | null {
    if (!this.#sorter) return null;
    const statement = this.#reader.statements.statement(query.sql);
    let sorts = this.#sorts.get(statement);
    if (sorts === undefined) {
      const plan = this.#reader.database.prepare(`explain query plan ${query.sql}`).all(query.parameters as unknown[]) as Array<{ detail: string }>;
      sorts = plan.some((step) => /\bUSE TEMP B-TREE\b|\bMATERIALIZE\b/.test(step.detail));
      this.#sorts.set(statement, sorts);
    }
    return sorts ? this.#sorter : null;
  }

  /** The connection a read may run on now, reader first; undefined while both are held. */
  freeForRead(): SqliteConnection | undefined {
    if (!this.#reader.mutex.held) return this.#reader;
    if (!this.#writer.mutex.held) return this.#writer;
    return undefined;
  }

  get writer(): SqliteConnection {
    return this.#writer;
  }

  get reader(): SqliteConnection {
    return this.#reader;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as RoutedConnection).release();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).begin();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    (connection as RoutedConnection).commit();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    (connection as RoutedConnection).rollback();
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
    await this.#sorter?.close();
    if (this.#reader !== this.#writer) this.#reader.database.close();
    this.#writer.database.close();
  }
}

/** What may go to the reader: statements that begin as a query does (SQLite then says whether it only reads). */
const READ_STATEMENT = /^\s*(select|with)\b/i;

/** A read-only connection to `database`'s file when it is in WAL mode (a reader then sees what was committed). */
function openReader(database: BetterSqlite3.Database): BetterSqlite3.Database | null {
  if (database.memory || database.readonly) return null;
  if (String(database.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return null;
  const reader = new SQLite(database.name, { readonly: true, fileMustExist: true });
  reader.pragma(`busy_timeout = ${Number(database.pragma('busy_timeout', { simple: true }))}`);
  return reader;
}

/** `savepoint "name"` and the like, the name quoted by the compiler (as Kysely's own driver does). */
function savepointCommand(command: string, name: string): RawNode {
  return RawNode.createWithChildren([RawNode.createWithSql(`${command} `), IdentifierNode.create(name)]);
}

/** One better-sqlite3 connection, its prepared statements, and whose turn it is. */
class SqliteConnection {
  readonly statements: StatementCache;
  readonly mutex = new ConnectionMutex();

  constructor(
    readonly database: BetterSqlite3.Database,
    cacheSize: number,
  ) {
    this.statements = new StatementCache(database, cacheSize);
  }

  rows<R>(compiledQuery: CompiledQuery): R[] {
    const statement = this.statements.statement(compiledQuery.sql);
    return rowsOf<R>(statement, statement.all(compiledQuery.parameters as unknown[]) as unknown[][]);
  }

  run<R>(compiledQuery: CompiledQuery): QueryResult<R> {
    const statement = this.statements.statement(compiledQuery.sql);
    const parameters = compiledQuery.parameters as unknown[];
    if (statement.reader) return { rows: rowsOf<R>(statement, statement.all(parameters) as unknown[][]) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return {
      numAffectedRows: changes === undefined || changes === null ? undefined : BigInt(changes),
      insertId: lastInsertRowid === undefined || lastInsertRowid === null ? undefined : BigInt(lastInsertRowid),
      rows: [],
    };
  }

  /** Runs a command (begin, commit, rollback) on this connection. */
  command(sqlText: string): void {
    this.statements.statement(sqlText).run();
  }

  async *stream<R>(compiledQuery: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    const statement = this.statements.statement(compiledQuery.sql);
    // Only a statement that returns rows can be streamed (a select, or an insert … returning).
    if (!statement.reader) throw new Error('the SQLite driver streams queries that return rows only');
    const rowsPerChunk = Math.max(1, Math.floor(chunkSize));
    const rows = statement.iterate(compiledQuery.parameters as unknown[]) as IterableIterator<unknown[]>;
    try {
      for (;;) {
        const chunk: R[] = [];
        let next = rows.next();
        while (!next.done) {
          chunk.push(rowOf<R>(statement, next.value));
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

/** What Kysely gets from acquireConnection: a connection taken statement by statement, or the writer for a transaction. */
class RoutedConnection implements DatabaseConnection {
  /** Whether this holds the writer for a transaction (begin to commit or rollback). */
  #inTransaction = false;

  constructor(private readonly driver: CachingSqliteDriver) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const { writer, reader } = this.driver;
    if (this.#inTransaction) return writer.run<R>(compiledQuery);
    if (this.driver.readsOnly(compiledQuery.sql)) {
      const free = this.driver.freeForRead();
      if (free) return free.run<R>(compiledQuery);
      return inTurn(reader, () => reader.run<R>(compiledQuery));
    }
    if (!writer.mutex.held) return writer.run<R>(compiledQuery);
    return inTurn(writer, () => writer.run<R>(compiledQuery));
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize = DEFAULT_CHUNK_ROWS): AsyncIterableIterator<QueryResult<R>> {
    const { writer, reader } = this.driver;
    if (this.#inTransaction) {
      yield* writer.stream<R>(compiledQuery, chunkSize);
      return;
    }
    const readsOnly = this.driver.readsOnly(compiledQuery.sql);
    const sorter = readsOnly ? this.driver.sorterFor(compiledQuery) : null;
    if (sorter) {
      yield* sorter.stream<R>(compiledQuery, chunkSize);
      return;
    }
    const connection = readsOnly ? reader : writer;
    await connection.mutex.lock();
    try {
      yield* connection.stream<R>(compiledQuery, chunkSize);
    } finally {
      connection.mutex.unlock();
    }
  }

  async begin(): Promise<void> {
    const { writer } = this.driver;
    await writer.mutex.lock();
    try {
      writer.command('begin');
    } catch (error) {
      writer.mutex.unlock();
      throw error;
    }
    this.#inTransaction = true;
  }

  /** Commits; the writer stays held when the commit fails, for the rollback Kysely sends next. */
  commit(): void {
    this.driver.writer.command('commit');
    this.#endTransaction();
  }

  rollback(): void {
    const { writer } = this.driver;
    try {
      // SQLite may have rolled back already (a failed commit of some kinds): nothing is open then.
      if (writer.database.inTransaction) writer.command('rollback');
    } finally {
      this.#endTransaction();
    }
  }

  /** Kysely is done with this connection: a transaction still open (none should be) is rolled back. */
  release(): void {
    if (this.#inTransaction) this.rollback();
  }

  #endTransaction(): void {
    if (!this.#inTransaction) return;
    this.#inTransaction = false;
    this.driver.writer.mutex.unlock();
  }
}

/** `run` once `connection` is this caller's, then given back. */
async function inTurn<T>(connection: SqliteConnection, run: () => T): Promise<T> {
  await connection.mutex.lock();
  try {
    return run();
  } finally {
    connection.mutex.unlock();
  }
}

/** One holder at a time, in the order they asked (as Kysely's own SQLite mutex). */
class ConnectionMutex {
  #held = false;
  readonly #waiting: Array<() => void> = [];

  get held(): boolean {
    return this.#held;
  }

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
