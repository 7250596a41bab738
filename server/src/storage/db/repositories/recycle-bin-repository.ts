/**
 * SQL for the recycle bin; the rules are operations/tree/recycle-bin.ts, the storage (`binned_under`, the invariant
 * "beneath an item that is not live, nothing is live") docs/design.md, "The bin". Statements work on sets, in
 * batches (batches.ts); VALUES parameters are cast (PostgreSQL types them as text); CROSS JOIN fixes SQLite's join order.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { inBatches, ROWS_PER_STATEMENT, selectInChunks, TimeSlices } from '../engine/batches';
import { alongWaysUp, escapeLike, foldersAbove, idList, liveNamesIn, type LiveName, MAX_WALK_DEPTH } from './items-repository';
import type { Database } from '../schema';

export type ItemTable = 'folders' | 'files';

const parentColumn = { folders: 'parent_id', files: 'folder_id' } as const;

/** Where an item is: live, an entry of the bin (deleted directly), or beneath a folder in the bin. */
export type ItemState = 'live' | 'deleted' | 'beneath';

export interface ItemStatus {
  readonly id: number;
  /** parent_id or folder_id; 0 = the root. */
  readonly parentId: number;
  readonly name: string;
  /** A file's size; a folder's kept size (for a folder in the bin: what comes back with it). */
  readonly size: number;
  readonly state: ItemState;
  /** When it was deleted directly (state 'deleted'), else null. */
  readonly deletedAt: Date | null;
  /** The folder in the bin it lies beneath (state 'beneath'), else null. */
  readonly binnedUnder: number | null;
}

/** items-repository's ownedBy (unary plus: the ids drive, not the account's index), for any column. */
function ownedBy(accountId: number, column = 'account_id'): RawBuilder<unknown> {
  return sql`+${sql.ref(column)} = ${accountId}`;
}

interface StatusRow {
  id: number;
  parent_id: number;
  name: string;
  size: number;
  deleted_at: number | null;
  binned_under: number | null;
}

/** The account's items of `table` among `ids`, whatever their state; fewer rows than ids = missing or another's. */
export async function findItemStates(
  db: Kysely<Database>,
  accountId: number,
  table: ItemTable,
  ids: readonly number[],
): Promise<ItemStatus[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<StatusRow>`
    select id, ${sql.ref(parentColumn[table])} as parent_id, name, size, deleted_at, binned_under
    from ${sql.table(table)}
    where ${ownedBy(accountId)} and id in ${idList(ids)}`.execute(db);
  return rows.map((row) => ({
    id: Number(row.id),
    parentId: Number(row.parent_id),
    name: row.name,
    size: Number(row.size),
    state: row.deleted_at !== null ? 'deleted' : row.binned_under !== null ? 'beneath' : 'live',
    deletedAt: row.deleted_at === null ? null : new Date(Number(row.deleted_at)),
    binnedUnder: row.binned_under === null ? null : Number(row.binned_under),
  }));
}

/** For each folder of `starts`, the nearest folder of `among` on its chain (itself included): one walk up from all. */
export async function nearestAmong(
  db: Kysely<Database>,
  accountId: number,
  starts: readonly number[],
  among: readonly number[],
): Promise<Map<number, number>> {
  const seeds = [...new Set(starts)].filter((id) => id !== 0);
  if (seeds.length === 0 || among.length === 0) return new Map();
  const wanted = new Set(among);
  const nearest = alongWaysUp<number | null>(await foldersAbove(db, accountId, seeds), seeds, null, (id, _way, above) => (wanted.has(id) ? id : above));
  return new Map([...nearest].filter((entry): entry is [number, number] => entry[1] !== null));
}

/** One item to put in the bin, with its original parent path (`/A/B`, `/` for the root). */
export interface BinEntry {
  readonly id: number;
  readonly from: string;
}

/** Characters of paths one statement of markDeleted writes: 1,000 paths 256 folders deep are 64 MiB. */
const PATH_CHARACTERS_PER_STATEMENT = 1 << 20;

/** Makes the items entries of the bin (deleted_at, deleted_from = path), a statement per 1,000 entries or MiB of paths. */
export async function markDeleted(
  db: Kysely<Database>,
  accountId: number,
  table: ItemTable,
  entries: readonly BinEntry[],
  at: Date,
): Promise<void> {
  const slices = new TimeSlices();
  for (let start = 0; start < entries.length; ) {
    let end = start + 1;
    let characters = entries[start].from.length;
    while (end < entries.length && end - start < ROWS_PER_STATEMENT && characters + entries[end].from.length <= PATH_CHARACTERS_PER_STATEMENT) {
      characters += entries[end].from.length;
      end++;
    }
    const values = sql.join(entries.slice(start, end).map((entry) => sql`(cast(${entry.id} as bigint), cast(${entry.from} as text))`));
    await sql`
      with marked(id, deleted_from) as (values ${values})
      update ${sql.table(table)}
      set deleted_at = ${at.getTime()}, deleted_from = marked.deleted_from
      from marked
      where ${sql.ref(`${table}.id`)} = marked.id and ${ownedBy(accountId, `${table}.account_id`)}`.execute(db);
    start = end;
    await slices.pauseIfDue();
  }
}

/**
 * Sets binned_under = F on every live item beneath each folder F of `folderIds`: a walk down live folders only (so
 * earlier entries keep their own subtrees), costing the subtree's size, never the account's; in batches.
 */
export async function binSubtrees(db: Kysely<Database>, accountId: number, folderIds: readonly number[]): Promise<void> {
  const slices = new TimeSlices();
  for (const root of folderIds) {
    const beneath = await selectInChunks(
      db,
      sql<{ id: number }>`
        with recursive subtree(id, depth) as (
          select cast(${root} as bigint), 0
          union all
          select f.id, s.depth + 1
          from subtree s cross join folders f
          where f.account_id = ${accountId} and f.parent_id = s.id
            and f.deleted_at is null and f.binned_under is null and s.depth < ${MAX_WALK_DEPTH}
        )
        select id from subtree where depth > 0`,
      slices,
    );
    const folders = beneath.map((row) => Number(row.id));
    await inBatches(folders, slices, (batch) => sql`update folders set binned_under = ${root} where id in ${idList(batch)}`.execute(db));
    // Files in F itself get F; so do files in the folders binned under F.
    const files: number[] = [];
    await inBatches([root, ...folders], slices, async (holders) => {
      const rows = await selectInChunks(
        db,
        sql<{ id: number }>`
          select id from files
          where account_id = ${accountId} and folder_id in ${idList(holders)} and deleted_at is null and binned_under is null`,
        slices,
      );
      for (const row of rows) files.push(Number(row.id));
    });
    await inBatches(files, slices, (batch) => sql`update files set binned_under = ${root} where id in ${idList(batch)}`.execute(db));
  }
}

/**
 * down(root, id, level): each folder entry of `roots` and the folders binned under it, fewer than `levels` levels down.
 * CROSS JOIN: each level's folders drive, their children are read through the parent index.
 */
function binnedDown(accountId: number, roots: readonly number[], levels: number): RawBuilder<unknown> {
  return sql`
    with recursive down(root, id, level) as (
      select id, id, 0 from folders where ${ownedBy(accountId)} and id in ${idList(roots)}
      union all
      select d.root, f.id, d.level + 1
      from down d cross join folders f
      where f.account_id = ${accountId} and f.parent_id = d.id and f.binned_under = d.root and d.level < ${levels}
    )`;
}

/** What comes back with folders of the bin, as levels (binnedLevels). */
export interface BinnedLevels {
  /** For each folder: how many levels of folders binned under it lie beneath it (0: none). */
  readonly heights: Map<number, number>;
  /** For each folder of `wanted` found beneath one of them: its level there (1: a child). */
  readonly levels: Map<number, number>;
}

/** For each folder entry among `roots`, the levels of folders binned under it, walking at most `atMost` + 1 levels. */
export async function binnedLevels(
  db: Kysely<Database>,
  accountId: number,
  roots: readonly number[],
  atMost: number,
  wanted: readonly number[],
): Promise<BinnedLevels> {
  if (roots.length === 0) return { heights: new Map(), levels: new Map() };
  const { rows } = await sql<{ root: number; id: number | null; level: number }>`
    ${binnedDown(accountId, roots, atMost + 1)}
    select root, cast(null as bigint) as id, max(level) as level from down group by root
    union all
    select root, id, level from down where id in ${idList(wanted)}`.execute(db);
  const heights = new Map<number, number>();
  const levels = new Map<number, number>();
  for (const row of rows) {
    if (row.id === null) heights.set(Number(row.root), Number(row.level));
    else levels.set(Number(row.id), Number(row.level));
  }
  return { heights, levels };
}

/** Makes the subtrees of the folders `folderIds` (being restored) live again, in batches (batches.ts). */
export async function unbinSubtrees(db: Kysely<Database>, accountId: number, folderIds: readonly number[]): Promise<void> {
  if (folderIds.length === 0) return;
  const slices = new TimeSlices();
  for (const table of ['folders', 'files'] as const) {
    const rows = await selectInChunks(db, sql<{ id: number }>`select id from ${sql.table(table)} where ${ownedBy(accountId)} and binned_under in ${idList(folderIds)}`, slices);
    const ids = rows.map((row) => Number(row.id));
    await inBatches(ids, slices, (batch) => sql`update ${sql.table(table)} set binned_under = null where id in ${idList(batch)}`.execute(db));
  }
}

/** One restored item: its parent from now on and its name as stored (name, key, sort key). */
export interface RestoredEntry {
  readonly id: number;
  readonly parentId: number;
  readonly name: string;
  readonly key: string;
  readonly sortKey: string;
}

/** Takes the items out of the bin into their parents, under their (possibly suffixed) names. */
export async function markRestored(db: Kysely<Database>, accountId: number, table: ItemTable, entries: readonly RestoredEntry[]): Promise<void> {
  const parent = sql.ref(parentColumn[table]);
  // In batches: each row given back drops its path from the bin (up to 64 KiB at the deepest).
  await inBatches(entries, new TimeSlices(), async (batch) => {
    const values = sql.join(
      batch.map(
        (e) =>
          sql`(cast(${e.id} as bigint), cast(${e.parentId} as bigint), cast(${e.name} as text), cast(${e.key} as text), cast(${e.sortKey} as text))`,
      ),
    );
    await sql`
      with restored(id, parent_id, name, name_key, sort_key) as (values ${values})
      update ${sql.table(table)}
      set ${parent} = restored.parent_id, name = restored.name, name_key = restored.name_key, sort_key = restored.sort_key,
          deleted_at = null, deleted_from = null
      from restored
      where ${sql.ref(`${table}.id`)} = restored.id and ${ownedBy(accountId, `${table}.account_id`)}`.execute(db);
  });
}

/** Which of `keys` the live items directly in folders `folderIds` use, one query over both tables. */
export async function findLiveKeys(db: Kysely<Database>, accountId: number, folderIds: readonly number[], keys: readonly string[]): Promise<LiveName[]> {
  return keys.length === 0 ? [] : liveNamesIn(db, accountId, folderIds, sql`name_key in (${sql.join(keys)})`);
}

/** The live keys directly in the folders `folderIds` that contain `fragment`, in one query over both tables. */
export async function findLiveKeysContaining(db: Kysely<Database>, accountId: number, folderIds: readonly number[], fragment: string): Promise<LiveName[]> {
  return liveNamesIn(db, accountId, folderIds, sql`name_key like ${`%${escapeLike(fragment)}%`} escape '!'`);
}

/** What a permanent deletion removes: folders by id, files by id with their sizes. */
export interface Doomed {
  readonly folderIds: readonly number[];
  readonly files: ReadonlyMap<number, number>;
}

/** Rows of `id, size` (files) into the map of a Doomed. */
function addFiles(files: Map<number, number>, rows: ReadonlyArray<{ id: number; size: number }>): void {
  for (const row of rows) files.set(Number(row.id), Number(row.size));
}

/**
 * Deletes `doomed` for good with its shares (cover images queued for removal) and links, nothing needing it left beneath;
 * returns the bytes leaving the account's used bytes. Content rows are left to content removal (operations/content/content-removal.ts).
 */
export async function deleteItems(db: Kysely<Database>, accountId: number, doomed: Doomed, now: Date, slices = new TimeSlices()): Promise<{ bytes: number; items: number }> {
  const fileIds = [...doomed.files.keys()];
  const items = fileIds.length + doomed.folderIds.length;
  if (items === 0) return { bytes: 0, items: 0 };
  const owned = ownedBy(accountId);
  await inBatches(fileIds, slices, (batch) => sql`delete from links where ${owned} and file_id in ${idList(batch)}`.execute(db));
  let covers = 0;
  for (const [itemType, ids] of [
    ['file', fileIds],
    ['folder', doomed.folderIds],
  ] as const) {
    await inBatches(ids, slices, async (batch) => {
      const cover = await sql<{ bytes: number | null }>`
        select sum(image_bytes) as bytes from shares where ${owned} and item_type = ${itemType} and item_id in ${idList(batch)}`.execute(db);
      covers += Number(cover.rows[0]?.bytes ?? 0);
      // A share's cover image is a blob with no content row: queue it in the same transaction, so
      // that it goes with the share and nothing is left for fsck to find.
      await sql`
        insert into content_removals (storage_key, created_at, due_at)
        select image_key, ${now.getTime()}, ${now.getTime()} from shares
        where ${owned} and image_key is not null and item_type = ${itemType} and item_id in ${idList(batch)}
        on conflict (storage_key) do nothing`.execute(db);
      await sql`delete from shares where ${owned} and item_type = ${itemType} and item_id in ${idList(batch)}`.execute(db);
    });
  }
  await inBatches(fileIds, slices, (batch) => sql`delete from files where ${owned} and id in ${idList(batch)}`.execute(db));
  await inBatches(doomed.folderIds, slices, (batch) => sql`delete from folders where ${owned} and id in ${idList(batch)}`.execute(db));
  let bytes = covers;
  for (const size of doomed.files.values()) bytes += size;
  return { bytes, items };
}

/**
 * Deletes for good folders `folderIds` with everything live or binned beneath them, and files `fileIds`. Earlier
 * entries beneath are not walked into: they stay in the bin. Returns the bytes deleted; sizes are the caller's.
 */
export async function deleteSubtrees(
  db: Kysely<Database>,
  accountId: number,
  folderIds: readonly number[],
  fileIds: readonly number[],
  now: Date,
): Promise<{ bytes: number; items: number }> {
  if (folderIds.length === 0 && fileIds.length === 0) return { bytes: 0, items: 0 };
  const slices = new TimeSlices();
  const folders =
    folderIds.length === 0
      ? []
      : await selectInChunks(
          db,
          sql<{ id: number }>`
            with recursive doomed(id, depth) as (
              select id, 0 from folders where ${ownedBy(accountId)} and id in ${idList(folderIds)}
              union all
              select f.id, d.depth + 1
              from doomed d cross join folders f
              where f.account_id = ${accountId} and f.parent_id = d.id and f.deleted_at is null and d.depth < ${MAX_WALK_DEPTH}
            )
            select id from doomed`,
          slices,
        );
  const doomedFolders = folders.map((row) => Number(row.id));
  const files = new Map<number, number>();
  if (fileIds.length > 0) {
    addFiles(files, await selectInChunks(db, sql<{ id: number; size: number }>`select id, size from files where ${ownedBy(accountId)} and id in ${idList(fileIds)}`, slices));
  }
  await inBatches(doomedFolders, slices, async (batch) =>
    addFiles(
      files,
      await selectInChunks(
        db,
        sql<{ id: number; size: number }>`select id, size from files where account_id = ${accountId} and folder_id in ${idList(batch)} and deleted_at is null`,
        slices,
      ),
    ),
  );
  return deleteItems(db, accountId, { folderIds: doomedFolders, files }, now, slices);
}

// ---- Emptying the bin in steps (operations/tree/recycle-bin.ts emptyBin) -------------------------------

/** The entries of a bin, by table. */
export interface BinEntries {
  readonly folderIds: readonly number[];
  readonly fileIds: readonly number[];
}

/** The entries of the account's bin deleted before `before` (ms), read in chunks (the bin index). */
export async function findBinEntries(db: Kysely<Database>, accountId: number, before: number): Promise<BinEntries> {
  const slices = new TimeSlices();
  const entries = (table: ItemTable) =>
    selectInChunks(db, sql<{ id: number }>`select id from ${sql.table(table)} where account_id = ${accountId} and deleted_at is not null and deleted_at < ${before}`, slices);
  const folders = await entries('folders');
  const files = await entries('files');
  return { folderIds: folders.map((row) => Number(row.id)), fileIds: files.map((row) => Number(row.id)) };
}

/** Those of `ids` that are still entries of the account's bin deleted before `before`, with their sizes (id → size). */
export async function entriesStill(db: Kysely<Database>, accountId: number, table: ItemTable, ids: readonly number[], before: number): Promise<Map<number, number>> {
  const found = new Map<number, number>();
  if (ids.length === 0) return found;
  const { rows } = await sql<{ id: number; size: number }>`
    select id, size from ${sql.table(table)} where ${ownedBy(accountId)} and id in ${idList(ids)} and deleted_at is not null and deleted_at < ${before}`.execute(db);
  addFiles(found, rows);
  return found;
}

/** A file beneath a folder of the bin: what deleting it takes from the sizes of the folders it was in. */
export interface BinnedFile {
  readonly id: number;
  readonly size: number;
  readonly folderId: number;
}

/** Up to `limit` of the files binned under the folder entries `entries` (the binned_under index). */
export async function filesBinnedUnder(db: Kysely<Database>, accountId: number, entries: readonly number[], limit: number): Promise<BinnedFile[]> {
  if (entries.length === 0) return [];
  const { rows } = await sql<{ id: number; size: number; folder_id: number }>`
    select id, size, folder_id from files where binned_under in ${idList(entries)} and ${ownedBy(accountId)} limit ${limit}`.execute(db);
  return rows.map((row) => ({ id: Number(row.id), size: Number(row.size), folderId: Number(row.folder_id) }));
}

/** The folders binned under `entries`, in levels, deepest first (no folder of a level is another's parent). */
export async function binnedFolderLevels(db: Kysely<Database>, accountId: number, entries: readonly number[]): Promise<number[][]> {
  if (entries.length === 0) return [];
  const rows = await selectInChunks(db, sql<{ id: number; level: number }>`${binnedDown(accountId, entries, MAX_WALK_DEPTH)} select id, level from down where level > 0`, new TimeSlices());
  const levels: number[][] = [];
  for (const row of rows) (levels[Number(row.level) - 1] ??= []).push(Number(row.id));
  return levels.filter((level) => level !== undefined).reverse();
}

/** Those of binned folders `ids` with nothing binned left in them, so deleting one orphans no row. */
export async function emptiedBinnedFolders(db: Kysely<Database>, accountId: number, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: number }>`
    select f.id from folders f
    where ${ownedBy(accountId, 'f.account_id')} and f.id in ${idList(ids)} and f.binned_under is not null
      and not exists (select 1 from folders c where c.account_id = ${accountId} and c.parent_id = f.id and c.binned_under is not null)
      and not exists (select 1 from files c where c.account_id = ${accountId} and c.folder_id = f.id and c.binned_under is not null)`.execute(db);
  return rows.map((row) => Number(row.id));
}

/** Those of the folder entries `ids` with nothing binned under them any more (their size is then 0). */
export async function emptiedFolderEntries(db: Kysely<Database>, accountId: number, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: number }>`
    select f.id from folders f
    where ${ownedBy(accountId, 'f.account_id')} and f.id in ${idList(ids)}
      and not exists (select 1 from folders c where c.binned_under = f.id)
      and not exists (select 1 from files c where c.binned_under = f.id)`.execute(db);
  return rows.map((row) => Number(row.id));
}

/** Gives back `bytes` of the account's quota (files deleted for good, cover images removed). */
export async function releaseUsedBytes(db: Kysely<Database>, accountId: number, bytes: number): Promise<void> {
  if (bytes === 0) return;
  await db
    .updateTable('accounts')
    .set((eb) => ({ used_bytes: eb('used_bytes', '-', bytes) }))
    .where('id', '=', accountId)
    .execute();
}

/** An entry of some account's bin, deleted directly before a cutoff. */
export interface ExpiredEntry {
  readonly table: ItemTable;
  readonly id: number;
  readonly accountId: number;
  readonly deletedAt: Date;
}

/** Up to `limit` entries of any bins deleted before `before`: accounts drive, so the cost follows accounts and hits, not bin sizes. */
export async function findExpiredEntries(db: Kysely<Database>, before: Date, limit: number): Promise<ExpiredEntry[]> {
  const cutoff = before.getTime();
  const expired = (table: ItemTable) => sql`
    select ${sql.lit(table)} as item_table, item.id, item.account_id, item.deleted_at
    from accounts cross join ${sql.table(table)} as item
    where item.account_id = accounts.id and item.deleted_at is not null and item.deleted_at < ${cutoff}`;
  const { rows } = await sql<{ item_table: ItemTable; id: number; account_id: number; deleted_at: number }>`
    ${expired('folders')}
    union all
    ${expired('files')}
    limit ${limit}`.execute(db);
  return rows.map((row) => ({
    table: row.item_table,
    id: Number(row.id),
    accountId: Number(row.account_id),
    deletedAt: new Date(Number(row.deleted_at)),
  }));
}

/** How many rows (folders and files) lie beneath each folder of the bin `folderIds`, by the binned_under index. */
export async function countBinnedUnder(db: Kysely<Database>, folderIds: readonly number[]): Promise<Map<number, number>> {
  if (folderIds.length === 0) return new Map();
  const { rows } = await sql<{ id: number; n: number }>`
    select binned_under as id, count(*) as n from (
      select binned_under from folders where binned_under in ${idList(folderIds)}
      union all
      select binned_under from files where binned_under in ${idList(folderIds)}
    ) as beneath
    group by binned_under`.execute(db);
  return new Map(rows.map((row) => [Number(row.id), Number(row.n)]));
}
