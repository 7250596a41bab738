/** `fss serve`: prints `listening on http://HOST:PORT` when ready (operators, tests and scripts wait for it). */
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from './app';
import type { Config } from './config';
import { createLogger, logDrained, logFatalErrors, logProcessWarnings } from './log';
import { ensureDemoAccount } from './operations/accounts/accounts';
import { beginShutdown } from './operations/admin/shutdown';
import { closeConnectionsGently } from './protocol/http-common';

export interface RunningServer {
  readonly url: string;
  /**
   * Graceful stop: no new connections; requests in flight go on for up to FSS_SHUTDOWN_SECONDS (uploads end their PATCH
   * with what arrived), each answered with `Connection: close`; then background work stops and the log is written out.
   */
  close(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  const log = createLogger(config.log);
  logProcessWarnings(log); // before buildApp: dependencies warn as they load
  logFatalErrors(log, config.log);
  const app = await buildApp(config);
  const demo = await ensureDemoAccount(app.services);

  const inFlight = new Set<ServerResponse>();
  let draining = false;
  const server = http.createServer({ keepAliveTimeout: 15_000, headersTimeout: 20_000, requestTimeout: 120_000 }, (req, res) => {
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      // Its connection, kept alive, is idle now: closed, so that the server's close is not held by it.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    if (draining) res.setHeader('Connection', 'close');
    app.handle(req, res);
  });
  closeConnectionsGently(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;

  if (config.databaseUrl !== undefined && config.secret === undefined) {
    // Several instances on one database must share one secret (README, "Scaling out"): a file of
    // each instance's own would make every URL, code and job key of one unreadable to the others.
    app.log.warn('settings', {
      warning: `FSS_SECRET is not set: the server secret is ${config.dataDir}/secret.key; every instance using this database must have the same secret (set FSS_SECRET alike on each)`,
    });
  }
  if (demo) {
    config.log(`demo account created: name "${demo.name}", password "${demo.password}" (shown once; change it with: fss user passwd ${demo.name})`);
  }
  config.log(`listening on ${url}`);

  return {
    url,
    async close() {
      if (draining) return;
      draining = true;
      const started = Date.now();
      app.log.info('shutdown', { state: 'draining', requests: inFlight.size, graceSeconds: config.shutdownMs / 1000 });
      beginShutdown(app.services);
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let graceTimer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'over'>((resolve) => (graceTimer = setTimeout(() => resolve('over'), config.shutdownMs)));
      if ((await Promise.race([closed, graceOver])) === 'over') {
        app.log.warn('shutdown', { state: 'grace period over', requestsCut: inFlight.size });
        server.closeAllConnections();
        await closed;
      }
      clearTimeout(graceTimer);
      await app.close();
      app.log.info('shutdown', { state: 'done', ms: Date.now() - started });
      // Lines still waiting for a slow reader go now, without waiting at exit when it catches up in time.
      await logDrained(config.log, 2000);
    },
  };
}
