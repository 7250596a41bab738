/**
 * The load generator's process (bench/load.ts starts it pinned to its own CPU): autocannon with
 * `connections` keep-alive connections replaying one request, first for `warmupSeconds` (not
 * counted), then for `seconds`. Prints the figures as one line of JSON.
 *
 * Usage: node --import tsx bench/load-worker.ts <job.json>
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadJob {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly request: { readonly method: string; readonly path: string; readonly headers: Record<string, string>; readonly body?: string };
}

export interface LoadFigures {
  readonly requests: number;
  /** Requests per second over the measured seconds. */
  readonly rps: number;
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number; readonly mean: number };
  /** Bytes read per response (headers included), averaged. */
  readonly bytesPerResponse: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly seconds: number;
}

function once(job: LoadJob, seconds: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: job.url,
        connections: job.connections,
        duration: seconds,
        pipelining: 1,
        timeout: 30,
        requests: [{ method: job.request.method as autocannon.Request['method'], path: job.request.path, headers: job.request.headers, body: job.request.body }],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

const job = JSON.parse(readFileSync(process.argv[2], 'utf8')) as LoadJob;
if (job.warmupSeconds > 0) await once(job, job.warmupSeconds);
const result = await once(job, job.seconds);
const figures: LoadFigures = {
  requests: result.requests.total,
  rps: result.requests.total / result.duration,
  latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.average },
  bytesPerResponse: result.requests.total > 0 ? result.throughput.total / result.requests.total : 0,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  seconds: result.duration,
};
process.stdout.write(JSON.stringify(figures) + '\n');
