/**
 * The application: services (database, config, clock), the protocol edge in front of the
 * operations, and the web app. `buildApp(config)` is what `fss serve` runs and what tests build.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from './config';
import { createLogger, loggablePath, type Logger } from './log';
import type { Services } from './operations/context';
import { invokeOperation } from './operations/dispatch';
import { OpError } from './operations/errors';
import { scheduleHousekeeping } from './operations/housekeeping';
import { DownloadRoute } from './protocol/downloads';
import { answerPlainText, ClientGoneError } from './protocol/http-common';
import { newIncidentId, type ProtocolEnv } from './protocol/pipeline';
import type { Outcome } from './protocol/results';
import { ServiceRouter } from './protocol/router';
import { UploadEndpoint } from './protocol/uploads';
import { WebApp } from './protocol/web-app';
import { closeDatabase, openDatabase } from './storage/db/database';
import { loadServerSecret } from './storage/secret';

export interface App {
  readonly services: Services;
  readonly log: Logger;
  handle(req: IncomingMessage, res: ServerResponse): void;
  close(): Promise<void>;
}

export interface AppOptions {
  /** Periodic housekeeping (sessions, bin, uploads); tests that control time turn it off. */
  readonly housekeeping?: boolean;
}

export async function buildApp(config: Config, options: AppOptions = {}): Promise<App> {
  const log = createLogger(config.log);
  const db = await openDatabase(config);
  const services: Services = { db, config, now: () => new Date(), secret: await loadServerSecret(config) };

  const env: ProtocolEnv = {
    config,
    async invoke(call, facts): Promise<Outcome> {
      try {
        return { kind: 'result', result: await invokeOperation(services, call, facts) };
      } catch (error) {
        if (error instanceof OpError) return { kind: 'refusal', refusal: error };
        const incident = newIncidentId();
        log.error('incident', { incident, operation: call.op.name, error: describe(error) });
        return { kind: 'incident', incident };
      }
    },
  };
  const stopHousekeeping = options.housekeeping === false ? () => {} : scheduleHousekeeping(services, log);
  const router = new ServiceRouter(env);
  const web = new WebApp(config.webRoot);
  const uploads = new UploadEndpoint(services, log);
  const downloads = new DownloadRoute(services, log);

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (await router.route(req, res, url)) return;
    if (await uploads.route(req, res, url)) return;
    if (await downloads.route(req, res, url)) return;
    await web.serve(req, res, url.pathname);
  }

  return {
    services,
    log,
    handle(req, res) {
      const started = performance.now();
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://host');
      } catch {
        answerPlainText(res, 'Bad request', 'private', 400);
        return;
      }
      res.on('finish', () => {
        log.info('request', {
          method: req.method,
          path: loggablePath(url.pathname),
          status: res.statusCode,
          ms: Math.round(performance.now() - started),
        });
      });
      route(req, res, url).catch((error: unknown) => {
        if (error instanceof ClientGoneError) return;
        const incident = newIncidentId();
        log.error('incident', { incident, path: loggablePath(url.pathname), error: describe(error) });
        if (!res.headersSent) answerPlainText(res, `Internal error (incident ${incident}).`);
        else res.destroy();
      });
    },
    async close() {
      stopHousekeeping();
      await closeDatabase(db);
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
