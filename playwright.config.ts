import { defineConfig } from '@playwright/test';

/**
 * End-to-end tests: the built web app (npm run test:e2e runs `vite build` first) served by the
 * real service, driven in Debian's chromium (no browser download). e2e/global-setup.ts starts
 * the service on a free port with a fresh data folder and puts its URL in FSS_E2E_BASE_URL.
 */
export default defineConfig({
  testDir: 'e2e',
  testMatch: '*.spec.ts',
  globalSetup: './e2e/global-setup.ts',
  // One service for all tests, whose login throttle counts failures per account and address:
  // one worker keeps the tests from counting against each other.
  workers: 1,
  fullyParallel: false,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  reporter: process.env.CI ? [['list'], ['html', { open: 'never' }]] : 'list',
  outputDir: 'test-results',
  use: {
    browserName: 'chromium',
    // Set by the global setup before the workers start; they read this file again.
    baseURL: process.env.FSS_E2E_BASE_URL,
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
});
