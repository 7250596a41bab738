import { defineConfig } from 'vitest/config';

/** Test files that never open a database: they run once, in the "sqlite" project. */
const withoutDatabase = [
  'server/test/catalog/**',
  'server/test/log.test.ts',
  'server/test/crypto/**',
  'server/test/operations/content-sniffing.test.ts',
  'server/test/operations/pdf-rendering.test.ts',
  'server/test/operations/names.test.ts',
  'server/test/operations/passwords.test.ts',
  'server/test/operations/signing.test.ts',
  'server/test/protocol/captures-binding.test.ts',
  'server/test/protocol/captures-errors.test.ts',
  'server/test/protocol/help-pages.test.ts',
  'server/test/protocol/operation-matrix.test.ts',
  'server/test/protocol/request-target.test.ts',
  'server/test/protocol/results.test.ts',
  'server/test/protocol/wire-values.test.ts',
  'server/test/protocol/wsdl.test.ts',
  'server/test/protocol/xml-reader.test.ts',
  'server/test/storage/content-store.test.ts',
  'server/test/storage/encrypted-uploads.test.ts',
  'server/test/storage/s3-upload-area.test.ts',
];

/**
 * Test files about the SQLite engine and the embedded default themselves: they run in the "sqlite"
 * project only (docs/design.md §14). serve-output.test.ts checks what `fss serve` prints on it. The
 * kill -9 tests build their big tree by writing the stopped service's SQLite file and copy whole
 * data folders, database included, for every kill. The WAL checkpoint tests read SQLite's WAL
 * index. The reliability suite (docs/reliability.md) runs against the embedded default, with its
 * budget set by FSS_RELIABILITY_BUDGET.
 */
const sqliteOnly = ['server/test/backup.test.ts', 'server/test/crash/kill-9.test.ts', 'server/test/serve-output.test.ts', 'server/test/storage/wal-checkpoints.test.ts', 'server/test/reliability/**'];

/**
 * Test files that need PostgreSQL whatever the engine under test: `fss migrate` moves an embedded
 * installation into it (and into an S3 server the test starts); several instances share one
 * database (and one bucket of an S3 server the test starts). They run in the "postgres" project only.
 */
const postgresOnly = ['server/test/migrate.test.ts', 'server/test/instances/**'];

/**
 * Test files about content (uploads, downloads, content removal, fsck, encryption, cover images):
 * they run once more in the "s3" project, with content and unfinished uploads in an S3-compatible
 * server that the project starts itself (server/test/s3-global-setup.ts, helpers/content.ts). The
 * store's own contract (storage/content-store.test.ts) runs on both stores in every run.
 */
const contentTests = [
  'server/test/protocol/uploads.test.ts',
  'server/test/protocol/downloads.test.ts',
  'server/test/protocol/previews.test.ts',
  'server/test/protocol/file-add-over-the-wire.test.ts',
  'server/test/protocol/encryption-over-the-wire.test.ts',
  'server/test/protocol/encrypted-uploads.test.ts',
  'server/test/protocol/links-over-the-wire.test.ts',
  'server/test/protocol/shares-over-the-wire.test.ts',
  'server/test/operations/content-removal.test.ts',
  'server/test/operations/integrity.test.ts',
  'server/test/operations/encryption.test.ts',
  'server/test/operations/links.test.ts',
  'server/test/operations/shares.test.ts',
  'server/test/operations/derived-images.test.ts',
  'server/test/protocol/thumbnails.test.ts',
];

// Server and client-library tests, twice for the server: on SQLite (the embedded default) and on a
// PostgreSQL server that the "postgres" project starts itself (server/test/postgres-global-setup.ts).
// Browser tests live in e2e/ and run under Playwright.
export default defineConfig({
  test: {
    environment: 'node',
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['server/test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: postgresOnly,
          env: { FSS_TEST_DATABASE: 'sqlite' },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['server/test/**/*.test.ts'],
          exclude: [...withoutDatabase, ...sqliteOnly],
          env: { FSS_TEST_DATABASE: 'postgres' },
          globalSetup: ['server/test/postgres-global-setup.ts'],
          setupFiles: ['server/test/postgres-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 's3',
          include: contentTests,
          env: { FSS_TEST_DATABASE: 'sqlite', FSS_TEST_CONTENT: 's3' },
          globalSetup: ['server/test/s3-global-setup.ts'],
        },
      },
    ],
  },
});
