// ESLint, run by `npm run lint` after `tsc`: a few type-aware checks for promise mistakes, and the
// import rules that keep the layers of docs/design.md §2. On the server protocol → operations →
// storage, one direction, with the catalog and the foundation files beneath them; the web client
// never reaches into the server; no import cycles anywhere.
import path from 'node:path';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

const root = import.meta.dirname;
const server = (glob) => path.join(root, 'server/src', glob);

/**
 * The server's layers, as globs (the rule needs globs throughout, hence `@(…)` around file names).
 * Files of server/src in none of them (app.ts, server.ts, cli.ts) are the app, which may import all.
 */
const layers = {
  catalog: [server('catalog/**')],
  // Settings, logging and time slices: used by every layer, depending on none.
  foundation: [server('@(config|log|time-slices|lru).ts')],
  storage: [server('storage/**')],
  operations: [server('operations/**')],
  protocol: [server('protocol/**')],
};

/** What each layer may import besides itself. */
const allowed = {
  catalog: [],
  foundation: [],
  storage: ['catalog', 'foundation'],
  operations: ['catalog', 'foundation', 'storage'],
  protocol: ['catalog', 'foundation', 'operations'],
};

// A zone per layer: from its files, nothing else in server/src except what it may import.
const layerZones = Object.entries(layers).map(([layer, files]) => ({
  target: files,
  from: [server('**')],
  except: [...files, ...allowed[layer].flatMap((other) => layers[other])],
  message: `The ${layer} layer may import only ${allowed[layer].join(', ') || 'itself'} (docs/design.md §2).`,
}));

const clientZone = {
  // The web app's own tests may import server modules, to check that both sides agree.
  target: [path.join(root, 'src/**/!(*.test).{ts,tsx}')],
  from: [path.join(root, 'server/**')],
  message: 'The web client talks to the service over HTTP only; generated code lives in src/api/generated.',
};

export default tseslint.config(
  { ignores: ['**/node_modules/**', 'dist/**', '.tmp/**', 'bench/results/**', 'test-results/**', 'playwright-report/**'] },
  {
    files: ['server/**/*.ts', 'src/**/*.{ts,tsx}', 'bench/**/*.ts', 'e2e/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: root },
    },
    // Some files carry disable comments for rules this small set does not turn on.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: {
      // no-cycle reads the modules an import leads to: the project's own are TypeScript, and
      // leaving out .js keeps it from reading the packages in node_modules.
      'import-x/extensions': ['.ts', '.tsx'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'] })],
    },
    rules: {
      // A promise nobody awaits loses its error: await it, or mark it `void` where fire-and-forget is meant.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function where a caller ignores the returned promise (a callback, a condition).
      '@typescript-eslint/no-misused-promises': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: [...layerZones, clientZone] }],
    },
  },
);
