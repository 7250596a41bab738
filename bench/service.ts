/**
 * The processes under test: the real service (`bin/fss.mjs serve`, as operators run it), the limit
 * (bench/limit-server.ts) and the peer (bench/peer-server.ts), each a child process pinned to CPU 0
 * (the load generator gets CPU 1), each printing `listening on http://HOST:PORT` when ready. Their
 * memory is read from /proc/<pid>/status: VmRSS now, VmHWM the peak since the last reset (writing
 * 5 to /proc/<pid>/clear_refs resets it).
 */
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ROOT, spawnPinned, stopChild } from './util';

const START_TIMEOUT_MS = 120_000;

export interface ChildServer {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resident memory now, in bytes (VmRSS). */
  rss(): number;
  /** Peak resident memory since start or the last resetPeak(), in bytes (VmHWM). */
  peak(): number;
  /** Resets the peak (VmHWM) to the current RSS; false where the kernel does not allow it. */
  resetPeak(): boolean;
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly name: string;
  /** CPUs for taskset ("0"); null: not pinned. */
  readonly cpus: string | null;
  /** Arguments to node: flags, then the script and its arguments. */
  readonly nodeArgs: readonly string[];
  /** The whole environment of the child (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** Where the child's output goes. */
  readonly logFile: string;
}

function statusField(pid: number, field: string): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

export async function startChild(options: StartOptions): Promise<ChildServer> {
  await mkdir(path.dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile);
  const child = spawnPinned(options.cpus, process.execPath, options.nodeArgs, {
    cwd: ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.name} did not start within ${START_TIMEOUT_MS / 1000} s:\n${output}`)), START_TIMEOUT_MS);
    let pending = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      log.write(chunk);
      if (output.length < 20_000) output += chunk.toString('utf8');
      pending += chunk.toString('utf8');
      const match = /listening on (https?:\/\/[^\s/]+)/.exec(pending);
      if (match) {
        clearTimeout(timer);
        pending = '';
        resolve(match[1]);
      } else if (pending.length > 10_000) pending = pending.slice(-1000);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      log.write(chunk);
      if (output.length < 20_000) output += chunk.toString('utf8');
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} ended before listening (code ${code}, signal ${signal}):\n${output}`));
    });
  });
  const pid = child.pid!;
  return {
    name: options.name,
    url,
    pid,
    child,
    rss: () => statusField(pid, 'VmRSS'),
    peak: () => statusField(pid, 'VmHWM'),
    resetPeak() {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        return true;
      } catch {
        return false;
      }
    },
    async stop() {
      await stopChild(child, 30_000);
      log.end();
    },
  };
}

export interface ServiceOptions {
  readonly dataDir: string;
  readonly webRoot?: string;
  readonly logFile: string;
  /** A folder to write a V8 CPU profile (--cpu-prof) into, written when the service stops. */
  readonly profileDir?: string;
  readonly cpus?: string | null;
  /** Settings beyond the defaults, e.g. FSS_TRUSTED_PROXIES. */
  readonly env?: Readonly<Record<string, string>>;
  /** Where bench/hold-monitor.cjs, preloaded, writes the main thread's stops (stalls.ts). */
  readonly holdFile?: string;
}

/** `fss serve` on a data folder, on a free loopback port. */
export function startService(options: ServiceOptions): Promise<ChildServer> {
  const nodeArgs = [
    ...(options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : []),
    ...(options.holdFile ? ['--require', path.join(ROOT, 'bench', 'hold-monitor.cjs')] : []),
    path.join(ROOT, 'bin', 'fss.mjs'),
    'serve',
  ];
  const env: NodeJS.ProcessEnv = {
    HOST: '127.0.0.1',
    PORT: '0',
    FSS_DATA_DIR: options.dataDir,
    FSS_WEB_ROOT: options.webRoot ?? path.join(ROOT, 'dist', 'web'),
    FSS_PUBLIC_URL: '',
    NODE_ENV: 'production',
    FSS_BENCH_HOLD_FILE: options.holdFile,
    ...options.env,
  };
  return startChild({ name: 'fss serve', cpus: options.cpus === undefined ? '0' : options.cpus, nodeArgs, env: cleanEnv(env), logFile: options.logFile });
}

/** Leaves out empty settings, and the caller's own FSS_* settings (the service must run on its defaults). */
function cleanEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('FSS_')) out[key] = value;
  for (const [key, value] of Object.entries(env)) if (value) out[key] = value;
  return out;
}

/** A TypeScript file of bench/ as a child process (through tsx's loader, as bin/fss.mjs runs the service). */
export function tsNodeArgs(script: string, ...args: string[]): string[] {
  return ['--import', 'tsx', path.join(ROOT, 'bench', script), ...args];
}

export function procAvailable(): boolean {
  return existsSync(`/proc/${process.pid}/status`);
}
