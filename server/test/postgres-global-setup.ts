/**
 * vitest global setup of the "postgres" project (vitest.config.ts): starts one PostgreSQL server
 * for the whole run (helpers/postgres.ts), migrates the template database every test database is
 * copied from, hands the server's address to the test workers, and stops and removes the server at
 * the end.
 */
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../src/config';
import { closeDatabase, openDatabase } from '../src/storage/db/engine/database';
import { startPostgres, TEMPLATE_DATABASE } from './helpers/postgres';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  try {
    const admin = new pg.Client({ connectionString: server.urlOf('postgres') });
    await admin.connect();
    try {
      await admin.query(`create database ${TEMPLATE_DATABASE}`);
      const db = await openDatabase({ ...loadConfig({ FSS_DATABASE_URL: server.urlOf(TEMPLATE_DATABASE) }), log: () => {} });
      await closeDatabase(db);
      // Nobody connects to the template from now on, so it can be copied at any moment.
      await admin.query(`alter database ${TEMPLATE_DATABASE} with is_template true allow_connections false`);
    } finally {
      await admin.end();
    }
  } catch (error) {
    await server.stop();
    throw error;
  }
  project.provide('fssPostgres', { adminUrl: server.urlOf('postgres') });
  return () => server.stop();
}
