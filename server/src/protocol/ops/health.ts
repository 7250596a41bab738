/**
 * /healthz (liveness: the process answers, touching nothing) and /readyz (readiness: the database answers and is
 * migrated, the content store is reachable, each within a short timeout, and the instance is not shutting down).
 * Load balancers poll them: answers are JSON, never cached, and name no host, path or setting.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answer } from '../http-common';
import type { RequestTarget } from '../request-target';

export interface ReadinessChecks {
  /** Resolves true when the database answers and every migration of this build is applied; rejects when it fails. */
  readonly database: () => Promise<boolean>;
  /** Resolves when the content store answers; rejects when it fails. */
  readonly store: () => Promise<void>;
  readonly shuttingDown: () => boolean;
}

export type CheckState = 'ok' | 'timeout' | 'unavailable';

/** How long each check may take before it counts as failed: a load balancer's probe waits a few seconds at most. */
export const READINESS_TIMEOUT_MS = 2_000;

const JSON_TYPE = 'application/json; charset=utf-8';

export class HealthRoute {
  constructor(
    private readonly checks: ReadinessChecks,
    private readonly timeoutMs = READINESS_TIMEOUT_MS,
  ) {}

  async route(req: IncomingMessage, res: ServerResponse, url: RequestTarget): Promise<boolean> {
    const { pathname } = url;
    if (pathname !== '/healthz' && pathname !== '/readyz') return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      answer(res, { status: 405, contentType: JSON_TYPE, cacheControl: 'no-store', headers: { Allow: 'GET, HEAD' } }, '{"status":"method not allowed"}\n');
      return true;
    }
    if (pathname === '/healthz') {
      answer(res, { status: 200, contentType: JSON_TYPE, cacheControl: 'no-store' }, '{"status":"ok"}\n');
      return true;
    }
    const [database, store] = await Promise.all([
      this.within(this.checks.database().then((migrated) => (migrated ? 'ok' : 'not-migrated'))),
      this.within(this.checks.store().then(() => 'ok' as const)),
    ]);
    const shuttingDown = this.checks.shuttingDown();
    const ready = database === 'ok' && store === 'ok' && !shuttingDown;
    const body = { status: ready ? 'ok' : 'unavailable', database, store, shutting_down: shuttingDown };
    answer(res, { status: ready ? 200 : 503, contentType: JSON_TYPE, cacheControl: 'no-store' }, JSON.stringify(body) + '\n');
    return true;
  }

  /** The check's state, or 'timeout' once timeoutMs has passed ('unavailable' when it fails: the reason stays out of the answer). */
  private async within<S extends string>(check: Promise<S>): Promise<S | CheckState> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, this.timeoutMs, 'timeout')));
    try {
      return await Promise.race([check.catch(() => 'unavailable' as const), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
