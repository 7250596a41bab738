/**
 * FileSearch for keys of 1 or 2 characters (search-repository.ts): the trigram index of 0004
 * cannot serve them, so the account's live files are scanned. This index is what the scan reads:
 * the account's live files with their name_key and folder_id, and nothing else, so that the scan
 * reads the index alone (the name_key test and the locked-folder test need no other column; the id
 * is in every index entry) rather than each file's row of the table.
 *
 * Measured on the benchmark's account of a million files (bench/README.md, FileSearch): a key that
 * matches nothing cost 240 ms of CPU reading every row through files_recent, and costs 85–95 ms
 * reading this index, about a sixth of the table's pages.
 *
 * Its condition is the listing indexes' own (0002): a file in the bin or beneath a folder in the
 * bin is not in it, so moving a folder to the bin removes its files' entries, and a restore puts
 * them back. That is why folder_id comes before name_key: the entries of one folder's files are
 * side by side, and a subtree of 100,000 files is removed from a few thousand neighbouring pages
 * of the index rather than from pages all over it (the scan reads the account's entries whole, in
 * any order). Keyed by name_key first, the index doubled the time of the benchmark's delete and
 * restore of 100,000 descendants (1.4–1.8 s to 3.3–3.9 s on a loaded machine); keyed by folder
 * first, 2.0–2.5 s in the same conditions. Both engines get it; on PostgreSQL it allows an index-only scan beside the
 * pg_trgm index, which serves keys of 3 characters or more.
 */
import { sql, type Kysely } from 'kysely';
import { migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    await db.schema
      .createIndex('files_live_name_key')
      .on('files')
      .columns(['account_id', 'folder_id', 'name_key'])
      .where(sql<boolean>`deleted_at is null and binned_under is null`)
      .execute();
  });
}
