/**
 * /healthz and /readyz (protocol/ops/health.ts), what load balancers poll, and the web app's paths beside them: only the
 * app's client routes answer index.html, any other path 404, so nothing answers a probe with the app's page.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import { beginShutdown } from '../../src/operations/admin/shutdown';
import { APP_ROUTES } from '../../src/protocol/web/web-app';
import { startTestApp, type TestApp } from '../helpers/app-server';
import { createTestDatabase, startPostgres, testEngine } from '../helpers/postgres';
import { send } from '../helpers/requests';

const INDEX_HTML = '<!doctype html><html lang="en"><head><title>Files</title></head><body><div id="root"></div></body></html>\n';
const readiness = async (app: { url: string }) => {
  const answer = await send(app.url, 'GET', '/readyz', {});
  return { status: answer.status, body: JSON.parse(answer.body) as Record<string, unknown>, headers: answer.headers };
};

let app: TestApp;
let webRoot: string;
beforeAll(async () => {
  webRoot = await mkdtemp(path.join(os.tmpdir(), 'fss-web-'));
  await writeFile(path.join(webRoot, 'index.html'), INDEX_HTML);
  app = await startTestApp({ FSS_WEB_ROOT: webRoot });
});
afterAll(async () => {
  await app.close();
  await rm(webRoot, { recursive: true, force: true });
});

describe('/healthz', () => {
  it('answers 200 {"status":"ok"} as JSON, never cached', async () => {
    const answer = await send(app.url, 'GET', '/healthz', {});
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok' });
    expect(answer.contentType).toBe('application/json; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-store');
  });

  it('answers even when the database is closed: it is liveness, not readiness', async () => {
    const other = await startTestApp();
    try {
      await other.app.services.db.destroy();
      expect((await send(other.url, 'GET', '/healthz', {})).status).toBe(200);
    } finally {
      await other.close().catch(() => undefined);
    }
  });
});

describe('/readyz', () => {
  it('answers 200 when the database answers and is migrated, the store is reachable and the instance is not shutting down', async () => {
    const ready = await readiness(app);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', database: 'ok', store: 'ok', shutting_down: false });
    expect(ready.headers['cache-control']).toBe('no-store');
  });

  it('answers 503 naming the database when the database is closed', async () => {
    const other = await startTestApp();
    try {
      await other.app.services.db.destroy();
      const ready = await readiness(other);
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'unavailable', database: 'unavailable', store: 'ok', shutting_down: false });
    } finally {
      await other.close().catch(() => undefined);
    }
  });

  it('answers 503 naming the store when the content folder cannot be reached', async () => {
    const other = await startTestApp();
    try {
      const content = path.join(other.config.dataDir, 'content');
      await rm(content, { recursive: true, force: true });
      await writeFile(content, 'not a folder');
      const ready = await readiness(other);
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'unavailable', database: 'ok', store: 'unavailable', shutting_down: false });
    } finally {
      await other.close();
    }
  });

  it('answers 503 once the instance is shutting down (beginShutdown), while /healthz still answers 200', async () => {
    const other = await startTestApp();
    try {
      beginShutdown(other.app.services);
      const ready = await readiness(other);
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'unavailable', database: 'ok', store: 'ok', shutting_down: true });
      expect((await send(other.url, 'GET', '/healthz', {})).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('answers 503 with store "timeout" after about two seconds when the store never answers, naming no address', async () => {
    // An S3 endpoint that accepts connections and never answers.
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fss-test-'));
    const database = testEngine() === 'postgres' ? await createTestDatabase() : undefined;
    const config: Config = {
      ...loadConfig({
        FSS_DATA_DIR: dataDir,
        ...(database ? { FSS_DATABASE_URL: database.url } : {}),
        FSS_S3_BUCKET: 'silent-bucket',
        FSS_S3_ENDPOINT: endpoint,
        FSS_S3_ACCESS_KEY_ID: 'test',
        FSS_S3_SECRET_ACCESS_KEY: 'test-secret',
      }),
      log: () => undefined,
    };
    const built = await buildApp(config, { housekeeping: false, encryptionJobs: false, mailSender: false });
    const server = http.createServer(built.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await send(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'GET', '/readyz', {});
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toEqual({ status: 'unavailable', database: 'ok', store: 'timeout', shutting_down: false });
      expect(answer.body).not.toContain('127.0.0.1');
    } finally {
      server.closeAllConnections();
      server.close();
      silent.closeAllConnections();
      silent.close();
      await built.close();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it.runIf(testEngine() === 'postgres')('answers 503 naming the database when PostgreSQL is stopped, and no connection string', async () => {
    const postgres = await startPostgres();
    let stopped = false;
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fss-test-'));
    const config: Config = { ...loadConfig({ FSS_DATA_DIR: dataDir, FSS_DATABASE_URL: postgres.urlOf('postgres') }), log: () => undefined };
    // Background work on, as in `fss serve`: a connection it holds when PostgreSQL stops must not end the process.
    const built = await buildApp(config);
    const server = http.createServer(built.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await readiness({ url })).status).toBe(200);
      await postgres.stop();
      stopped = true;
      const answer = await send(url, 'GET', '/readyz', {});
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toEqual({ status: 'unavailable', database: 'unavailable', store: 'ok', shutting_down: false });
      expect(answer.body).not.toMatch(/postgres:|127\.0\.0\.1|ECONNREFUSED/);
    } finally {
      server.closeAllConnections();
      server.close();
      await built.close().catch(() => undefined);
      if (!stopped) await postgres.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses methods other than GET and HEAD with 405', async () => {
    const answer = await send(app.url, 'POST', '/readyz', {}, '');
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
  });
});

describe("the web app's paths", () => {
  it('are the routes of src/App.tsx, so the service and the client agree on which paths are pages', async () => {
    const source = await readFile(path.join(import.meta.dirname, '../../../src/App.tsx'), 'utf8');
    const clientRoutes = [...source.matchAll(/path: '([^']+)'/g)].map((m) => (m[1].startsWith('/') ? m[1] : `/${m[1]}`)).filter((route) => route !== '/*');
    if (/index: true/.test(source)) clientRoutes.push('/');
    expect([...APP_ROUTES].sort()).toEqual(clientRoutes.sort());
  });

  it.each(['/', '/login', '/s/AbCdEf', '/folder/12', '/folder/12/', '/search', '/Search', '/recent', '/bin', '/links', '/shares'])(
    'answer index.html at the client route %s (a share page with its link preview)',
    async (route) => {
      const answer = await send(app.url, 'GET', route, {});
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('<div id="root"></div>');
    },
  );

  it.each(['/healthz-typo', '/wp-admin', '/.env', '/readyz/', '/folder', '/folder/12/extra', '/index.php', '/no/such/page'])(
    'answer 404, not the app, at %s',
    async (route) => {
      const answer = await send(app.url, 'GET', route, {});
      expect(answer.status).toBe(404);
      expect(answer.body).not.toContain('<div id="root">');
      expect(answer.body).toContain('Page not found');
    },
  );

  it('/metrics is 404 when FSS_METRICS is off (the default), not the app', async () => {
    const answer = await send(app.url, 'GET', '/metrics', {});
    expect(answer.status).toBe(404);
    expect(answer.body).not.toContain('<div id="root">');
  });
});
