/**
 * SQL for the tree of folders and files. Every lookup is limited to one account's live items (so a missing id,
 * another account's and a binned one look alike), ids are checked as sets, and walks up are one recursive CTE.
 * Names arrive as ItemName (operations/tree/names.ts storedName), so no insert or rename can forget a key.
 */
import { sql, type Insertable, type Kysely, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import type { FileItem, FolderItem } from '../../../catalog/results';
import type { Database, FilesTable } from '../schema';
import { toFileItem, toFolderItem } from './item-rows';

/** A name as stored: the name, its uniqueness key (name_key) and its natural sort key (sort_key). */
export interface ItemName {
  readonly name: string;
  readonly key: string;
  readonly sortKey: string;
}

/** A live folder of the tree, as its item. */
export type FolderRecord = FolderItem;

/** A live file of the tree, as its item, with the content its bytes are in. */
export type FileRecord = FileItem & { readonly contentId: number };

export interface NewFolder {
  readonly accountId: number;
  readonly parentId: number;
  readonly name: ItemName;
  readonly at: Date;
}

export interface NewFile {
  readonly accountId: number;
  readonly folderId: number;
  readonly name: ItemName;
  readonly ext: string;
  readonly size: number;
  readonly sha256: string;
  readonly contentId: number;
  /** The key its content is encrypted with (an upload encrypted as it arrived); null for plaintext. */
  readonly keyId: number | null;
  readonly at: Date;
}

/** A live name in a folder, from either table. */
export interface TakenName {
  readonly kind: 'folder' | 'file';
  readonly name: string;
  readonly key: string;
}

/** One link of a folder's chain of ancestors. */
export interface ChainLink {
  readonly id: number;
  readonly name: string;
}

/** Bounds every walk up the tree: moves refuse cycles, but a corrupt row must not loop forever. */
export const MAX_WALK_DEPTH = 100_000;

/** `(1, 2, 3)` for an IN list; `(null)` (matches nothing on both engines) when empty, which `in ()` cannot say. */
export function idList(ids: readonly number[]): RawBuilder<unknown> {
  return ids.length === 0 ? sql`(null)` : sql`(${sql.join(ids)})`;
}

/** For single-table queries on folders or files. */
const isLive = sql<SqlBool>`deleted_at is null and binned_under is null`;

/**
 * `account_id = A` that no index serves (unary plus), so an id list drives: otherwise SQLite walks the account's
 * index (13 ms in an account of 200,000 files, 0.7 ms by the ids). PostgreSQL plans from its statistics anyway.
 */
const ownedBy = (accountId: number) => sql<SqlBool>`+account_id = ${accountId}`;

const folderColumns = ['id', 'parent_id', 'name', 'size', 'updated_at', 'shared', 'linked', 'encrypted'] as const;
const fileColumns = [
  'id',
  'folder_id',
  'name',
  'ext',
  'size',
  'sha256',
  'content_id',
  'updated_at',
  'shared',
  'linked',
  'encrypted',
] as const;

type FileRow = Pick<Selectable<FilesTable>, (typeof fileColumns)[number]>;

const toFile = (row: FileRow): FileRecord => ({ ...toFileItem(row), contentId: row.content_id });

/** The live folders of the account among `ids`, in one query. Fewer rows than ids = some are not the caller's. */
export async function findLiveFolders(db: Kysely<Database>, accountId: number, ids: readonly number[]): Promise<FolderRecord[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('folders')
    .select(folderColumns)
    .where(ownedBy(accountId))
    .where('id', 'in', ids)
    .where(isLive)
    .execute();
  return rows.map((row) => toFolderItem(row));
}

/** The live files of the account among `ids`, in one query. */
export async function findLiveFiles(db: Kysely<Database>, accountId: number, ids: readonly number[]): Promise<FileRecord[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('files')
    .select(fileColumns)
    .where(ownedBy(accountId))
    .where('id', 'in', ids)
    .where(isLive)
    .execute();
  return rows.map(toFile);
}

export async function insertFolder(db: Kysely<Database>, folder: NewFolder): Promise<FolderRecord> {
  const at = folder.at.getTime();
  const row = await db
    .insertInto('folders')
    .values({
      account_id: folder.accountId,
      parent_id: folder.parentId,
      name: folder.name.name,
      name_key: folder.name.key,
      sort_key: folder.name.sortKey,
      created_at: at,
      updated_at: at,
    })
    .returning(folderColumns)
    .executeTakeFirstOrThrow();
  return toFolderItem(row);
}

export async function insertFile(db: Kysely<Database>, file: NewFile): Promise<FileRecord> {
  const row = await db.insertInto('files').values(newFileRow(file.accountId, file, file.at.getTime())).returning(fileColumns).executeTakeFirstOrThrow();
  return toFile(row);
}

/** The columns of a new file row (an added file, or Copy's): `encrypted` follows its key. */
export function newFileRow(accountId: number, file: Omit<NewFile, 'accountId' | 'at'>, at: number): Insertable<FilesTable> {
  return {
    account_id: accountId,
    folder_id: file.folderId,
    name: file.name.name,
    name_key: file.name.key,
    sort_key: file.name.sortKey,
    ext: file.ext,
    size: file.size,
    sha256: file.sha256,
    content_id: file.contentId,
    key_id: file.keyId,
    encrypted: file.keyId === null ? 0 : 1,
    created_at: at,
    updated_at: at,
  };
}

/** Renames a live folder of the account; undefined when there is none with that id. */
export async function renameFolder(
  db: Kysely<Database>,
  accountId: number,
  id: number,
  name: ItemName,
  at: Date,
): Promise<FolderRecord | undefined> {
  const row = await db
    .updateTable('folders')
    .set({ name: name.name, name_key: name.key, sort_key: name.sortKey, updated_at: at.getTime() })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where(isLive)
    .returning(folderColumns)
    .executeTakeFirst();
  return row && toFolderItem(row);
}

/** Renames a live file of the account; its extension changes with its name. */
export async function renameFile(
  db: Kysely<Database>,
  accountId: number,
  id: number,
  name: ItemName,
  ext: string,
  at: Date,
): Promise<FileRecord | undefined> {
  const row = await db
    .updateTable('files')
    .set({ name: name.name, name_key: name.key, sort_key: name.sortKey, ext, updated_at: at.getTime() })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where(isLive)
    .returning(fileColumns)
    .executeTakeFirst();
  return row && toFile(row);
}

/** Puts the folders or files `ids` into folder `parentId`. Sizes are the caller's to adjust (adjustFolderSizes). */
export async function moveItems(db: Kysely<Database>, accountId: number, table: 'folders' | 'files', ids: readonly number[], parentId: number): Promise<void> {
  if (ids.length === 0) return;
  await sql`update ${sql.table(table)} set ${sql.ref(table === 'folders' ? 'parent_id' : 'folder_id')} = ${parentId} where ${ownedBy(accountId)} and id in ${idList(ids)}`.execute(db);
}

/** The folder and its ancestors, root first (`/A/B` for B; empty for 0 or another's). X is in Y's subtree iff Y is in X's chain. */
export async function folderChain(db: Kysely<Database>, accountId: number, folderId: number): Promise<ChainLink[]> {
  const { rows } = await sql<ChainLink>`
    with recursive chain(id, parent_id, name, depth) as (
      select id, parent_id, name, 0 from folders where id = ${folderId} and account_id = ${accountId}
      union all
      select f.id, f.parent_id, f.name, c.depth + 1
      from folders f join chain c on f.id = c.parent_id
      where c.depth < ${MAX_WALK_DEPTH}
    )
    select id, name from chain order by depth desc`.execute(db);
  return rows.map((row) => ({ id: Number(row.id), name: row.name }));
}

/** How deep a folder lies (1 in the root, 0 for the root), walking at most `atMost` + 1 levels up. */
export async function folderDepth(db: Kysely<Database>, accountId: number, folderId: number, atMost: number): Promise<number> {
  if (folderId === 0) return 0;
  const { rows } = await sql<{ depth: number | null }>`
    with recursive chain(parent_id, depth) as (
      select parent_id, 1 from folders where id = ${folderId} and account_id = ${accountId}
      union all
      select f.parent_id, c.depth + 1
      from chain c cross join folders f
      where f.id = c.parent_id and f.account_id = ${accountId} and c.depth <= ${atMost}
    )
    select max(depth) as depth from chain`.execute(db);
  return Number(rows[0]?.depth ?? 0);
}

/** A folder on the way up from others (foldersAbove): its parent, and its key if it is encrypted. */
export interface WayUp {
  readonly parentId: number;
  readonly keyId: number | null;
}

/**
 * Each of `folderIds` and every folder above them, in any state, in one query (UNION also ends a corrupt cycle):
 * walks up from many folders start here, so their cost follows the folders on the ways, never folders × depth.
 */
export async function foldersAbove(db: Kysely<Database>, accountId: number, folderIds: readonly number[]): Promise<Map<number, WayUp>> {
  const seeds = [...new Set(folderIds)].filter((id) => id !== 0);
  if (seeds.length === 0) return new Map();
  const { rows } = await sql<{ id: number; parent_id: number; key_id: number | null }>`
    with recursive up(id, parent_id, key_id) as (
      select id, parent_id, key_id from folders where account_id = ${accountId} and id in (${sql.join(seeds.map((id) => sql`${id}`))})
      union
      select f.id, f.parent_id, f.key_id from up cross join folders f where f.id = up.parent_id and f.account_id = ${accountId}
    )
    select id, parent_id, key_id from up`.execute(db);
  return new Map(rows.map((row) => [Number(row.id), { parentId: Number(row.parent_id), keyId: row.key_id === null ? null : Number(row.key_id) }]));
}

/** For each of `starts`, `step` applied down its chain from `atRoot`, each shared folder stepped once; a broken chain is absent. */
export function alongWaysUp<T, W extends { readonly parentId: number } = WayUp>(
  ways: ReadonlyMap<number, W>,
  starts: readonly number[],
  atRoot: T,
  step: (folderId: number, way: W, parent: T) => T,
): Map<number, T> {
  const made = new Map<number, T>([[0, atRoot]]);
  for (const start of starts) {
    // Up to the first folder already made, then down again.
    const path: number[] = [];
    let id = start;
    while (!made.has(id) && ways.has(id) && path.length <= ways.size) {
      path.push(id);
      id = ways.get(id)!.parentId;
    }
    if (!made.has(id)) continue;
    for (let i = path.length - 1; i >= 0; i--) made.set(path[i], step(path[i], ways.get(path[i])!, made.get(ways.get(path[i])!.parentId)!));
  }
  return new Map(starts.filter((id) => made.has(id)).map((id) => [id, made.get(id)!]));
}

/** How deep each of `folderIds` lies (as folderDepth), in one query; a folder whose chain misses the root is absent. */
export async function folderDepths(db: Kysely<Database>, accountId: number, folderIds: readonly number[]): Promise<Map<number, number>> {
  const ways = await foldersAbove(db, accountId, folderIds);
  return alongWaysUp(ways, folderIds.filter((id) => id !== 0), 0, (_id, _way, parentDepth) => parentDepth + 1);
}

/**
 * For each folder of `roots`, how many levels of live folders lie beneath it (walking at most `atMost` + 1); roots
 * are not walked into from another root (a Move of a folder and a folder inside it moves both).
 */
export async function liveSubtreeHeights(db: Kysely<Database>, accountId: number, roots: readonly number[], atMost: number): Promise<Map<number, number>> {
  if (roots.length === 0) return new Map();
  const ids = sql.join(roots.map((id) => sql`${id}`));
  // CROSS JOIN: each level's folders drive, their children are read through the parent index.
  const { rows } = await sql<{ root: number; height: number }>`
    with recursive down(root, id, level) as (
      select id, id, 0 from folders where account_id = ${accountId} and id in (${ids})
      union all
      select d.root, f.id, d.level + 1
      from down d cross join folders f
      where f.account_id = ${accountId} and f.parent_id = d.id and f.deleted_at is null and f.binned_under is null
        and f.id not in (${ids}) and d.level <= ${atMost}
    )
    select root, max(level) as height from down group by root`.execute(db);
  return new Map(rows.map((row) => [Number(row.root), Number(row.height)]));
}

/** Rows per UPDATE of adjustFolderSizes: two parameters each, well within either engine's limit. */
const SIZE_ROWS_PER_STATEMENT = 2_000;

/**
 * Adds each folder's `delta` to it and all its ancestors, once the tree has its final shape; the folders on the ways
 * are read once and updated once, so 1,000 starts 256 deep cost their distinct ancestors, not 256,000 rows.
 * `stopAt`: bin entries, which keep what reaches them (their size left their ancestors when binned).
 */
export async function adjustFolderSizes(
  db: Kysely<Database>,
  accountId: number,
  deltas: ReadonlyMap<number, number>,
  stopAt: ReadonlySet<number> = new Set(),
): Promise<void> {
  const seeds = [...deltas].filter(([folderId, delta]) => folderId !== 0 && delta !== 0);
  if (seeds.length === 0) return;
  const ways = await foldersAbove(db, accountId, seeds.map(([folderId]) => folderId));
  const parents = new Map([...ways].map(([id, way]) => [id, way.parentId]));
  const totals = new Map<number, number>();
  for (const [folderId, delta] of seeds) if (parents.has(folderId)) totals.set(folderId, delta);
  // Kahn's order: a folder passes its total on once all its children on the ways have passed theirs.
  const waitingFor = new Map<number, number>();
  for (const parentId of parents.values()) waitingFor.set(parentId, (waitingFor.get(parentId) ?? 0) + 1);
  const ready = [...parents.keys()].filter((id) => !waitingFor.has(id));
  for (let id = ready.pop(); id !== undefined; id = ready.pop()) {
    const parentId = parents.get(id)!;
    if (!parents.has(parentId)) continue;
    if (!stopAt.has(id)) totals.set(parentId, (totals.get(parentId) ?? 0) + (totals.get(id) ?? 0));
    const left = waitingFor.get(parentId)! - 1;
    waitingFor.set(parentId, left);
    if (left === 0) ready.push(parentId);
  }
  const changes = [...totals].filter(([, delta]) => delta !== 0);
  for (let start = 0; start < changes.length; start += SIZE_ROWS_PER_STATEMENT) {
    // Casts: PostgreSQL types the parameters of a VALUES list as text unless told otherwise.
    const values = sql.join(
      changes.slice(start, start + SIZE_ROWS_PER_STATEMENT).map(([folderId, delta]) => sql`(cast(${folderId} as bigint), cast(${delta} as bigint))`),
    );
    await sql`
      with change(id, delta) as (values ${values})
      update folders set size = size + change.delta
      from change
      where folders.id = change.id and folders.account_id = ${accountId}`.execute(db);
  }
}

/** A live name directly in one of some folders, from either table (names are unique across both). */
export interface LiveName extends TakenName {
  readonly folderId: number;
}

/** The live items directly in folders `folderIds` whose name key `matches`, in one query over both tables. */
export async function liveNamesIn(db: Kysely<Database>, accountId: number, folderIds: readonly number[], matches: RawBuilder<unknown>): Promise<LiveName[]> {
  if (folderIds.length === 0) return [];
  const { rows } = await sql<{ kind: 'folder' | 'file'; folder_id: number; name: string; name_key: string }>`
    select 'folder' as kind, parent_id as folder_id, name, name_key from folders
    where account_id = ${accountId} and parent_id in ${idList(folderIds)} and ${matches} and ${isLive}
    union all
    select 'file' as kind, folder_id, name, name_key from files
    where account_id = ${accountId} and folder_id in ${idList(folderIds)} and ${matches} and ${isLive}`.execute(db);
  return rows.map((row) => ({ kind: row.kind, folderId: Number(row.folder_id), name: row.name, key: row.name_key }));
}

/** Which of `keys` the live items directly in `folderId` use. */
export async function findTakenNames(db: Kysely<Database>, accountId: number, folderId: number, keys: readonly string[]): Promise<TakenName[]> {
  return keys.length === 0 ? [] : liveNamesIn(db, accountId, [folderId], sql`name_key in (${sql.join(keys)})`);
}

/** `!` escapes LIKE's wildcards (and itself); the same ESCAPE clause works on both engines. */
export const escapeLike = (text: string) => text.replace(/[!%_]/g, (c) => `!${c}`);

/** The keys a new name could collide with in `folderId`: `key` and every numbered form `prefix…suffix` (names.ts). */
export async function findNumberedKeys(
  db: Kysely<Database>,
  accountId: number,
  folderId: number,
  key: string,
  numbered: { readonly prefix: string; readonly suffix: string },
): Promise<Set<string>> {
  const pattern = `${escapeLike(numbered.prefix)}%${escapeLike(numbered.suffix)}`;
  const names = await liveNamesIn(db, accountId, [folderId], sql`(name_key = ${key} or name_key like ${pattern} escape '!')`);
  return new Set(names.map((name) => name.key));
}

/**
 * Takes the account's row lock until the transaction ends, so one account's tree changes run one at a time: on
 * PostgreSQL two moves could otherwise make a cycle, or a folder and a file take one name. A no-op write on SQLite.
 */
export async function lockAccountTree(db: Kysely<Database>, accountId: number): Promise<void> {
  await db
    .updateTable('accounts')
    .set((eb) => ({ used_bytes: eb.ref('used_bytes') }))
    .where('id', '=', accountId)
    .execute();
}

/** Counts `bytes` against the account's quota if they fit, atomically (false if not); takes the row lock too. */
export async function reserveQuota(db: Kysely<Database>, accountId: number, bytes: number): Promise<boolean> {
  const result = await db
    .updateTable('accounts')
    .set((eb) => ({ used_bytes: eb('used_bytes', '+', bytes) }))
    .where('id', '=', accountId)
    .where((eb) => eb(eb('used_bytes', '+', bytes), '<=', eb.ref('quota_bytes')))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
