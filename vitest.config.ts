import { defineConfig } from 'vitest/config';

// Server and client-library tests. Browser tests live in e2e/ and run under Playwright.
export default defineConfig({
  test: {
    include: ['server/test/**/*.test.ts', 'src/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
