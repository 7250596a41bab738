/**
 * The `fss` command as one JavaScript file, for the reliability suite's hundreds of starts.
 *
 * bin/fss.mjs runs the TypeScript sources through tsx's loader: every start resolves and loads
 * some 200 modules through a loader hook, about 1.3 s of CPU. The same sources bundled by esbuild
 * (the transformer tsx itself uses, so the code that runs is the same) start in about half that,
 * which is most of the cost of a kill-and-restart. Packages stay external and are loaded from
 * node_modules as usual, which is why the bundle is written inside the repository.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const CLI = path.join(REPO_ROOT, 'server', 'src', 'cli.ts');

/** Bundles server/src/cli.ts into `node_modules/.cache/fss-reliability/<name>.mjs`; answers its path. */
export async function bundleFssCommand(name: string): Promise<string> {
  const dir = path.join(REPO_ROOT, 'node_modules', '.cache', 'fss-reliability');
  mkdirSync(dir, { recursive: true });
  const outfile = path.join(dir, `${name}-${process.pid}.mjs`);
  await build({
    stdin: {
      contents: `import { main } from ${JSON.stringify(CLI)};\nprocess.exitCode = await main(process.argv.slice(2));\n`,
      resolveDir: REPO_ROOT,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}
