/**
 * The resident memory of a process, sampled from /proc/<pid>/status (VmRSS), and its JavaScript heap after full
 * collections (heap-probe.cjs); whether each grows: the least-squares trend over the last two thirds of the samples
 * (the first third is warm-up: caches, the JIT, connection pools filling).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The preload that makes a server write its heap after a full collection, every two seconds, to LOAD_HEAP_PROBE_FILE. */
export const HEAP_PROBE = fileURLToPath(new URL('heap-probe.cjs', import.meta.url));

export interface RssSample {
  /** Seconds since sampling began. */
  readonly at: number;
  readonly bytes: number;
}

export function readRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Samples every `everyMs` until stopped. */
export function sampleRss(pid: number, everyMs = 1000): { stop(): RssSample[] } {
  const samples: RssSample[] = [];
  const start = performance.now();
  const take = () => samples.push({ at: (performance.now() - start) / 1000, bytes: readRss(pid) });
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/** The probe's samples taken from `from` to `to` (epoch ms), and the mean duration of its full collections. */
export function readHeapProbe(file: string, from: number, to: number): { samples: RssSample[]; gcMs: number } {
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
  const probes = lines.map((line) => JSON.parse(line) as { time: number; heap: number; gcMs: number }).filter((probe) => probe.time >= from && probe.time <= to);
  return {
    samples: probes.map((probe) => ({ at: (probe.time - from) / 1000, bytes: probe.heap })),
    gcMs: probes.reduce((sum, probe) => sum + probe.gcMs, 0) / probes.length,
  };
}

export interface RssTrend {
  readonly start: number;
  readonly end: number;
  readonly peak: number;
  /** Bytes per second over the last two thirds. */
  readonly slope: number;
  /** The growth the trend makes over that window, in bytes. */
  readonly growth: number;
  /** The mean over that window. */
  readonly mean: number;
}

export function rssTrend(samples: readonly RssSample[]): RssTrend {
  const tail = samples.slice(Math.floor(samples.length / 3));
  const n = tail.length;
  const meanAt = tail.reduce((s, x) => s + x.at, 0) / n;
  const mean = tail.reduce((s, x) => s + x.bytes, 0) / n;
  let num = 0;
  let den = 0;
  for (const x of tail) {
    num += (x.at - meanAt) * (x.bytes - mean);
    den += (x.at - meanAt) ** 2;
  }
  const slope = den === 0 ? 0 : num / den;
  return {
    start: samples[0].bytes,
    end: samples[samples.length - 1].bytes,
    peak: Math.max(...samples.map((s) => s.bytes)),
    slope,
    growth: slope * (tail[n - 1].at - tail[0].at),
    mean,
  };
}

export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
