/**
 * vitest setup file of the "postgres" project (vitest.config.ts), run in each test file: a fresh
 * database for every test (helpers/postgres.ts), and the last one dropped after the file.
 */
import { afterAll, beforeEach } from 'vitest';
import { closeAdminPool, dropTestDatabase, prepareTestDatabase } from './helpers/postgres';

beforeEach(async () => {
  await prepareTestDatabase();
});

afterAll(async () => {
  await dropTestDatabase();
  await closeAdminPool();
});
