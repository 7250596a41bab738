/**
 * Every migration, in order. Listed statically (not read from a folder) so that they work the same
 * under tsx, in a bundle and in tests. Append only: a released migration never changes.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001_initial';

export const migrations: Readonly<Record<string, Migration>> = {
  '0001_initial': initial,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => ({ ...migrations }),
};
