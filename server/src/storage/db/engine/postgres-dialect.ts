/** The PostgreSQL dialect: pg's pool and clients, watched for outages (loaded only by installations on PostgreSQL). */
import { PostgresDialect, type Dialect } from 'kysely';
import pg from 'pg';
import Cursor from 'pg-cursor';
import type { Config } from '../../../config';
import { createLogger } from '../../../log';
import { fromDependency, outagesOf } from '../../outages';
import { parseInt8, parseNumeric } from './dialect';

export type PostgresPool = pg.Pool;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** The PostgreSQL pool's type parsers (int8 and numeric as numbers), given to the pool so no other user of pg is affected. */
const postgresTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (format !== 'binary' && oid === INT8_OID) return parseInt8;
    if (format !== 'binary' && oid === NUMERIC_OID) return parseNumeric;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** Client-side grace beyond the server's statement_timeout: the server cancels a slow statement itself first. */
const READ_TIMEOUT_GRACE_MS = 2_000;

export function postgresDialect(url: string, config: Config): { dialect: Dialect; pool: PostgresPool } {
  const outages = outagesOf(config);
  const statementMs = config.databaseTimeoutMs;
  const readTimeoutMs = statementMs === 0 ? 0 : statementMs + READ_TIMEOUT_GRACE_MS;
  /**
   * Errors marked as the database's (storage/outages.ts), answers as proof that it is reached. A plain query waits
   * at most readTimeoutMs (a stopped server never cancels anything itself); a cursor, read a chunk at a time as its
   * client reads a listing, only statement_timeout per chunk.
   */
  class WatchedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      // A connection lost while checked out (between the statements of a transaction) is emitted here, and would end
      // the process without a listener; the next statement fails and tells its caller.
      this.on('error', (error) => outages.failed(fromDependency('database', error)));
    }

    override query(...args: unknown[]): any {
      const [text, values] = args;
      if (typeof text !== 'string' || args.length > 2) return (super.query as (...a: unknown[]) => unknown)(...args);
      const asked = super.query({ text, values: values as unknown[] | undefined, ...(readTimeoutMs ? { query_timeout: readTimeoutMs } : {}) });
      return asked.then(
        (result) => {
          outages.reached('database');
          return result;
        },
        (error: unknown) => Promise.reject(fromDependency('database', error)),
      );
    }
  }
  class WatchedPool extends pg.Pool {
    override connect(...args: unknown[]): any {
      if (args.length > 0) return (super.connect as (...a: unknown[]) => unknown)(...args);
      return super.connect().catch((error: unknown) => Promise.reject(fromDependency('database', error)));
    }
  }
  const pool = new WatchedPool({
    connectionString: url,
    max: config.databasePoolSize,
    types: postgresTypes,
    Client: WatchedClient,
    connectionTimeoutMillis: config.connectTimeoutMs,
    ...(statementMs ? { statement_timeout: statementMs } : {}),
  });
  // A pooled connection that fails while idle (the server restarted) is dropped by the pool; without
  // a listener, the error would end the process. During an outage it is part of it: the outage's lines say so.
  const logger = createLogger(config.log);
  pool.on('error', (error) => {
    if (!outages.failed(fromDependency('database', error))) logger.error('database-connection-failed', { error: error.message });
  });
  // The cursor is what Kysely's stream() reads listings through, a chunk of rows at a time.
  return { dialect: new PostgresDialect({ pool, cursor: Cursor }), pool };
}

