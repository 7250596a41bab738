/**
 * /metrics (protocol/ops/metrics.ts, FSS_METRICS): Prometheus text that a scraper parses, counters that move with the
 * calls, labels only from the catalog (never from what a client sends), and the three settings off, on and host:port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, operations } from '../../src/catalog/operations';
import { ConfigError, loadConfig } from '../../src/config';
import { startTestApp, type TestApp } from '../helpers/app-server';
import { testEngine } from '../helpers/postgres';
import { callInForm, send } from '../helpers/requests';

const Login = findOperation('OAuthService', 'Login')!;

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/**
 * The samples of an exposition; throws on a line that is neither a comment nor `name{labels} value`. NaN in any case, as
 * Prometheus reads it: prom-client writes `Nan` for the event-loop lag before its first measurement.
 */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\})? (-?[0-9.e+-]+|[Nn][Aa][Nn]|[+-]Inf)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

async function scrape(url: string): Promise<Sample[]> {
  const answer = await send(url, 'GET', '/metrics', {});
  expect(answer.status).toBe(200);
  return parseExposition(answer.body);
}

/** The value of the sample with exactly these labels among those it has (0 when absent: a counter not yet moved). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found?.value ?? 0;
}

describe('FSS_METRICS=on', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ FSS_METRICS: 'on' });
  });
  afterAll(() => app.close());

  it('serves Prometheus text on the public port, every line a comment or a sample, never cached', async () => {
    const answer = await send(app.url, 'GET', '/metrics', {});
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(parseExposition(answer.body).length).toBeGreaterThan(10);
  });

  it('includes process memory, event-loop lag and the queues', async () => {
    const samples = await scrape(app.url);
    const names = new Set(samples.map((s) => s.name));
    for (const name of ['process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'fss_uploads_unfinished']) {
      expect(names).toContain(name);
    }
    expect(samples.filter((s) => s.name === 'fss_queue_waiting').map((s) => s.labels.queue).sort()).toEqual(['email', 'encryption']);
    expect(valueOf(samples, 'fss_queue_oldest_age_seconds', { queue: 'email' })).toBe(0);
  });

  it('counts a SOAP call and a POST call by service, operation, form and status code, with their latency', async () => {
    const labels = { service: 'OAuthService', operation: 'Login' };
    const before = await scrape(app.url);
    await callInForm(app.url, 'soap11', Login, { uid: 'nobody', pwd: 'wrong-password' });
    await callInForm(app.url, 'post', Login, { uid: 'nobody', pwd: 'wrong-password' });
    await callInForm(app.url, 'soap12', Login, { uid: 'nobody', pwd: 'wrong-password' });
    const after = await scrape(app.url);
    for (const form of ['soap11', 'post']) {
      const series = { ...labels, form };
      expect(valueOf(after, 'fss_requests_total', { ...series, code: '200' }) - valueOf(before, 'fss_requests_total', { ...series, code: '200' })).toBe(1);
      expect(valueOf(after, 'fss_request_duration_seconds_count', series) - valueOf(before, 'fss_request_duration_seconds_count', series)).toBe(1);
      expect(valueOf(after, 'fss_request_duration_seconds_bucket', { ...series, le: '+Inf' })).toBe(valueOf(after, 'fss_request_duration_seconds_count', series));
    }
    // SOAP 1.2 names its operation in the body only (no action= here): counted under the service's "other".
    expect(valueOf(after, 'fss_requests_total', { service: 'OAuthService', operation: 'other', form: 'soap12', code: '200' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, 'fss_http_received_bytes_total')).toBeGreaterThan(valueOf(before, 'fss_http_received_bytes_total'));
    expect(valueOf(after, 'fss_http_sent_bytes_total')).toBeGreaterThan(valueOf(before, 'fss_http_sent_bytes_total'));
  });

  it('never makes a label of what a client sends: unknown operations, actions and paths count as "other"', async () => {
    const odd = 'Evil_x7q"}{le=';
    await send(app.url, 'POST', `/FileService.asmx/${encodeURIComponent(odd)}`, { 'Content-Type': 'application/x-www-form-urlencoded' }, 'a=1');
    await send(app.url, 'GET', `/FileService.asmx/${encodeURIComponent(odd)}?a=1`, {});
    await send(app.url, 'POST', '/FileService.asmx', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"http://tempuri.org/${odd}"` }, '<x/>');
    await send(app.url, 'GET', `/Evil_x7qService.asmx`, {});
    await send(app.url, 'PROPFIND', `/${encodeURIComponent(odd)}`, {});
    const answer = await send(app.url, 'GET', '/metrics', {});
    expect(answer.body).not.toContain('Evil_x7q');
    expect(answer.body).not.toContain('PROPFIND');
    const samples = parseExposition(answer.body);
    expect(valueOf(samples, 'fss_requests_total', { service: 'FileService', operation: 'other', form: 'post' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, 'fss_requests_total', { service: 'FileService', operation: 'other', form: 'soap11' })).toBeGreaterThanOrEqual(1);
    const catalog = new Set(['other', ...operations.map((op) => op.name)]);
    for (const sample of samples.filter((s) => s.name.startsWith('fss_request'))) expect(catalog).toContain(sample.labels.operation);
  });

  it.runIf(testEngine() === 'postgres')("reports the PostgreSQL pool's connections", async () => {
    const samples = await scrape(app.url);
    expect(valueOf(samples, 'fss_database_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(samples.some((s) => s.name === 'fss_database_pool_connections' && s.labels.state === 'waiting')).toBe(true);
  });

  it.runIf(testEngine() === 'sqlite')('has no pool metrics on SQLite', async () => {
    expect((await scrape(app.url)).some((s) => s.name === 'fss_database_pool_connections')).toBe(false);
  });
});

describe('FSS_METRICS=host:port', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ FSS_METRICS: '127.0.0.1:0' });
  });
  afterAll(() => app.close());

  it('serves /metrics on a listener of its own and not on the public port', async () => {
    expect(app.app.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(app.app.metricsUrl).not.toBe(app.url);
    await callInForm(app.url, 'post', Login, { uid: 'nobody', pwd: 'wrong-password' });
    const samples = await scrape(app.app.metricsUrl!);
    expect(valueOf(samples, 'fss_requests_total', { service: 'OAuthService', operation: 'Login', form: 'post', code: '200' })).toBe(1);
    expect((await send(app.url, 'GET', '/metrics', {})).status).toBe(404);
  });

  it('stops the start with an error naming FSS_METRICS when its address is taken', async () => {
    const port = new URL(app.app.metricsUrl!).port;
    await expect(startTestApp({ FSS_METRICS: `127.0.0.1:${port}` })).rejects.toThrow(`FSS_METRICS: cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
  });

  it('answers 404 on that listener for any other path', async () => {
    expect((await send(app.app.metricsUrl!, 'GET', '/readyz', {})).status).toBe(404);
  });
});

describe('the FSS_METRICS setting', () => {
  it('is off by default', () => {
    expect(loadConfig({}).metrics).toEqual({ kind: 'off' });
    expect(loadConfig({ FSS_METRICS: 'off' }).metrics).toEqual({ kind: 'off' });
  });

  it('takes on and host:port, IPv6 in brackets', () => {
    expect(loadConfig({ FSS_METRICS: 'on' }).metrics).toEqual({ kind: 'on' });
    expect(loadConfig({ FSS_METRICS: '127.0.0.1:9464' }).metrics).toEqual({ kind: 'listener', host: '127.0.0.1', port: 9464 });
    expect(loadConfig({ FSS_METRICS: '[::1]:9464' }).metrics).toEqual({ kind: 'listener', host: '::1', port: 9464 });
  });

  it.each(['yes', '9464', '127.0.0.1:99999', 'http://127.0.0.1:9464'])('refuses %s with a clear error', (value) => {
    expect(() => loadConfig({ FSS_METRICS: value })).toThrow(ConfigError);
  });
});
