/**
 * /metrics in Prometheus text format (FSS_METRICS). The call path only adds to numbers in entries made at start, one per
 * service, operation and form (prom-client's labelled children hash their labels on every call); a scrape writes them
 * out, with prom-client's process metrics (memory, event-loop lag) and the gauges read then (queues, pool).
 * Labels come only from the catalog, the request's form and the status code: nothing a client sends becomes one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { operationsOf, services, type ServiceName } from '../../catalog/operations';
import { operationForAction } from '../asmx/soap';
import { answer, parseContentType } from '../http-common';

export type CallForm = 'soap11' | 'soap12' | 'get' | 'post' | 'other';

/** What a scrape reads besides the calls: the shapes storage answers with (app.ts wires them). */
export interface MetricSources {
  /** PostgreSQL's pool; null on SQLite (then no pool metrics at all). */
  readonly poolUse: () => { readonly total: number; readonly idle: number; readonly waiting: number } | null;
  readonly queueDepths: () => Promise<{
    readonly emails: { readonly waiting: number; readonly oldestAt: number | null };
    readonly encryptionJobs: { readonly waiting: number; readonly oldestAt: number | null };
    readonly unfinishedUploads: number;
  }>;
}

/** Upper bounds of the latency buckets, seconds. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const FORMS: readonly CallForm[] = ['soap11', 'soap12', 'get', 'post', 'other'];
const SERVICE_PATH = /^\/([A-Za-z]+)\.asmx(?:\/(.*))?$/i;
/** How long a scrape waits for the queue depths before leaving them out. */
const QUEUE_QUERY_TIMEOUT_MS = 2_000;

/** The counts of one service, operation and form. */
class CallSeries {
  readonly byStatus = new Map<number, number>();
  readonly buckets = new Float64Array(BUCKETS.length);
  count = 0;
  sum = 0;

  constructor(readonly labels: string) {}

  add(status: number, seconds: number): void {
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    this.count++;
    this.sum += seconds;
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    if (i < BUCKETS.length) this.buckets[i]++;
  }
}

type SeriesByForm = Readonly<Record<CallForm, CallSeries>>;

/** Bytes counted so far on each connection: each request adds what its connection moved since the last one. */
const COUNTED = Symbol('fss.metrics.counted');
type CountedSocket = Socket & { [COUNTED]?: { read: number; written: number } };

export class Metrics {
  private readonly registry = new Registry();
  private readonly all: CallSeries[] = [];
  private readonly byOperation = new Map<ServiceName, Map<string, SeriesByForm>>();
  private readonly serviceByName = new Map<string, ServiceName>();
  private readonly otherOfService = new Map<ServiceName, SeriesByForm>();
  /** Unknown services and everything outside the services (uploads, downloads, the web app). */
  private readonly otherService: SeriesByForm;
  private readonly uploadRequests: SeriesByForm;
  private bytesReceived = 0;
  private bytesSent = 0;

  constructor(
    private readonly namespace: string,
    private readonly sources: MetricSources,
  ) {
    for (const service of services) {
      this.serviceByName.set(service, service).set(service.toLowerCase(), service);
      this.byOperation.set(service, new Map(operationsOf(service).map((op) => [op.name, this.seriesOf(service, op.name)])));
      this.otherOfService.set(service, this.seriesOf(service, 'other'));
    }
    this.otherService = this.seriesOf('other', 'other');
    this.uploadRequests = this.seriesOf('upload', 'other');
    collectDefaultMetrics({ register: this.registry });
    this.queueGauges();
    if (sources.poolUse()) this.poolGauges();
  }

  private seriesOf(service: string, operation: string): SeriesByForm {
    const byForm = {} as Record<CallForm, CallSeries>;
    for (const form of FORMS) {
      byForm[form] = new CallSeries(`service="${service}",operation="${operation}",form="${form}"`);
      this.all.push(byForm[form]);
    }
    return byForm;
  }

  /** Counts one answered request (called when its response has finished). */
  record(req: IncomingMessage, res: ServerResponse, pathname: string, seconds: number): void {
    this.countBytes(req.socket as CountedSocket | null);
    const method = req.method;
    const match = SERVICE_PATH.exec(pathname);
    let series: CallSeries;
    if (!match) {
      const byForm = pathname.startsWith('/upload') ? this.uploadRequests : this.otherService;
      series = method === 'GET' ? byForm.get : method === 'POST' ? byForm.post : byForm.other;
    } else {
      const service = this.serviceByName.get(match[1]) ?? this.serviceByName.get(match[1].toLowerCase());
      if (!service) series = this.otherService.other;
      else if (match[2] !== undefined) {
        const byForm = this.byOperation.get(service)!.get(match[2]) ?? this.otherOfService.get(service)!;
        series = method === 'GET' ? byForm.get : method === 'POST' ? byForm.post : byForm.other;
      } else series = method === 'POST' ? this.soapSeries(req, service) : this.otherOfService.get(service)!.other;
    }
    series.add(res.statusCode, seconds);
  }

  /** A SOAP call by its declared action; one routed by its body alone counts as the service's "other". */
  private soapSeries(req: IncomingMessage, service: ServiceName): CallSeries {
    const type = req.headers['content-type'] ?? '';
    let action: string | undefined;
    let form: CallForm = 'other';
    if (type.startsWith('text/xml')) {
      form = 'soap11';
      const header = req.headers.soapaction;
      // As soap.ts declaredAction reads it: quoted or not.
      if (typeof header === 'string') action = header.length > 1 && header.startsWith('"') ? header.slice(1, -1) : header;
    } else if (type.startsWith('application/soap+xml')) {
      form = 'soap12';
      if (type.includes('action')) action = parseContentType(type)?.params.get('action');
    }
    const op = action === undefined ? undefined : operationForAction(service, this.namespace, action);
    return ((op && this.byOperation.get(service)!.get(op.name)) ?? this.otherOfService.get(service)!)[form];
  }

  private countBytes(socket: CountedSocket | null): void {
    if (!socket) return;
    const counted = (socket[COUNTED] ??= { read: 0, written: 0 });
    this.bytesReceived += socket.bytesRead - counted.read;
    this.bytesSent += socket.bytesWritten - counted.written;
    counted.read = socket.bytesRead;
    counted.written = socket.bytesWritten;
  }

  /** Answers a scrape. */
  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      answer(res, { status: 405, contentType: 'text/plain; charset=utf-8', headers: { Allow: 'GET, HEAD' } }, 'Method not allowed\n');
      return;
    }
    const text = this.callsText() + (await this.registry.metrics());
    answer(res, { status: 200, contentType: this.registry.contentType, cacheControl: 'no-store' }, text);
  }

  private callsText(): string {
    const lines = [
      '# HELP fss_requests_total Requests answered, by service, operation (from the catalog), form and status code.',
      '# TYPE fss_requests_total counter',
    ];
    const used = this.all.filter((series) => series.count > 0);
    for (const series of used) {
      for (const [status, count] of series.byStatus) lines.push(`fss_requests_total{${series.labels},code="${status}"} ${count}`);
    }
    lines.push(
      '# HELP fss_request_duration_seconds Time from a request to the end of its answer, by service, operation and form.',
      '# TYPE fss_request_duration_seconds histogram',
    );
    for (const series of used) {
      let cumulative = 0;
      BUCKETS.forEach((bound, i) => {
        cumulative += series.buckets[i];
        lines.push(`fss_request_duration_seconds_bucket{${series.labels},le="${bound}"} ${cumulative}`);
      });
      lines.push(`fss_request_duration_seconds_bucket{${series.labels},le="+Inf"} ${series.count}`);
      lines.push(`fss_request_duration_seconds_sum{${series.labels}} ${series.sum}`);
      lines.push(`fss_request_duration_seconds_count{${series.labels}} ${series.count}`);
    }
    lines.push(
      '# HELP fss_http_received_bytes_total Bytes received over HTTP (request lines, headers and bodies: uploads included).',
      '# TYPE fss_http_received_bytes_total counter',
      `fss_http_received_bytes_total ${this.bytesReceived}`,
      '# HELP fss_http_sent_bytes_total Bytes sent over HTTP (status lines, headers and bodies: downloads included).',
      '# TYPE fss_http_sent_bytes_total counter',
      `fss_http_sent_bytes_total ${this.bytesSent}`,
    );
    return lines.join('\n') + '\n';
  }

  private queueGauges(): void {
    const sources = this.sources;
    // One query for the three gauges, read when the first of them is collected in a scrape.
    type Depths = Awaited<ReturnType<MetricSources['queueDepths']>>;
    let reading: Promise<Depths | null> | null = null;
    const read = () =>
      (reading ??= withTimeout(sources.queueDepths(), QUEUE_QUERY_TIMEOUT_MS).finally(() => setImmediate(() => (reading = null))));
    const registers = [this.registry];
    // A figure of the email queue and of the encryption jobs' queue, labelled by queue.
    const queueGauge = (name: string, help: string, valueOf: (queue: Depths['emails']) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['queue'],
        registers,
        async collect() {
          const depths = await read();
          if (!depths) return;
          this.set({ queue: 'email' }, valueOf(depths.emails));
          this.set({ queue: 'encryption' }, valueOf(depths.encryptionJobs));
        },
      });
    queueGauge('fss_queue_waiting', 'Entries waiting in a queue of the database (every instance).', (queue) => queue.waiting);
    queueGauge('fss_queue_oldest_age_seconds', 'Age of the oldest waiting entry of a queue (0 when none waits).', (queue) =>
      queue.oldestAt === null ? 0 : Math.max(0, (Date.now() - queue.oldestAt) / 1000),
    );
    new Gauge({
      name: 'fss_uploads_unfinished',
      help: 'Uploads begun, neither completed nor expired (every instance).',
      registers,
      async collect() {
        const depths = await read();
        if (depths) this.set(depths.unfinishedUploads);
      },
    });
  }

  private poolGauges(): void {
    const poolUse = this.sources.poolUse;
    new Gauge({
      name: 'fss_database_pool_connections',
      help: "PostgreSQL connections of this instance's pool: open (total), idle, and requests waiting for one (waiting).",
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const use = poolUse();
        if (!use) return;
        this.set({ state: 'total' }, use.total);
        this.set({ state: 'idle' }, use.idle);
        this.set({ state: 'waiting' }, use.waiting);
      },
    });
  }
}

/** The value, or null when it fails or takes longer than `ms` (a scrape must not hang on a database that does). */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise.catch(() => null), new Promise<null>((resolve) => (timer = setTimeout(resolve, ms, null)))]);
  } finally {
    clearTimeout(timer);
  }
}
