/** NamesTaken's query: which of a bounded list of name keys the live items of one folder hold, read from the unique live-name indexes. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema';
import { isLive } from './folder-paths';

/** The ids of the live folders and files in `folderId` (0: the root) whose name_key is one of `keys`; one query. */
export async function findItemsWithKeys(
  db: Kysely<Database>,
  accountId: number,
  folderId: number,
  keys: readonly string[],
): Promise<{ folderIds: number[]; fileIds: number[] }> {
  if (keys.length === 0) return { folderIds: [], fileIds: [] };
  const rows = await db
    .selectFrom('folders')
    .select(['folders.id', sql<number>`0`.as('is_file')])
    .where('folders.account_id', '=', accountId)
    .where('folders.parent_id', '=', folderId)
    .where('folders.name_key', 'in', keys)
    .where(isLive('folders'))
    .unionAll(
      db
        .selectFrom('files')
        .select(['files.id', sql<number>`1`.as('is_file')])
        .where('files.account_id', '=', accountId)
        .where('files.folder_id', '=', folderId)
        .where('files.name_key', 'in', keys)
        .where(isLive('files')),
    )
    .execute();
  return { folderIds: rows.filter((row) => Number(row.is_file) === 0).map((row) => row.id), fileIds: rows.filter((row) => Number(row.is_file) === 1).map((row) => row.id) };
}
