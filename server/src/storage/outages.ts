/**
 * Dependency outages: which errors mean the database or the content store cannot be reached (answered 503 with
 * Retry-After, not as incidents), and whether one is under way: one `warn` line when it starts, one when the
 * dependency answers again. One tracker per configuration, i.e. per app (`outagesOf`).
 */
import type { Config } from '../config';
import { createLogger, type Logger } from '../log';

export type Dependency = 'database' | 'store';

/** Seconds a client is told to wait (Retry-After) while a dependency is out. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

export interface Outage {
  readonly dependency: Dependency;
  /** The error's code (ECONNREFUSED, 57P01, timeout, http-503…): never a message that could hold a secret. */
  readonly code: string;
  readonly since: Date;
}

const sources = new WeakMap<object, Dependency>();

/** Marks `error` as one from `dependency` (the storage code that talks to it calls this); returns it. */
export function fromDependency<E>(dependency: Dependency, error: E): E {
  if (typeof error === 'object' && error !== null && !sources.has(error)) sources.set(error, dependency);
  return error;
}

/** PostgreSQL's codes for "the server is going away or unreachable" (admin shutdown, connection failures, too many connections, statement timeout). */
const DATABASE_OUTAGE_CODES = /^(57P0[123]|08...|53300|57014)$/;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

/** The outage `error` says is under way (its dependency and code), or null when it is no outage (a bug, a full disk, a 403…). */
export function outageOf(error: unknown): { readonly dependency: Dependency; readonly code: string } | null {
  if (typeof error !== 'object' || error === null) return null;
  const dependency = sources.get(error);
  if (!dependency) return null;
  const e = error as { code?: unknown; name?: unknown; severity?: unknown; message?: unknown; $metadata?: { httpStatusCode?: number } };
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code && NETWORK_CODES.has(code)) return { dependency, code };
  if (dependency === 'database') {
    // A server error (it has a severity) is an outage only by its code; the driver's own errors without a code are
    // a lost or timed-out connection (pg names those by message only: read for the log's code, nothing else).
    if (e.severity !== undefined) return code && DATABASE_OUTAGE_CODES.test(code) ? { dependency, code } : null;
    if (error instanceof TypeError || error instanceof RangeError) return null;
    return { dependency, code: code ?? (/timeout/i.test(String(e.message)) ? 'timeout' : 'connection-lost') };
  }
  // The store: no HTTP answer at all (network, timeout), or a 5xx.
  const status = e.$metadata?.httpStatusCode;
  if (e.name === 'TimeoutError') return { dependency, code: 'timeout' };
  if (status === undefined) return code || e.name === 'AbortError' ? null : { dependency, code: 'no-answer' };
  return status >= 500 ? { dependency, code: `http-${status}` } : null;
}

/** One app's view of its dependencies: read by the call paths (503) and the readiness check (`current`). */
export class DependencyOutages {
  private readonly outages = new Map<Dependency, Outage>();

  constructor(
    private readonly log: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Notes a failed call: the outage `error` is part of (starting it, with a warn line), or null when it is none. */
  failed(error: unknown): Outage | null {
    const found = outageOf(error);
    if (!found) return null;
    let outage = this.outages.get(found.dependency);
    if (!outage) {
      outage = { ...found, since: this.now() };
      this.outages.set(found.dependency, outage);
      this.log.warn('outage-started', { dependency: outage.dependency, code: outage.code });
    }
    return outage;
  }

  /** Notes that `dependency` answered: ends its outage, if any, with a warn line giving how long it lasted. */
  reached(dependency: Dependency): void {
    if (this.outages.size === 0) return; // the common case costs one check
    const outage = this.outages.get(dependency);
    if (!outage) return;
    this.outages.delete(dependency);
    const seconds = Math.round((this.now().getTime() - outage.since.getTime()) / 100) / 10;
    this.log.warn('outage-ended', { dependency, code: outage.code, seconds });
  }

  /** The outages under way (empty when every dependency answers). */
  current(): readonly Outage[] {
    return [...this.outages.values()];
  }
}

const trackers = new WeakMap<Config, DependencyOutages>();

/** The outage tracker of the app running `config` (created on first use, logging to `config.log`). */
export function outagesOf(config: Config): DependencyOutages {
  let tracker = trackers.get(config);
  if (!tracker) {
    tracker = new DependencyOutages(createLogger(config.log));
    trackers.set(config, tracker);
  }
  return tracker;
}
