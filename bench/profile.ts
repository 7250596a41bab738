/**
 * Summarizes V8 CPU profiles (.cpuprofile, from `node --cpu-prof`: `npm run bench -- --profile`
 * takes one of the service per section): where the samples were, by function (self time) and by
 * origin (the project's files, each package, Node's internals, idle and GC).
 *
 * Usage: node --import tsx bench/profile.ts <file or folder>…
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, round } from './util';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly hitCount?: number;
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: readonly number[];
}

export interface ProfileSummary {
  readonly file: string;
  readonly seconds: number;
  readonly samples: number;
  /** Share of samples not idle, %. */
  readonly busyPercent: number;
  /** Shares are of the busy (not idle) samples. */
  readonly functions: Array<{ readonly name: string; readonly where: string; readonly percent: number }>;
  readonly origins: Array<{ readonly origin: string; readonly percent: number }>;
}

function originOf(url: string, name: string): string {
  if (name === '(idle)' || name === '(program)' || name === '(garbage collector)') return name;
  if (!url) return '(native)';
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (modules) return modules[1];
  if (file.startsWith('node:')) return 'node internals';
  if (file.startsWith(ROOT)) {
    const rel = path.relative(ROOT, file);
    return rel.split(path.sep).slice(0, 3).join('/');
  }
  return file;
}

export function summarize(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const hits = new Map<number, number>();
  if (profile.samples) for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  else for (const node of profile.nodes) hits.set(node.id, node.hitCount ?? 0);
  const all = [...hits.values()].reduce((s, v) => s + v, 0) || 1;
  const idle = profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').reduce((s, n) => s + (hits.get(n.id) ?? 0), 0);
  const total = all - idle || 1;
  const byFunction = new Map<string, { name: string; where: string; count: number }>();
  const byOrigin = new Map<string, number>();
  for (const node of profile.nodes) {
    const count = hits.get(node.id) ?? 0;
    if (count === 0 || node.callFrame.functionName === '(idle)') continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    const where = url ? `${url.startsWith('file://') ? path.relative(ROOT, fileURLToPath(url)) : url}:${lineNumber + 1}` : '';
    const key = `${name}@${where}`;
    const entry = byFunction.get(key) ?? { name, where, count: 0 };
    entry.count += count;
    byFunction.set(key, entry);
    const origin = originOf(url, name);
    byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + count);
  }
  return {
    file,
    seconds: (profile.endTime - profile.startTime) / 1e6,
    samples: all,
    busyPercent: round((100 * total) / all, 1),
    functions: [...byFunction.values()]
      .sort((a, b) => b.count - a.count)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, percent: round((100 * f.count) / total, 1) })),
    origins: [...byOrigin.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20)
      .map(([origin, count]) => ({ origin, percent: round((100 * count) / total, 1) })),
  };
}

/** The .cpuprofile files of a folder, main threads only (CPU.<date>.<time>.<pid>.<thread>.<seq>: thread 0). */
export function profileFiles(target: string): string[] {
  if (!statSync(target).isDirectory()) return [target];
  return readdirSync(target, { recursive: true })
    .map(String)
    .filter((name) => /\.0\.\d+\.cpuprofile$/.test(name))
    .map((name) => path.join(target, name))
    .sort();
}

export function summaryMarkdown(summary: ProfileSummary): string {
  const lines = [
    `### ${path.relative(ROOT, summary.file)}`,
    '',
    `${round(summary.seconds, 1)} s, ${summary.samples} samples, busy ${summary.busyPercent} % of them; shares below are of the busy samples (self time).`,
    '',
    '| origin | self |',
    '|---|---|',
    ...summary.origins.map((o) => `| ${o.origin} | ${o.percent} % |`),
    '',
    '| function | where | self |',
    '|---|---|---|',
    ...summary.functions.map((f) => `| ${f.name} | ${f.where} | ${f.percent} % |`),
    '',
  ];
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const targets = process.argv.slice(2);
  if (targets.length === 0) throw new Error('usage: bench/profile.ts <.cpuprofile file or folder>…');
  for (const target of targets) for (const file of profileFiles(target)) process.stdout.write(summaryMarkdown(summarize(file)) + '\n');
}
