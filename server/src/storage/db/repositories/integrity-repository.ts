/** The SQL of `fss fsck` (operations/admin/integrity.ts): what the tree and counters should be, next to what is stored. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema';

export interface SizeMismatch {
  readonly id: number;
  readonly stored: number;
  readonly expected: number;
}

/**
 * Folders whose size differs from their files' total: a live folder counts its live files; a bin entry and folders
 * binned under it what would come back with it. Files deleted directly count nowhere.
 */
export async function folderSizeMismatches(db: Kysely<Database>): Promise<SizeMismatch[]> {
  const result = await sql<{ id: number; stored: number; expected: number }>`
    with recursive
      folder_state(id, parent_id, account_id, grp, size) as (
        select id, parent_id, account_id,
               case when deleted_at is not null then id when binned_under is not null then binned_under else 0 end,
               size
        from folders
      ),
      beneath(top, folder, grp) as (
        select id, id, grp from folder_state
        union all
        select beneath.top, child.id, beneath.grp
        from beneath join folder_state child on child.parent_id = beneath.folder and child.grp = beneath.grp
      ),
      totals(id, expected) as (
        select beneath.top, coalesce(sum(f.size), 0)
        from beneath
        left join files f on f.folder_id = beneath.folder
          and (case when f.deleted_at is not null then -f.id when f.binned_under is not null then f.binned_under else 0 end) = beneath.grp
        group by beneath.top
      )
    select folder_state.id as id, folder_state.size as stored, totals.expected as expected
    from folder_state join totals on totals.id = folder_state.id
    where folder_state.size <> totals.expected
    order by folder_state.id`.execute(db);
  return result.rows.map((row) => ({ id: Number(row.id), stored: Number(row.stored), expected: Number(row.expected) }));
}

/** Accounts whose used_bytes differs from their files' total (bin included) plus their shares' cover images. */
export async function usedBytesMismatches(db: Kysely<Database>): Promise<SizeMismatch[]> {
  const result = await sql<{ id: number; stored: number; expected: number }>`
    select a.id as id, a.used_bytes as stored, coalesce(t.total, 0) + coalesce(c.total, 0) as expected
    from accounts a
    left join (select account_id, sum(size) as total from files group by account_id) t on t.account_id = a.id
    left join (select account_id, sum(image_bytes) as total from shares group by account_id) c on c.account_id = a.id
    where a.used_bytes <> coalesce(t.total, 0) + coalesce(c.total, 0)
    order by a.id`.execute(db);
  return result.rows.map((row) => ({ id: Number(row.id), stored: Number(row.stored), expected: Number(row.expected) }));
}

export async function setFolderSize(db: Kysely<Database>, id: number, size: number): Promise<void> {
  await db.updateTable('folders').set({ size }).where('id', '=', id).execute();
}

export async function setUsedBytes(db: Kysely<Database>, accountId: number, bytes: number): Promise<void> {
  await db.updateTable('accounts').set({ used_bytes: bytes }).where('id', '=', accountId).execute();
}

export interface MisplacedItem {
  readonly type: 'folder' | 'file';
  readonly id: number;
  readonly problem: string;
}

/** Items placed impossibly: live under a non-live or foreign parent, or binned under what is not a bin entry. */
export async function misplacedItems(db: Kysely<Database>): Promise<MisplacedItem[]> {
  const found: MisplacedItem[] = [];
  for (const [type, table, parent] of [
    ['folder', 'folders', 'parent_id'],
    ['file', 'files', 'folder_id'],
  ] as const) {
    const orphaned = await sql<{ id: number }>`
      select i.id as id from ${sql.table(table)} i
      where i.deleted_at is null and i.binned_under is null and i.${sql.ref(parent)} <> 0
        and not exists (select 1 from folders p where p.id = i.${sql.ref(parent)} and p.account_id = i.account_id
                        and p.deleted_at is null and p.binned_under is null)`.execute(db);
    for (const row of orphaned.rows) found.push({ type, id: Number(row.id), problem: 'live, but its parent is not a live folder of its account' });
    const strays = await sql<{ id: number }>`
      select i.id as id from ${sql.table(table)} i
      where i.binned_under is not null
        and not exists (select 1 from folders p where p.id = i.binned_under and p.account_id = i.account_id and p.deleted_at is not null)`.execute(db);
    for (const row of strays.rows) found.push({ type, id: Number(row.id), problem: 'binned under a folder that is not in the recycle bin' });
  }
  return found;
}
