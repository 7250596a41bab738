/**
 * The service as an operator runs it: `node bin/fss.mjs serve` in a child process on a given data
 * folder, on a free loopback port, that a test can stop, kill -9 and start again on the same folder;
 * and the `fss` command (`fsck`, `user add`, …) on that folder.
 *
 * Every process started here is remembered until it exits: call killAllServices() in an afterEach
 * or afterAll, so that no server outlives a failed test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseUrlOfDataDir } from './postgres';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const FSS_BIN = path.join(REPO_ROOT, 'bin', 'fss.mjs');

/** How long a start may take before it is treated as a failure. */
const START_TIMEOUT_MS = 30_000;
/** How long a graceful stop may take before the process is killed. */
const STOP_TIMEOUT_MS = 10_000;
/** Output kept per process, for failure messages (the newest part). */
const MAX_OUTPUT_CHARS = 200_000;

/** Processes started here that have not exited yet, with the promise of their exit. */
const running = new Map<ChildProcess, Promise<void>>();

export interface ServiceProcess {
  /** `http://127.0.0.1:PORT`, as the service printed it. */
  readonly url: string;
  readonly pid: number;
  readonly dataDir: string;
  /** What the process printed so far (stdout and stderr, interleaved as they arrived). */
  output(): string;
  /** What the process printed on stderr alone. */
  errorOutput(): string;
  /** Whether the process has exited. */
  readonly exited: boolean;
  /** SIGKILL, and waits until the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (the service closes its database cleanly), and waits; kill -9 after a timeout. */
  stop(): Promise<void>;
  /** Sends `signal` and returns at once. */
  signal(signal: NodeJS.Signals): void;
  /** How the process ended, once it has. */
  exitStatus(): Promise<ExitStatus>;
}

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface FssResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The environment of a child: ours without any FSS_ setting, then the given ones. On PostgreSQL the
 * child uses the database that the test's configuration of `dataDir` names (helpers/postgres.ts).
 */
function childEnv(dataDir: string, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('FSS_') && name !== 'PORT' && name !== 'HOST') env[name] = value;
  const databaseUrl = databaseUrlOfDataDir(dataDir);
  return { ...env, FSS_DATA_DIR: dataDir, ...(databaseUrl ? { FSS_DATABASE_URL: databaseUrl } : {}), ...extra };
}

function track(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    // A process that could not be started at all never exits.
    child.once('error', () => resolve());
  });
  running.set(child, exited);
  void exited.then(() => running.delete(child));
  return exited;
}

export interface StartOptions {
  /**
   * The script that runs the `fss` command: bin/fss.mjs by default. The reliability suite passes a
   * bundle of the same sources (reliability/crash/bundle.ts), which starts several times faster.
   */
  readonly entry?: string;
}

/** Starts `fss serve` on `dataDir` (PORT=0, HOST=127.0.0.1) and resolves once it listens. */
export async function startService(dataDir: string, extraEnv: NodeJS.ProcessEnv = {}, options: StartOptions = {}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [options.entry ?? FSS_BIN, 'serve'], {
    cwd: REPO_ROOT,
    env: childEnv(dataDir, { PORT: '0', HOST: '127.0.0.1', ...extraEnv }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = track(child);
  const status = new Promise<ExitStatus>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let output = '';
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > MAX_OUTPUT_CHARS) output = output.slice(-MAX_OUTPUT_CHARS);
  };
  let errorOutput = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    append(chunk);
    if (errorOutput.length < MAX_OUTPUT_CHARS) errorOutput += chunk.toString('utf8');
  });

  const url = await new Promise<string>((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(() => fail(new Error(`fss serve did not print "listening on" within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n--- output ---\n${output}`));
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      append(chunk);
      pending += chunk.toString('utf8');
      const match = /^listening on (http:\/\/\S+)$/m.exec(pending);
      if (match) {
        clearTimeout(timer);
        pending = '';
        resolve(match[1]);
      } else if (pending.length > 100_000) {
        pending = pending.slice(-1000);
      }
    });
    child.once('exit', (code, signal) => fail(new Error(`fss serve exited (code ${code}, signal ${signal}) before listening`)));
    child.once('error', (error) => fail(error));
  });

  return {
    url,
    pid: child.pid!,
    dataDir,
    output: () => output,
    errorOutput: () => errorOutput,
    get exited() {
      return hasExited;
    },
    async kill9() {
      if (!hasExited) child.kill('SIGKILL');
      await exited;
    },
    signal(signal) {
      child.kill(signal);
    },
    exitStatus: () => status,
    async stop() {
      if (hasExited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs `fss ARGS…` on `dataDir` to the end: its exit code and output. */
export async function runFss(dataDir: string, args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<FssResult> {
  const child = spawn(process.execPath, [FSS_BIN, ...args], {
    cwd: REPO_ROOT,
    env: childEnv(dataDir, extraEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = track(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  await exited;
  return { code: code ?? (signal ? 128 : 1), stdout, stderr };
}

/** `fss fsck [--repair]` on `dataDir`. */
export function fsck(dataDir: string, options: { readonly repair?: boolean } = {}): Promise<FssResult> {
  return runFss(dataDir, options.repair ? ['fsck', '--repair'] : ['fsck']);
}

/** Kills (-9) every process started here that is still running, and waits for them. */
export async function killAllServices(): Promise<void> {
  const children = [...running];
  for (const [child] of children) child.kill('SIGKILL');
  await Promise.all(children.map(([, exited]) => exited));
}
