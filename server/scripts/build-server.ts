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
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Where bin/fss.mjs looks for the bundle. */
export const SERVER_BUNDLE = path.join(REPO_ROOT, 'dist', 'server', 'fss.mjs');

const CLI = path.join(REPO_ROOT, 'server', 'src', 'cli.ts');
const COMMAND = path.join(REPO_ROOT, 'server', 'scripts', 'fss-command.ts');

/**
 * Bundles server/src/cli.ts into `outfile`: a module exporting `main` (what bin/fss.mjs imports),
 * or with `command`, a script that runs `main` on its arguments (`node <outfile> serve`). Modules the
 * sources import with `import()` become chunks beside it (chunks/), so that what a configuration
 * never uses (the S3 SDK, pg, nodemailer, …) is never loaded: a bundle hoists a module's package imports.
 */
export async function buildServerBundle(outfile = SERVER_BUNDLE, options: { sourcemap?: boolean; command?: boolean } = {}): Promise<string> {
  const { metafile } = await build({
    metafile: true,
    absWorkingDir: REPO_ROOT,
    entryPoints: [{ in: options.command ? COMMAND : CLI, out: path.basename(outfile, '.mjs') }],
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: options.sourcemap ?? true,
    // Maps without the sources: traces name file and line, and a running service does not hold every source in memory.
    sourcesContent: false,
    outdir: path.dirname(outfile),
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'warning',
  });
  await removeOldChunks(path.join(path.dirname(outfile), 'chunks'), new Set(Object.keys(metafile.outputs).map((out) => path.resolve(REPO_ROOT, out))));
  return outfile;
}

/** Chunks of earlier builds, once a day old: a service started before this build may still import its own. */
async function removeOldChunks(dir: string, current: ReadonlySet<string>): Promise<void> {
  const dayAgo = Date.now() - 86_400_000;
  for (const name of await readdir(dir).catch(() => [])) {
    const file = path.join(dir, name);
    if (!current.has(file) && (await stat(file)).mtimeMs < dayAgo) await rm(file, { force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outfile = await buildServerBundle();
  console.log(`built ${path.relative(REPO_ROOT, outfile)}`);
}
