#!/usr/bin/env node
// The `fss` command. `npm start` builds the server into dist/server/fss.mjs (npm run build:server,
// server/scripts/build-server.ts); while that bundle is newer than every file and folder of
// server/src, it is what runs. Otherwise (no build yet, or sources edited since) the TypeScript
// sources run through tsx's loader, so that there is never a build step between an edit and a run.
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bundle = fileURLToPath(new URL('../dist/server/fss.mjs', import.meta.url));
const sources = fileURLToPath(new URL('../server/src', import.meta.url));

/** The latest modification time of a folder, its files and its subfolders, recursively (ms). */
function newestChange(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = `${dir}/${entry.name}`;
    newest = Math.max(newest, entry.isDirectory() ? newestChange(full) : statSync(full).mtimeMs);
  }
  return newest;
}

function bundleIsCurrent() {
  try {
    return statSync(bundle).mtimeMs > newestChange(sources);
  } catch {
    return false;
  }
}

// A process warning (the AWS SDK's notice on Node 20 takes nine lines) as one line on stderr;
// `fss serve` writes them into its JSON log instead (server/src/log.ts logProcessWarnings).
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  process.stderr.write(`fss: warning: ${warning.name}: ${warning.message.replace(/\s+/g, ' ').trim()}\n`);
});

let main;
if (bundleIsCurrent()) {
  // Stack traces (incident logs) in the sources' terms, from the map beside the bundle.
  process.setSourceMapsEnabled(true);
  ({ main } = await import(bundle));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../server/src/cli.ts'));
}
process.exitCode = await main(process.argv.slice(2));
