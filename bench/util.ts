/**
 * Small helpers shared by the benchmark's parts: paths, a seeded random generator, statistics,
 * formatting, and process plumbing.
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH_DIR = path.join(ROOT, 'bench');
export const TMP_DIR = path.join(ROOT, '.tmp');
export const CACHE_DIR = path.join(TMP_DIR, 'bench-cache');
export const RUN_DIR = path.join(TMP_DIR, 'bench-run');
export const FSS_BIN = path.join(ROOT, 'bin', 'fss.mjs');

/** mulberry32: a small deterministic generator, so that every populated database is the same. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

export function round(value: number, digits = 1): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Whether `taskset` (util-linux) can pin processes to CPUs here. */
export const HAS_TASKSET = existsSync('/usr/bin/taskset') || existsSync('/bin/taskset');

/**
 * Spawns `command args` pinned to `cpus` (a taskset list such as "0" or "0,1") when taskset exists;
 * unpinned otherwise.
 */
export function spawnPinned(cpus: string | null, command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  if (cpus === null || !HAS_TASKSET) return spawn(command, args, options);
  return spawn('taskset', ['-c', cpus, command, ...args], options);
}

/** Resolves when the child ends; kills it (SIGTERM, then SIGKILL after `graceMs`) if it is still running. */
export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Runs a command to its end; rejects with its output when it fails. */
export function run(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output.slice(-4000)}`));
    });
  });
}

export function log(line: string): void {
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** Pins this process (and so the clients it runs) to `cpus`, all threads. */
export function pinSelf(cpus: string): void {
  if (!HAS_TASKSET || os.cpus().length < 2) return;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' });
  } catch {
    log(`could not pin the benchmark to CPU ${cpus}`);
  }
}
