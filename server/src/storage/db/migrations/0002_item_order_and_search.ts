/**
 * Natural order for listings: every folder and file gets `sort_key` (operations/tree/names.ts
 * naturalSortKey), and listing a folder reads its children in that order from an index, so the
 * 100,000 items of a big folder stream without sorting in memory.
 *
 * Dialect: the key must compare by code point. SQLite's default BINARY collation does (UTF-8 byte
 * order is code point order); PostgreSQL compares text with the database's locale unless told
 * otherwise, so there the column is declared COLLATE "C".
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
