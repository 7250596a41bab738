/** The application: services, the protocol edge and the web app; `buildApp(config)` is what `fss serve` runs and tests build. */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config';
import { createLogger, type Logger } from './log';
import { callCaches } from './operations/caches';
import type { Services } from './operations/context';
import { passwordHashQueue } from './operations/crypto/hash-queue';
import { invokeOperation } from './operations/dispatch';
import { OpError } from './operations/errors';
import { OUTAGE_RETRY_AFTER_SECONDS, outageRefusal } from './operations/outages';
import { scheduleEncryptionJobs } from './operations/encryption/encryption-jobs';
import { scheduleHousekeeping } from './operations/admin/housekeeping';
import { scheduleSearchIndexing, type SearchIndexer } from './operations/admin/search-indexing';
import { shuttingDown } from './operations/admin/shutdown';
import { requestTaken } from './time-slices';
import { MailSender, type MailSenderOptions } from './operations/sharing/mail-queue';
import { clientAddressOf } from './protocol/client-address';
import { DownloadRoute } from './protocol/files/downloads';
import { answer, answerPlainText, ClientGoneError } from './protocol/http-common';
import { LinkRoute } from './protocol/files/links';
import { PreviewRoute } from './protocol/files/previews';
import { newIncidentId, type ProtocolEnv } from './protocol/pipeline';
import { loggablePath, requestTarget, type RequestTarget } from './protocol/request-target';
import type { Outcome } from './protocol/asmx/results';
import { ServiceRouter } from './protocol/router';
import { ShareImageRoute } from './protocol/files/share-images';
import { ZipRoute } from './protocol/files/zip-route';
import { HealthRoute } from './protocol/ops/health';
import type { Metrics } from './protocol/ops/metrics';
import { ThumbnailRoute } from './protocol/files/thumbnails';
import { SharePreviews } from './protocol/web/share-preview';
import { UploadEndpoint } from './protocol/files/uploads';
import { WebApp } from './protocol/web/web-app';
import { prepareContentStores } from './storage/content/stores';
import { probeContentStore } from './storage/content/store-probe';
import { closeDatabase, openDatabase, poolUse } from './storage/db/engine/database';
import { databaseMigrated, queueDepths } from './storage/db/repositories/status-repository';
import { loadServerSecret } from './storage/secret';

export interface App {
  readonly services: Services;
  readonly log: Logger;
  /** The e-mail sender of this instance; null when turned off (AppOptions.mailSender). */
  readonly mailSender: MailSender | null;
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** With FSS_METRICS=host:port, where its own listener serves /metrics (`http://host:port`); else undefined. */
  readonly metricsUrl: string | undefined;
  close(): Promise<void>;
}

export interface AppOptions {
  /** Periodic housekeeping (sessions, bin, uploads); tests that control time turn it off. */
  readonly housekeeping?: boolean;
  /** The background runner of encryption jobs (operations/encryption/encryption-jobs.ts); tests that drive jobs themselves turn it off. */
  readonly encryptionJobs?: boolean;
  /** The e-mail sender (operations/sharing/mail-queue.ts); false leaves the queue to a sender the caller drives. */
  readonly mailSender?: false | MailSenderOptions;
}

export async function buildApp(config: Config, options: AppOptions = {}): Promise<App> {
  const log = createLogger(config.log);
  if (config.publicUrl === undefined) {
    // Share e-mails take their links from FSS_PUBLIC_URL only (operations/sharing/email-shares.ts
    // mailLinkBase): without it they are refused with 503, which this line explains to the operator.
    log.info('share e-mails off', { reason: 'FSS_PUBLIC_URL is not set', refusal: 503 });
  }
  await prepareContentStores(config); // loads the S3 modules only when content is in S3
  const db = await openDatabase(config);
  let mailSender: MailSender | null = null;
  let searchIndexer: SearchIndexer | null = null;
  const services: Services = {
    db,
    config,
    now: () => new Date(),
    secret: await loadServerSecret(config),
    passwordHashes: passwordHashQueue(config),
    caches: callCaches(config),
    nudgeMailSender: () => mailSender?.nudge(),
    nudgeSearchIndexer: () => searchIndexer?.nudge(),
  };

  const health = new HealthRoute({
    database: () => databaseMigrated(db),
    store: () => probeContentStore(config),
    shuttingDown: () => shuttingDown(services),
  });
  // prom-client is loaded only when metrics are on.
  const metrics =
    config.metrics.kind === 'off' ? null : new (await import('./protocol/ops/metrics')).Metrics(config.namespace, { poolUse: () => poolUse(db), queueDepths: () => queueDepths(db, services.now()) });
  // Before any background work starts: a listener that cannot listen (the port is taken) leaves only the database to close.
  let metricsListener: MetricsListener | null = null;
  if (config.metrics.kind === 'listener' && metrics) {
    try {
      metricsListener = await listenForMetrics(config.metrics, metrics);
    } catch (error) {
      await closeDatabase(db);
      throw error;
    }
  }

  const env: ProtocolEnv = {
    config,
    caches: services.caches,
    async invoke(call, facts): Promise<Outcome> {
      try {
        return { kind: 'result', result: await invokeOperation(services, call, facts) };
      } catch (error) {
        if (error instanceof OpError) return { kind: 'refusal', refusal: error };
        const outage = outageRefusal(config, error);
        if (outage) return { kind: 'refusal', refusal: outage };
        const incident = newIncidentId();
        log.error('incident', { incident, operation: call.op.name, error: describe(error) });
        return { kind: 'incident', incident };
      }
    },
  };
  const stopHousekeeping = options.housekeeping === false ? async () => {} : scheduleHousekeeping(services, log);
  const encryptionJobs = options.encryptionJobs === false ? null : scheduleEncryptionJobs(services, log);
  searchIndexer = scheduleSearchIndexing(services, log);
  if (options.mailSender !== false) {
    mailSender = new MailSender(services, log, options.mailSender);
    mailSender.start();
  }
  // Asked in this order; a route that takes the request answers it. The web app answers the rest.
  const routes: ReadonlyArray<{ route(req: IncomingMessage, res: ServerResponse, url: RequestTarget): Promise<boolean> }> = [
    new ServiceRouter(env),
    new UploadEndpoint(services, log),
    new DownloadRoute(services, log),
    new ShareImageRoute(services, log),
    new ThumbnailRoute(services, log),
    new LinkRoute(services, log),
    new ZipRoute(services, log),
    new PreviewRoute(services, log),
  ];
  const web = new WebApp(config.webRoot, new SharePreviews(services, log));

  async function route(req: IncomingMessage, res: ServerResponse, url: RequestTarget): Promise<void> {
    // Before everything else: no route of the app may shadow the probes and the scrape.
    if (await health.route(req, res, url)) return;
    if (url.pathname === '/metrics' && config.metrics.kind === 'on' && metrics) return metrics.serve(req, res);
    for (const candidate of routes) if (await candidate.route(req, res, url)) return;
    await web.serve(req, res, url.pathname);
  }

  return {
    services,
    log,
    mailSender,
    metricsUrl: metricsListener?.url,
    handle(req, res) {
      const started = performance.now();
      requestTaken(started);
      const url = requestTarget(req.url ?? '/');
      if (!url) {
        answerPlainText(res, 'Bad request', 'private', 400);
        return;
      }
      // The client's address (protocol/client-address.ts), read now: a closed socket no longer knows its peer.
      const client = clientAddressOf(req, config);
      res.on('finish', () => {
        const ms = performance.now() - started;
        log.request({ method: req.method ?? 'GET', path: loggablePath(url.pathname), client, status: res.statusCode, ms: Math.round(ms) });
        metrics?.record(req, res, url.pathname, ms / 1000);
      });
      route(req, res, url).catch((error: unknown) => {
        if (error instanceof ClientGoneError) return;
        if (outageRefusal(config, error)) {
          if (res.headersSent) res.destroy();
          else answer(res, { status: 503, contentType: 'text/plain; charset=utf-8', cacheControl: 'no-store', headers: { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) } }, 'The service is temporarily unavailable. Try again in a moment.\n');
          return;
        }
        const incident = newIncidentId();
        log.error('incident', { incident, path: loggablePath(url.pathname), error: describe(error) });
        if (!res.headersSent) answerPlainText(res, `Internal error (incident ${incident}).`);
        else res.destroy();
      });
    },
    async close() {
      // Before the database closes: the housekeeping task under way finishes (a round stops between tasks).
      await stopHousekeeping();
      // Before the database closes: the file being encrypted is finished and the job's lease given back.
      await encryptionJobs?.stop();
      // Before the database closes: the batch of search indexing under way commits (the rest waits for the next start).
      await searchIndexer?.stop();
      // Before the database closes: a message being sent is marked before the sender lets go.
      await mailSender?.stop();
      await metricsListener?.close();
      await closeDatabase(db);
    },
  };
}

/** FSS_METRICS=host:port: /metrics on a listener of its own, kept off the public port; any other path there is 404. */
interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

async function listenForMetrics(at: { host: string; port: number }, metrics: Metrics): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    if (requestTarget(req.url ?? '/')?.pathname === '/metrics') {
      metrics.serve(req, res).catch(() => res.destroy());
    } else answerPlainText(res, 'Not found', 'no-store', 404);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(new Error(`FSS_METRICS: cannot listen on ${at.host}:${at.port} (${error.code ?? error.message})`)));
    server.listen(at.port, at.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${at.host.includes(':') ? `[${at.host}]` : at.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
