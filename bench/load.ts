/**
 * The load generator: wrk (Debian's package, written in C), pinned to CPU 1 while the server under
 * test has CPU 0, replaying a list of raw requests in turn over `connections` keep-alive
 * connections (a Lua script; one request text or thousands). autocannon, which this replaced,
 * could not drive a bare node:http server past ~20,000 req/s here: its figure was the generator's.
 *
 * Every figure carries the CPU the server and the generator used while it was taken (from
 * /proc/<pid>/stat): a figure whose server used less than 90 % of its CPU did not measure the
 * server, and is marked invalid by the caller.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RawRequest } from './calls';
import { RUN_DIR, spawnPinned } from './util';

export const LOAD_CPUS = '1';
export const GENERATOR = 'wrk (Debian), 1 thread, pinned to CPU 1';

export interface LoadFigures {
  readonly requests: number;
  /** Requests per second over the measured seconds. */
  readonly rps: number;
  /** Latency percentiles in milliseconds (wrk's, at microsecond resolution). */
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number; readonly mean: number };
  /** Bytes read per response (headers included), averaged. */
  readonly bytesPerResponse: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly seconds: number;
  /** CPU used while measuring, as a fraction of one CPU: the server's (all its threads) and wrk's. */
  readonly cpu: { readonly server: number; readonly generator: number };
  /** The server's CPU time per answered request, in microseconds. */
  readonly serverCpuMicrosPerCall: number;
  /** Distinct request texts the generator cycled through. */
  readonly distinctRequests: number;
}

export interface LoadOptions {
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds a process has used so far (user + system, all threads), from /proc; NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: state is field 3, utime 14, stime 15 (1-based in proc(5)).
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** CPU seconds by thread name (the main thread as "main"; libuv's and V8's threads are all "node"), from /proc. */
export function cpuByThread(pid: number): Map<string, number> {
  const seconds = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      seconds.set(name, (seconds.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND);
    }
  } catch {
    // the process or a thread ended meanwhile: what was read stands
  }
  return seconds;
}

/** A Lua string literal holding exactly these bytes. */
function luaBytes(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, "0")}`;
  }
  return `${out}"`;
}

/** The request as it goes on the wire (HTTP/1.1, keep-alive). */
function rawHttp(request: RawRequest, host: string): string {
  const headers: Record<string, string> = { Host: host, ...request.headers };
  if (request.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(request.body));
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `${request.method} ${request.path} HTTP/1.1\r\n${head}\r\n${request.body ?? ''}`;
}

/**
 * The script: requests in turn (each connection takes the next), and at the end one line of JSON
 * with the figures wrk collected.
 */
function luaScript(requests: readonly RawRequest[], host: string): string {
  return `-- written by bench/load.ts
local requests = {
${requests.map((r) => `  ${luaBytes(rawHttp(r, host))},`).join('\n')}
}
local turn = 0
request = function()
  turn = turn + 1
  if turn > #requests then turn = 1 end
  return requests[turn]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"bytes":%d,"durationMicros":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"statusErrors":%d,"timeouts":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%f}\\n',
    summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
`;
}

interface WrkSummary {
  readonly requests: number;
  readonly bytes: number;
  readonly durationMicros: number;
  readonly connectErrors: number;
  readonly readErrors: number;
  readonly writeErrors: number;
  readonly statusErrors: number;
  readonly timeouts: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

let scripts = 0;

/** One wrk run of `seconds`; answers its summary and the CPU the server and wrk used meanwhile. */
async function wrk(url: string, serverPid: number, script: string, connections: number, seconds: number) {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '30s', '-s', script, url];
  const child = spawnPinned(LOAD_CPUS, 'wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const serverBefore = cpuSeconds(serverPid);
  const started = performance.now();
  // wrk's own CPU time: the last reading before it exits (it is reaped at once after).
  let generatorCpu = 0;
  const sampler = setInterval(() => {
    const used = child.pid === undefined ? NaN : cpuSeconds(child.pid);
    if (Number.isFinite(used)) generatorCpu = used;
  }, 100);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  clearInterval(sampler);
  const wall = (performance.now() - started) / 1000;
  const serverCpu = cpuSeconds(serverPid) - serverBefore;
  const line = stdout.split('\n').find((text) => text.startsWith('{"requests"'));
  if (code !== 0 || !line) throw new Error(`wrk failed (${code}):\n${stderr.slice(-2000)}${stdout.slice(-2000)}`);
  return { summary: JSON.parse(line) as WrkSummary, cpu: { server: serverCpu / wall, generator: generatorCpu / wall }, serverCpuSeconds: serverCpu };
}

/**
 * Drives `requests` (in turn) against the server at `url` whose process is `serverPid`: a warm-up
 * of `warmupSeconds`, not counted, then the measured `seconds`.
 */
export async function runLoad(url: string, serverPid: number, requests: readonly RawRequest[], options: LoadOptions): Promise<LoadFigures> {
  const host = new URL(url).host;
  const script = path.join(RUN_DIR, `load-${process.pid}-${++scripts}.lua`);
  await writeFile(script, luaScript(requests, host));
  if (options.warmupSeconds > 0) await wrk(url, serverPid, script, options.connections, options.warmupSeconds);
  const { summary, cpu, serverCpuSeconds } = await wrk(url, serverPid, script, options.connections, options.seconds);
  const seconds = summary.durationMicros / 1e6;
  return {
    requests: summary.requests,
    rps: summary.requests / seconds,
    latencyMs: { p50: summary.p50 / 1000, p90: summary.p90 / 1000, p99: summary.p99 / 1000, max: summary.max / 1000, mean: summary.mean / 1000 },
    bytesPerResponse: summary.requests > 0 ? summary.bytes / summary.requests : 0,
    non2xx: summary.statusErrors,
    errors: summary.connectErrors + summary.readErrors + summary.writeErrors,
    timeouts: summary.timeouts,
    seconds,
    cpu,
    serverCpuMicrosPerCall: summary.requests > 0 ? (serverCpuSeconds / summary.requests) * 1e6 : NaN,
    distinctRequests: new Set(requests.map((r) => rawHttp(r, host))).size,
  };
}
