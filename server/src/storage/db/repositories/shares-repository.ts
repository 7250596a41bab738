/**
 * SQL for shares (rules: operations/sharing/). One share per item: sharing again keeps its code, count and cover.
 * A share leads to its item only while the item is live; a binned item keeps its row, so a restore brings it back.
 */
import { sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { ItemLock } from './encryption-repository';
import { idList, MAX_WALK_DEPTH, type FileRecord, type FolderRecord } from './items-repository';
import { toFileItem, toFolderItem } from './item-rows';
import type { Database, ShareItemType, SharesTable } from '../schema';

export interface ShareRecord {
  readonly id: number;
  readonly accountId: number;
  readonly itemType: ShareItemType;
  readonly itemId: number;
  /** The public code in /s/{code}. */
  readonly code: string;
  /** The extraction code, sealed under the server secret; null = an open share. */
  readonly downpwdSealed: string | null;
  /** Most downloads allowed; 0 = no limit. */
  readonly downloadLimit: number;
  readonly downloads: number;
  readonly description: string;
  /** Content-store key of the cover image; null = none. */
  readonly imageKey: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The settings FileShare and FolderShare give a share; the code, the count and the image stay. */
export interface ShareSettings {
  readonly downpwdSealed: string | null;
  readonly downloadLimit: number;
  readonly description: string;
}

export interface NewShareRow extends ShareSettings {
  readonly itemId: number;
  /** Used only when the item has no share yet. */
  readonly code: string;
}

/** A live item of an account, as a share sees it. */
export type SharedTarget =
  | { readonly type: 'folder'; readonly record: FolderRecord; readonly lock: ItemLock | null; readonly inside: boolean }
  | { readonly type: 'file'; readonly record: FileRecord; readonly lock: ItemLock | null; readonly inside: boolean };

type ShareRow = Selectable<SharesTable>;

const toShare = (row: ShareRow): ShareRecord => ({
  id: Number(row.id),
  accountId: Number(row.account_id),
  itemType: row.item_type,
  itemId: Number(row.item_id),
  code: row.code,
  downpwdSealed: row.downpwd_sealed,
  downloadLimit: Number(row.download_limit),
  downloads: Number(row.downloads),
  description: row.description,
  imageKey: row.image_key,
  createdAt: new Date(Number(row.created_at)),
  updatedAt: new Date(Number(row.updated_at)),
});

// ---- Reading shares ------------------------------------------------------------------------------

/** The account's shares of items of one type among `itemIds`, in one query. */
export async function findSharesOf(
  db: Kysely<Database>,
  accountId: number,
  itemType: ShareItemType,
  itemIds: readonly number[],
): Promise<ShareRecord[]> {
  if (itemIds.length === 0) return [];
  const rows = await db
    .selectFrom('shares')
    .selectAll()
    .where('item_type', '=', itemType)
    .where('item_id', 'in', itemIds)
    .where('account_id', '=', accountId)
    .execute();
  return rows.map(toShare);
}

/** The share with this public code (the unique index on code). */
export async function findShareByCode(db: Kysely<Database>, code: string): Promise<ShareRecord | undefined> {
  const row = await db.selectFrom('shares').selectAll().where('code', '=', code).executeTakeFirst();
  return row && toShare(row);
}

export async function findShareById(db: Kysely<Database>, id: number): Promise<ShareRecord | undefined> {
  const row = await db.selectFrom('shares').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toShare(row);
}

// ---- Writing shares ------------------------------------------------------------------------------

/** Creates the shares of `rows` or updates existing ones' settings (keeping code, count and cover), in one statement. */
export async function upsertShares(
  db: Kysely<Database>,
  accountId: number,
  itemType: ShareItemType,
  rows: readonly NewShareRow[],
  at: Date,
): Promise<ShareRecord[]> {
  if (rows.length === 0) return [];
  const time = at.getTime();
  const written = await db
    .insertInto('shares')
    .values(
      rows.map((row) => ({
        account_id: accountId,
        item_type: itemType,
        item_id: row.itemId,
        code: row.code,
        downpwd_sealed: row.downpwdSealed,
        download_limit: row.downloadLimit,
        description: row.description,
        image_key: null,
        created_at: time,
        updated_at: time,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['item_type', 'item_id']).doUpdateSet((eb) => ({
        downpwd_sealed: eb.ref('excluded.downpwd_sealed'),
        download_limit: eb.ref('excluded.download_limit'),
        description: eb.ref('excluded.description'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .returningAll()
    .execute();
  return written.map(toShare);
}

/** The item's share: the one it has, or a new open one with `code` and no limit. */
export async function insertShareIfMissing(
  db: Kysely<Database>,
  share: { readonly accountId: number; readonly itemType: ShareItemType; readonly itemId: number; readonly code: string; readonly at: Date },
): Promise<ShareRecord> {
  const time = share.at.getTime();
  await db
    .insertInto('shares')
    .values({
      account_id: share.accountId,
      item_type: share.itemType,
      item_id: share.itemId,
      code: share.code,
      downpwd_sealed: null,
      image_key: null,
      created_at: time,
      updated_at: time,
    })
    .onConflict((oc) => oc.columns(['item_type', 'item_id']).doNothing())
    .execute();
  const [row] = await findSharesOf(db, share.accountId, share.itemType, [share.itemId]);
  if (!row) throw new Error(`${share.itemType} ${share.itemId}: its share was neither inserted nor found`);
  return row;
}

/** Sets or clears the `shared` flag of the account's folders or files among `ids`: one statement. */
export async function setSharedFlags(
  db: Kysely<Database>,
  accountId: number,
  table: 'folders' | 'files',
  ids: readonly number[],
  shared: boolean,
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable(table)
    .set({ shared: shared ? 1 : 0 })
    // Unary plus: the ids drive, not the account's index (see items-repository ownedBy).
    .where(sql<SqlBool>`+account_id = ${accountId}`)
    .where('id', 'in', ids)
    .execute();
}

/** The cover images of deleted shares: their keys, and the bytes they counted against the quota. */
export interface RemovedCovers {
  readonly keys: string[];
  readonly bytes: number;
}

/** Deletes the account's shares of these folders and files (their e-mails go by cascade); returns their cover images. */
export async function deleteSharesOf(
  db: Kysely<Database>,
  accountId: number,
  folderIds: readonly number[],
  fileIds: readonly number[],
): Promise<RemovedCovers> {
  if (folderIds.length === 0 && fileIds.length === 0) return { keys: [], bytes: 0 };
  const rows = await db
    .deleteFrom('shares')
    .where('account_id', '=', accountId)
    .where((eb) =>
      eb.or([
        eb.and([eb('item_type', '=', 'folder'), eb('item_id', 'in', folderIds.length ? folderIds : [0])]),
        eb.and([eb('item_type', '=', 'file'), eb('item_id', 'in', fileIds.length ? fileIds : [0])]),
      ]),
    )
    .returning(['image_key', 'image_bytes'])
    .execute();
  return {
    keys: rows.map((row) => row.image_key).filter((key): key is string => key !== null),
    bytes: rows.reduce((total, row) => total + Number(row.image_bytes), 0),
  };
}

/** Counts one download against the limit; false when reached. One conditional UPDATE, so no instance can pass it. */
export async function countShareDownload(db: Kysely<Database>, shareId: number): Promise<boolean> {
  const result = await db
    .updateTable('shares')
    .set((eb) => ({ downloads: eb('downloads', '+', 1) }))
    .where('id', '=', shareId)
    .where((eb) => eb.or([eb('download_limit', '=', 0), eb('downloads', '<', eb.ref('download_limit'))]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A share's cover image as stored: its content-store key and the bytes it counts against the quota. */
export interface StoredCover {
  readonly key: string;
  readonly bytes: number;
}

/** Gives the share cover `cover`, returning the previous one; run under the account's row lock, so two uploads cannot both replace it. */
export async function replaceShareImage(db: Kysely<Database>, shareId: number, cover: StoredCover, at: Date): Promise<StoredCover | null> {
  const before = await db.selectFrom('shares').select(['image_key', 'image_bytes']).where('id', '=', shareId).executeTakeFirstOrThrow();
  await db
    .updateTable('shares')
    .set({ image_key: cover.key, image_bytes: cover.bytes, updated_at: at.getTime() })
    .where('id', '=', shareId)
    .execute();
  return before.image_key === null ? null : { key: before.image_key, bytes: Number(before.image_bytes) };
}

/** How many of the account's shares have a cover image (the per-account cap, operations/sharing/share-images.ts). */
export async function countCoverImages(db: Kysely<Database>, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('shares')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('image_key', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---- What a share leads to -------------------------------------------------------------------------

/** The first locked item among folders `folderIds`, files `fileIds` and the folders above them, with its key's tip; one query. */
export async function findLockAmong(
  db: Kysely<Database>,
  accountId: number,
  folderIds: readonly number[],
  fileIds: readonly number[],
): Promise<ItemLock | undefined> {
  if (folderIds.length === 0 && fileIds.length === 0) return undefined;
  // UNION (not UNION ALL): a folder above many items is walked once, and a corrupt cycle ends.
  const { rows } = await sql<{ type: ShareItemType; id: number; tip: string | null }>`
    with recursive
    seed(id) as (
      select id from folders where account_id = ${accountId} and id in ${idList(folderIds)}
      union
      select folder_id from files where account_id = ${accountId} and id in ${idList(fileIds)}
    ),
    chain(id, parent_id, encrypted) as (
      select fo.id, fo.parent_id, fo.encrypted
      from seed s join folders fo on fo.id = s.id and fo.account_id = ${accountId}
      union
      select fo.id, fo.parent_id, fo.encrypted
      from chain c join folders fo on fo.id = c.parent_id and fo.account_id = ${accountId}
    )
    select 'file' as type, fi.id, (select k.tip from encryption_keys k where k.id = fi.key_id) as tip
    from files fi join content ct on ct.id = fi.content_id
    where fi.account_id = ${accountId} and fi.id in ${idList(fileIds)} and (fi.encrypted = 1 or ct.encrypted = 1)
    union all
    select 'folder' as type, c.id, (select k.tip from folders fo join encryption_keys k on k.id = fo.key_id where fo.id = c.id) as tip
    from chain c where c.encrypted = 1`.execute(db);
  const row = rows[0];
  return row && { type: row.type, id: Number(row.id), tip: row.tip ?? '' };
}

interface TargetRow {
  id: number;
  parent_id: number;
  name: string;
  ext: string | null;
  size: number;
  sha256: string | null;
  content_id: number | null;
  created_at: number;
  updated_at: number;
  shared: number;
  linked: number;
  encrypted: number;
  content_encrypted: number;
  locked_folder_id: number | null;
  inside: number;
}

/**
 * A live item of the account, what locks it (itself or the nearest encrypted folder above), and whether it lies
 * within folder `within` (0: does not matter). One query; undefined when not a live item of the account.
 */
export async function findSharedTarget(
  db: Kysely<Database>,
  accountId: number,
  item: { readonly type: ShareItemType; readonly id: number },
  within = 0,
): Promise<SharedTarget | undefined> {
  // Casts: PostgreSQL types bare parameters in a select list as text.
  const live =
    item.type === 'folder'
      ? sql`
          select id, parent_id, name, cast(null as text) as ext, size, cast(null as text) as sha256,
            cast(null as bigint) as content_id, created_at, updated_at, shared, linked, encrypted, 0 as content_encrypted
          from folders
          where id = ${item.id} and account_id = ${accountId} and deleted_at is null and binned_under is null`
      : sql`
          select fi.id, fi.folder_id as parent_id, fi.name, fi.ext, fi.size, fi.sha256, fi.content_id, fi.created_at,
            fi.updated_at, fi.shared, fi.linked, fi.encrypted, ct.encrypted as content_encrypted
          from files fi join content ct on ct.id = fi.content_id
          where fi.id = ${item.id} and fi.account_id = ${accountId} and fi.deleted_at is null and fi.binned_under is null`;
  const { rows } = await sql<TargetRow>`
    with recursive
    item as (${live}),
    chain(id, parent_id, encrypted, depth) as (
      select fo.id, fo.parent_id, fo.encrypted, 1
      from item i join folders fo on fo.id = i.parent_id and fo.account_id = ${accountId}
      union all
      select fo.id, fo.parent_id, fo.encrypted, c.depth + 1
      from chain c join folders fo on fo.id = c.parent_id and fo.account_id = ${accountId}
      where c.depth < ${MAX_WALK_DEPTH}
    )
    select i.*,
      (select c.id from chain c where c.encrypted = 1 order by c.depth limit 1) as locked_folder_id,
      case when exists (select 1 from chain c where c.id = cast(${within} as bigint)) then 1 else 0 end as inside
    from item i`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  const id = Number(row.id);
  const selfLocked = Number(row.encrypted) === 1 || Number(row.content_encrypted) === 1;
  const lock: ItemLock | null =
    item.type === 'folder' && selfLocked
      ? { type: 'folder', id }
      : row.locked_folder_id !== null
        ? { type: 'folder', id: Number(row.locked_folder_id) }
        : selfLocked
          ? { type: 'file', id }
          : null;
  const inside = Number(row.inside) === 1 || (item.type === 'folder' && id === within);
  // Raw SQL reads bigints as strings on PostgreSQL: numbers first, then the one mapper (item-rows.ts).
  const parent = Number(row.parent_id);
  const common = { id, name: row.name, size: Number(row.size), updated_at: Number(row.updated_at), shared: Number(row.shared), linked: Number(row.linked), encrypted: Number(row.encrypted) };
  return item.type === 'folder'
    ? { type: 'folder', record: toFolderItem({ ...common, parent_id: parent }), lock, inside }
    : {
        type: 'file',
        record: { ...toFileItem({ ...common, folder_id: parent, ext: row.ext ?? '', sha256: row.sha256 ?? '' }), contentId: Number(row.content_id) },
        lock,
        inside,
      };
}
