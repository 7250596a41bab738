/** `fss serve`: prints `listening on http://HOST:PORT` when ready (operators, tests and scripts wait for it). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from './app';
import type { Config } from './config';
import { createLogger, logDrained, logFatalErrors, logProcessWarnings } from './log';
import { ensureDemoAccount } from './operations/accounts/accounts';

export interface RunningServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  const log = createLogger(config.log);
  logProcessWarnings(log); // before buildApp: dependencies warn as they load
  logFatalErrors(log, config.log);
  const app = await buildApp(config);
  const demo = await ensureDemoAccount(app.services);

  const server = http.createServer({ keepAliveTimeout: 15_000, headersTimeout: 20_000, requestTimeout: 120_000 }, app.handle);
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
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await app.close();
      // Lines still waiting for a slow reader go now, without waiting at exit when it catches up in time.
      await logDrained(config.log, 2000);
    },
  };
}
