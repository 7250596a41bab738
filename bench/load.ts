/**
 * Runs the load generator (bench/load-worker.ts: autocannon) as a child process pinned to CPU 1,
 * while the server under test is pinned to CPU 0, so that on a 2-core machine neither starves the
 * other. Answers its figures.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RawRequest } from './calls';
import type { LoadFigures, LoadJob } from './load-worker';
import { tsNodeArgs } from './service';
import { RUN_DIR, ROOT, spawnPinned } from './util';

export type { LoadFigures } from './load-worker';

export const LOAD_CPUS = '1';

let jobs = 0;

export async function runLoad(url: string, request: RawRequest, options: { connections: number; seconds: number; warmupSeconds: number }): Promise<LoadFigures> {
  const job: LoadJob = { url, ...options, request };
  const file = path.join(RUN_DIR, `load-job-${process.pid}-${++jobs}.json`);
  await writeFile(file, JSON.stringify(job));
  return new Promise((resolve, reject) => {
    const child = spawnPinned(LOAD_CPUS, process.execPath, tsNodeArgs('load-worker.ts', file), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`load generator failed (${code}):\n${stderr.slice(-3000)}${stdout.slice(-1000)}`));
      else resolve(JSON.parse(line) as LoadFigures);
    });
  });
}
