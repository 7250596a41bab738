/**
 * Natural order for listings (`sort_key`, read from an index so big folders stream without sorting). The key
 * compares by code point: BINARY on SQLite, COLLATE "C" on PostgreSQL (whose default is the locale's).
 */
import { sql, type Kysely } from 'kysely';
import { engineOf, migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    for (const [table, parent] of [
      ['folders', 'parent_id'],
      ['files', 'folder_id'],
    ] as const) {
      await db.schema
        .alterTable(table)
        .addColumn('sort_key', 'text', (col) => {
          const withCollation = engineOf(db) === 'postgres' ? col.modifyEnd(sql`collate "C"`) : col;
          return withCollation.notNull().defaultTo('');
        })
        .execute();
      // The listing of a folder: its live children in natural order, ties broken by id.
      await db.schema
        .createIndex(`${table}_listing`)
        .on(table)
        .columns(['account_id', parent, 'sort_key', 'id'])
        .where(sql<boolean>`deleted_at is null and binned_under is null`)
        .execute();
    }
  });
}
