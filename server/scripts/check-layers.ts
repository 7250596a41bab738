/**
 * Enforces the architecture that the folders show (docs/design.md): on the server, protocol →
 * operations → storage, one direction, with the catalog as pure data at the bottom; the web client
 * never reaches into the server. Also refuses import cycles. Run by `npm run lint`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

type Layer = 'catalog' | 'foundation' | 'storage' | 'operations' | 'protocol' | 'app' | 'client';

/** What each layer may import (besides itself). */
const allowed: Record<Layer, readonly Layer[]> = {
  catalog: [],
  foundation: [],
  storage: ['catalog', 'foundation'],
  operations: ['catalog', 'foundation', 'storage'],
  protocol: ['catalog', 'foundation', 'operations'],
  app: ['catalog', 'foundation', 'storage', 'operations', 'protocol'],
  client: [],
};

function layerOf(file: string): Layer | null {
  const rel = path.relative(root, file).split(path.sep).join('/');
  if (rel.startsWith('src/')) return 'client';
  if (!rel.startsWith('server/src/')) return null;
  const rest = rel.slice('server/src/'.length);
  if (rest.startsWith('catalog/')) return 'catalog';
  // Settings, logging and time slices: used by every layer, depending on none.
  if (rest === 'config.ts' || rest === 'log.ts' || rest === 'time-slices.ts') return 'foundation';
  if (rest.startsWith('storage/')) return 'storage';
  if (rest.startsWith('operations/')) return 'operations';
  if (rest.startsWith('protocol/')) return 'protocol';
  return 'app';
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name)) out.push(full);
  }
  return out;
}

function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), path.join(base, 'index.tsx')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next form
    }
  }
  return null;
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

const files = [...sourceFiles(path.join(root, 'server/src')), ...sourceFiles(path.join(root, 'src'))];
const graph = new Map<string, string[]>();
const problems: string[] = [];

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const targets: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2];
    const target = resolveImport(file, specifier);
    if (!target) continue;
    targets.push(target);
    const from = layerOf(file);
    const to = layerOf(target);
    if (!from || !to || from === to) continue;
    if (from === 'client') {
      problems.push(`${path.relative(root, file)} imports ${path.relative(root, target)}: the web client talks to the server only over HTTP`);
    } else if (!allowed[from].includes(to)) {
      problems.push(`${path.relative(root, file)} (${from}) imports ${path.relative(root, target)} (${to})`);
    }
  }
  graph.set(file, targets);
}

// Cycles: depth-first search over the import graph.
const state = new Map<string, 'open' | 'done'>();
function visit(file: string, trail: string[]): void {
  if (state.get(file) === 'done') return;
  if (state.get(file) === 'open') {
    const cycle = trail.slice(trail.indexOf(file)).concat(file).map((f) => path.relative(root, f));
    problems.push(`import cycle: ${cycle.join(' → ')}`);
    return;
  }
  state.set(file, 'open');
  for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
  state.set(file, 'done');
}
for (const file of files) visit(file, []);

if (problems.length > 0) {
  console.error(`Layering problems (${problems.length}):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`layers ok: ${files.length} modules, no cycles`);
