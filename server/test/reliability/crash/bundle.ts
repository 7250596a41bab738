/**
 * The `fss` command as one JavaScript file, for the reliability suite's hundreds of starts.
 *
 * bin/fss.mjs runs the built server only while it is newer than the sources, else the TypeScript
 * sources through tsx's loader: every start then resolves and loads some 200 modules through a
 * loader hook, about 1.3 s of CPU. The suite builds a bundle of its own (server/scripts/build-server.ts,
 * the same esbuild build `npm start` runs), which starts in about half that, most of the cost of a
 * kill-and-restart. Packages stay external and are loaded from node_modules as usual, which is why
 * the bundle is written inside the repository.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServerBundle } from '../../../scripts/build-server';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/** Bundles the `fss` command into a folder of its own (its chunks beside it) under `node_modules/.cache/fss-reliability/`; answers its path. */
export async function bundleFssCommand(name: string): Promise<string> {
  const dir = path.join(REPO_ROOT, 'node_modules', '.cache', 'fss-reliability');
  return buildServerBundle(path.join(dir, `${name}-${process.pid}`, 'fss.mjs'), { command: true, sourcemap: false });
}
