/**
 * `npm run build:server`: the server as one JavaScript module, dist/server/fss.mjs, which bin/fss.mjs
 * runs while it is newer than every file of server/src (docs/design.md §6).
 *
 * Why: run through tsx's loader, the sources carry a cost on every call and in memory. tsx builds
 * with esbuild's keepNames, which wraps every function created at run time in a call that sets its
 * name (some 4 % of a small call's time); and the loader keeps a thread of its own and the source
 * maps of some 200 modules (about 40 MB). The bundle is built by the same esbuild from the same
 * sources, without keepNames; packages stay external and load from node_modules as usual. A source
 * map beside it keeps stack traces in the sources' terms.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Where bin/fss.mjs looks for the bundle. */
export const SERVER_BUNDLE = path.join(REPO_ROOT, 'dist', 'server', 'fss.mjs');

const CLI = path.join(REPO_ROOT, 'server', 'src', 'cli.ts');

/**
 * Bundles server/src/cli.ts into `outfile`: a module exporting `main` (what bin/fss.mjs imports),
 * or with `command`, a script that runs `main` on its arguments (`node <outfile> serve`).
 */
export async function buildServerBundle(outfile = SERVER_BUNDLE, options: { sourcemap?: boolean; command?: boolean } = {}): Promise<string> {
  const entry = options.command
    ? { stdin: { contents: `import { main } from ${JSON.stringify(CLI)};\nprocess.exitCode = await main(process.argv.slice(2));\n`, resolveDir: REPO_ROOT, loader: 'ts' as const } }
    : { entryPoints: [CLI] };
  await build({
    ...entry,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: options.sourcemap ?? true,
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outfile = await buildServerBundle();
  console.log(`built ${path.relative(REPO_ROOT, outfile)}`);
}
