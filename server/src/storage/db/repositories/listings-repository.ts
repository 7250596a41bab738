/**
 * SQL for listings (DECISIONS.md §13): counted with one query, then streamed lazily from a cursor that is let
 * go while its reader pauses; ordered by the key, then sort_key, then id (ties always ascending).
 */
import { sql, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { BatchedItemSource, FileItem, FolderItem, ShareAttributes, SortKey } from '../../../catalog/results';
import { NO_EXTRAS, toFileItem, toFolderItem, type Extras } from './item-rows';
import { engineOf } from '../engine/dialect';
import { fileTipColumn, folderJobProgressColumn, folderTipColumn } from './encryption-repository';
import { connectionWanted } from '../engine/sqlite-driver';
import type { Database } from '../schema';
import { ancestorsOf, childPath, folderPaths, isLive, pathIn, pathsOf, type FolderPaths } from './folder-paths';

export interface ListingOrder {
  readonly key: SortKey;
  readonly descending: boolean;
}

/** How many items of each kind a listing holds: its count, known before its rows are streamed. */
export interface ListingCount {
  readonly folders: number;
  readonly files: number;
}

/** Public URLs of shares and links: a rule of the operations layer, applied as rows are read. */
export interface PublicUrls {
  share(code: string): string;
  link(code: string, fileName: string): string;
  /** A share's extraction code for its owner, unsealed ("" when open): operations/sharing/shares.ts shareRendering. */
  shareDownpwd(share: { readonly id: number; readonly downpwdSealed: string | null }): string;
  /** The URL of a share's cover image ("" when none): operations/sharing/shares.ts shareRendering. */
  shareImage(share: { readonly id: number; readonly code: string; readonly imageKey: string | null; readonly downpwdSealed: string | null }): string;
}

/** Rows per chunk of a cursor: a round trip on PostgreSQL, a synchronous read of a few ms on SQLite. */
const STREAM_CHUNK_ROWS = 1_000;

/** Fewer for the bin: each row carries the path it was deleted from, up to 64 KiB. */
const BIN_CHUNK_ROWS = 100;

/** A cursor whose reader has asked for nothing for this long is closed, and reopened when reading resumes. */
export const CURSOR_IDLE_MS = 1_000;

const DAY_MS = 86_400_000;

type ItemTable = 'folders' | 'files';

/** What each key sorts on. The recycle bin sorts "time" by the deletion time (BIN_TIME_COLUMN). */
const SORT_COLUMN: Record<SortKey, string> = {
  name: 'sort_key',
  time: 'updated_at',
  size: 'size',
  share: 'shared',
  link: 'linked',
};

/** ORDER BY key (asc or desc), sort_key, id: the one order of every listing. */
function inListingOrder<QB extends SelectQueryBuilder<Database, any, any>>(
  query: QB,
  table: ItemTable,
  order: ListingOrder,
  timeColumn = 'updated_at',
): QB {
  const column = order.key === 'time' ? timeColumn : SORT_COLUMN[order.key];
  let ordered = query.orderBy(sql.ref(`${table}.${column}`), order.descending ? 'desc' : 'asc');
  if (column !== 'sort_key') ordered = ordered.orderBy(sql.ref(`${table}.sort_key`), 'asc');
  return ordered.orderBy(sql.ref(`${table}.id`), 'asc') as QB;
}

/** Where a reader stopped: the last row's sort values (its key column, sort_key and id). */
type PositionedRow = { readonly id: number; readonly sort_key: string } & Readonly<Record<string, unknown>>;

/** Rows strictly after `last` in the listing order; the leading range term lets the index seek. */
function afterRow(table: ItemTable, order: ListingOrder, timeColumn: string, last: PositionedRow): Expression<SqlBool> {
  const ref = (column: string) => sql.ref(`${table}.${column}`);
  const [sortKey, id] = [ref('sort_key'), ref('id')];
  const tieAfter = sql<SqlBool>`(${sortKey} > ${last.sort_key} or (${sortKey} = ${last.sort_key} and ${id} > ${last.id}))`;
  const column = order.key === 'time' ? timeColumn : SORT_COLUMN[order.key];
  if (column === 'sort_key') {
    return order.descending
      ? sql<SqlBool>`${sortKey} <= ${last.sort_key} and (${sortKey} < ${last.sort_key} or ${id} > ${last.id})`
      : sql<SqlBool>`${sortKey} >= ${last.sort_key} and ${tieAfter}`;
  }
  const [key, value] = [ref(column), last[column]];
  return order.descending
    ? sql<SqlBool>`${key} <= ${value} and (${key} < ${value} or ${tieAfter})`
    : sql<SqlBool>`${key} >= ${value} and (${key} > ${value} or ${tieAfter})`;
}

/**
 * Reads a cursor a chunk at a time, closing it after CURSOR_IDLE_MS without a read (and, with
 * `letGoWhenWanted`, when another call waits for SQLite's one connection): a slow client must not hold it.
 */
async function* readWithoutHolding<R>(
  db: Kysely<Database>,
  open: (after: R | undefined) => AsyncIterator<readonly R[]>,
  letGoWhenWanted: boolean,
): AsyncGenerator<readonly R[]> {
  let cursor: AsyncIterator<readonly R[]> | undefined;
  let last: R | undefined;
  /** Whether a chunk is being read (a slow query is no pause), and whether one was handed out since the last look. */
  let reading = false;
  let handedOut = false;
  let watchdog: NodeJS.Timeout | undefined;
  const watch = () => {
    watchdog = setTimeout(() => {
      watchdog = undefined;
      if (reading || handedOut) {
        handedOut = false;
        watch();
        return;
      }
      const idle = cursor;
      cursor = undefined;
      void idle?.return?.();
    }, CURSOR_IDLE_MS);
    watchdog.unref();
  };
  try {
    for (;;) {
      if (!cursor) {
        cursor = open(last);
        if (!watchdog) watch();
      }
      reading = true;
      const next = await cursor.next();
      reading = false;
      if (next.done) return;
      const rows = next.value;
      if (rows.length === 0) continue;
      last = rows[rows.length - 1];
      handedOut = true;
      yield rows;
      // Other calls wait for SQLite's one connection (a 100,000-item listing is many slices of
      // the event loop): they have it now, and the cursor is opened again after them.
      if (letGoWhenWanted && cursor && connectionWanted(db)) {
        const held = cursor;
        cursor = undefined;
        await held.return?.();
      }
    }
  } finally {
    if (watchdog) clearTimeout(watchdog);
    await cursor?.return?.();
  }
}

/** The rows of `query` a chunk at a time from the executor (Kysely's stream() awaits once per row). */
async function* chunksOf<R>(db: Kysely<Database>, query: SelectQueryBuilder<Database, any, R>, rows: number): AsyncGenerator<readonly R[]> {
  for await (const result of db.getExecutor().stream<R>(query.compile(), rows)) yield result.rows;
}

interface StreamOptions {
  /** What "time" sorts on: updated_at, or the deletion time in the bin (BIN_TIME_COLUMN). */
  readonly timeColumn?: string;
  readonly chunkRows?: number;
  /** An index serves the order, so reopening is a seek: it may let go between chunks (otherwise it would re-sort). */
  readonly indexOrdered?: boolean;
  /** SQLite: `deleted_from` read after the sort, so the sort does not carry paths of up to 64 KiB a row. */
  readonly deletedFromAfterSort?: boolean;
  /** The rows the caller counted: at most a chunk's are read in one statement (sorted where they are, no cursor kept). */
  readonly count?: number;
}

/** Streams `query` in the listing order, without holding its cursor, as items. */
function streamInOrder<R extends PositionedRow, T>(
  db: Kysely<Database>,
  query: SelectQueryBuilder<Database, any, R>,
  table: ItemTable,
  order: ListingOrder,
  toItem: (row: R) => T,
  options: StreamOptions = {},
): BatchedItemSource<T> {
  const { timeColumn = 'updated_at', chunkRows = STREAM_CHUNK_ROWS, indexOrdered = false } = options;
  const ordered = (after: R | undefined) => inListingOrder(after ? query.where(afterRow(table, order, timeColumn, after)) : query, table, order, timeColumn);
  const withDeletedFrom = (after: R | undefined): SelectQueryBuilder<Database, any, R> =>
    (db as Kysely<any>)
      .selectFrom(ordered(after).as('listed'))
      .selectAll('listed')
      .select(sql<string | null>`(select late.deleted_from from ${sql.table(table)} as late where late.id = listed.id)`.as('deleted_from')) as unknown as SelectQueryBuilder<
      Database,
      any,
      R
    >;
  const select = options.deletedFromAfterSort ? withDeletedFrom : ordered;
  const rows =
    options.count !== undefined && options.count <= chunkRows
      ? async function* () {
          const all = await select(undefined).execute();
          if (all.length > 0) yield all;
        }
      : () => readWithoutHolding<R>(db, (after) => chunksOf(db, select(after), chunkRows), indexOrdered);
  return new StreamedItems(rows, toItem);
}

/** Items of rows read in chunks: a batch per chunk, or item by item (context.ts BatchedItemSource). */
class StreamedItems<R, T> implements BatchedItemSource<T> {
  constructor(
    private readonly rows: () => AsyncIterable<readonly R[]>,
    private readonly toItem: (row: R) => T,
  ) {}

  async *batches(): AsyncGenerator<readonly T[]> {
    for await (const rows of this.rows()) yield rows.map((row) => this.toItem(row));
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const batch of this.batches()) yield* batch;
  }
}

const folderColumns = [
  'folders.id',
  'folders.parent_id',
  'folders.name',
  'folders.size',
  'folders.updated_at',
  'folders.shared',
  'folders.linked',
  'folders.encrypted',
  'folders.sort_key',
  // The tip of the folder's key, when encrypted (0006_encryption).
  folderTipColumn,
  // How far a running encryption or decryption job of the folder has got.
  folderJobProgressColumn,
] as const;

const fileColumns = [
  'files.id',
  'files.folder_id',
  'files.name',
  'files.ext',
  'files.size',
  'files.sha256',
  'files.updated_at',
  'files.shared',
  'files.linked',
  'files.encrypted',
  'files.sort_key',
  // The tip of the file's key, when its content is encrypted (0006_encryption).
  fileTipColumn,
] as const;

// ---- A folder's children (GetFiles, GetFilesWhitPath) -------------------------------------------

/**
 * The live folders and files directly in a folder (0 = the root), counted in the listing indexes: without
 * statistics SQLite would read every row from the table (20–30 ms instead of 8–10 for 100,000 files).
 */
export async function countChildren(db: Kysely<Database>, accountId: number, parentId: number): Promise<ListingCount> {
  const { rows } = await childCountQuery(db, accountId, parentId).execute(db);
  return { folders: Number(rows[0].folders), files: Number(rows[0].files) };
}

/** countChildren's query (its plan is tested). */
export function childCountQuery(db: Kysely<Database>, accountId: number, parentId: number) {
  const sqlite = engineOf(db) === 'sqlite';
  const from = (table: ItemTable) => (sqlite ? sql`${sql.table(table)} indexed by ${sql.id(`${table}_listing`)}` : sql.table(table));
  return sql<{ folders: number | string; files: number | string }>`
    select
      (select count(*) from ${from('folders')} where folders.account_id = ${accountId} and folders.parent_id = ${parentId} and ${isLive('folders')}) as folders,
      (select count(*) from ${from('files')} where files.account_id = ${accountId} and files.folder_id = ${parentId} and ${isLive('files')}) as files
  `;
}

/** The live subfolders of a folder, in order; with `parentPath` ("" for the root) each carries its path. */
export function streamChildFolders(
  db: Kysely<Database>,
  accountId: number,
  parentId: number,
  order: ListingOrder,
  parentPath?: string,
  count?: number,
): BatchedItemSource<FolderItem> {
  const query = db
    .selectFrom('folders')
    .select(folderColumns)
    .where('folders.account_id', '=', accountId)
    .where('folders.parent_id', '=', parentId)
    .where(isLive('folders'));
  return streamInOrder(
    db,
    query,
    'folders',
    order,
    (row) => toFolderItem(row, parentPath === undefined ? NO_EXTRAS : { path: childPath(parentPath, row.name) }),
    { indexOrdered: order.key === 'name', count },
  );
}

/** The live files of a folder, streamed in order; with `parentPath`, each carries its path. */
export function streamChildFiles(
  db: Kysely<Database>,
  accountId: number,
  parentId: number,
  order: ListingOrder,
  parentPath?: string,
  count?: number,
): BatchedItemSource<FileItem> {
  const query = db
    .selectFrom('files')
    .select(fileColumns)
    .where('files.account_id', '=', accountId)
    .where('files.folder_id', '=', parentId)
    .where(isLive('files'));
  return streamInOrder(
    db,
    query,
    'files',
    order,
    (row) => toFileItem(row, parentPath === undefined ? NO_EXTRAS : { path: childPath(parentPath, row.name) }),
    { indexOrdered: order.key === 'name', count },
  );
}

// ---- Items among a bounded set (GetNewUploadFiles, FileSearch, FolderSearch) ----------------------

/**
 * The account's live files among a bounded list of `ids`, sorted, with paths. Looked up by id alone (other
 * accounts' rows dropped here): SQLite would otherwise scan the account's index (115 ms rather than 3).
 */
export async function listFilesAmong(
  db: Kysely<Database>,
  accountId: number,
  ids: readonly number[],
  order: ListingOrder,
): Promise<FileItem[]> {
  if (ids.length === 0) return [];
  const rows = (
    await db
      .selectFrom('files')
      .select([...fileColumns, 'files.account_id'])
      .where('files.id', 'in', ids)
      .where(isLive('files'))
      .$call((query) => inListingOrder(query, 'files', order))
      .execute()
  ).filter((row) => row.account_id === accountId);
  const paths = await folderPaths(
    db,
    accountId,
    rows.map((row) => row.folder_id),
  );
  return rows.map((row) => toFileItem(row, { path: pathIn(paths, row.folder_id, row.name) }));
}

/** The account's live folders among a bounded list of `ids`, sorted, each with its own path (FolderSearch). */
export async function listFoldersAmong(
  db: Kysely<Database>,
  accountId: number,
  ids: readonly number[],
  order: ListingOrder,
): Promise<FolderItem[]> {
  if (ids.length === 0) return [];
  const rows = (
    await db
      .selectFrom('folders')
      .select([...folderColumns, 'folders.account_id'])
      .where('folders.id', 'in', ids)
      .where(isLive('folders'))
      .$call((query) => inListingOrder(query, 'folders', order))
      .execute()
  ).filter((row) => row.account_id === accountId);
  const paths = await folderPaths(
    db,
    accountId,
    rows.map((row) => row.parent_id),
  );
  return rows.map((row) => toFolderItem(row, { path: pathIn(paths, row.parent_id, row.name) }));
}

/** The ids of the account's newest `limit` live files added since `since`, newest first (files_recent). */
export async function newestFileIds(db: Kysely<Database>, accountId: number, since: Date, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('files')
    .select('files.id')
    .where('files.account_id', '=', accountId)
    .where('files.created_at', '>=', since.getTime())
    .where(isLive('files'))
    .orderBy('files.created_at', 'desc')
    .orderBy('files.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

// ---- The recycle bin (GetRecycleFiles) -----------------------------------------------------------

/** The bin lists the items deleted directly; its "time" order is the deletion time (`time` stays the last change). */
const BIN_TIME_COLUMN = 'deleted_at';

export async function countBin(db: Kysely<Database>, accountId: number): Promise<ListingCount> {
  const row = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom('folders')
        .select(eb.fn.countAll<number>().as('n'))
        .where('folders.account_id', '=', accountId)
        .where('folders.deleted_at', 'is not', null)
        .as('folders'),
      eb
        .selectFrom('files')
        .select(eb.fn.countAll<number>().as('n'))
        .where('files.account_id', '=', accountId)
        .where('files.deleted_at', 'is not', null)
        .as('files'),
    ])
    .executeTakeFirstOrThrow();
  return { folders: Number(row.folders), files: Number(row.files) };
}

/** The bin's cursor: small chunks (each row carries a path), and the bin index (account, deleted_at) serves order=time. */
const binStreaming = (order: ListingOrder, deletedFromAfterSort: boolean): StreamOptions => ({
  timeColumn: BIN_TIME_COLUMN,
  chunkRows: BIN_CHUNK_ROWS,
  indexOrdered: order.key === 'time',
  deletedFromAfterSort,
});

function binExtras(row: { name: string; deleted_at: number | null; deleted_from: string | null }, retentionDays: number): Extras {
  const deleted = row.deleted_at ?? 0;
  const from = row.deleted_from || '/';
  return {
    path: from === '/' ? `/${row.name}` : childPath(from, row.name),
    bin: { deleted: new Date(deleted), from, purge: new Date(deleted + retentionDays * DAY_MS) },
  };
}

/** Folders deleted directly, streamed in order, with their bin attributes and original path. */
export function streamBinFolders(
  db: Kysely<Database>,
  accountId: number,
  order: ListingOrder,
  retentionDays: number,
): BatchedItemSource<FolderItem> {
  const selectingDeletedFrom = <QB extends SelectQueryBuilder<Database, 'folders', any>>(qb: QB) => qb.select('folders.deleted_from');
  const afterSort = engineOf(db) === 'sqlite';
  const entries = db
    .selectFrom('folders')
    .select([...folderColumns, 'folders.deleted_at'])
    .where('folders.account_id', '=', accountId)
    .where('folders.deleted_at', 'is not', null);
  // On SQLite the stream adds deleted_from after the sort (StreamOptions.deletedFromAfterSort).
  const query = afterSort ? (entries as unknown as ReturnType<typeof selectingDeletedFrom>) : selectingDeletedFrom(entries);
  return streamInOrder(db, query, 'folders', order, (row) => toFolderItem(row, binExtras(row, retentionDays)), binStreaming(order, afterSort));
}

/** Files deleted directly, streamed in order, with their bin attributes and original path. */
export function streamBinFiles(
  db: Kysely<Database>,
  accountId: number,
  order: ListingOrder,
  retentionDays: number,
): BatchedItemSource<FileItem> {
  const selectingDeletedFrom = <QB extends SelectQueryBuilder<Database, 'files', any>>(qb: QB) => qb.select('files.deleted_from');
  const afterSort = engineOf(db) === 'sqlite';
  const entries = db
    .selectFrom('files')
    .select([...fileColumns, 'files.deleted_at'])
    .where('files.account_id', '=', accountId)
    .where('files.deleted_at', 'is not', null);
  // On SQLite the stream adds deleted_from after the sort (StreamOptions.deletedFromAfterSort).
  const query = afterSort ? (entries as unknown as ReturnType<typeof selectingDeletedFrom>) : selectingDeletedFrom(entries);
  return streamInOrder(db, query, 'files', order, (row) => toFileItem(row, binExtras(row, retentionDays)), binStreaming(order, afterSort));
}

// ---- Shared items (GetShareFiles) ----------------------------------------------------------------

// Shared and linked items: the account's shares first, then each item by id (CROSS JOIN fixes that
// order on SQLite, whose planner might otherwise scan all items); the item's owner must be the share's.

/** The account's shares of live folders, as a query: what is listed, counted and given paths. */
function sharedFolders(db: Kysely<Database>, accountId: number) {
  return db
    .selectFrom('shares')
    .crossJoin('folders')
    .whereRef('folders.id', '=', 'shares.item_id')
    .where('shares.item_type', '=', 'folder')
    .whereRef('folders.account_id', '=', 'shares.account_id')
    .where('shares.account_id', '=', accountId)
    .where(isLive('folders'));
}

function sharedFiles(db: Kysely<Database>, accountId: number) {
  return db
    .selectFrom('shares')
    .crossJoin('files')
    .whereRef('files.id', '=', 'shares.item_id')
    .where('shares.item_type', '=', 'file')
    .whereRef('files.account_id', '=', 'shares.account_id')
    .where('shares.account_id', '=', accountId)
    .where(isLive('files'));
}

const shareColumns = [
  'shares.id as share_id',
  'shares.downpwd_sealed',
  'shares.code',
  'shares.download_limit',
  'shares.downloads',
  'shares.description',
  'shares.image_key',
] as const;

interface ShareRow {
  share_id: number;
  downpwd_sealed: string | null;
  code: string;
  download_limit: number;
  downloads: number;
  description: string;
  image_key: string | null;
}

function shareAttributes(row: ShareRow, urls: PublicUrls): ShareAttributes {
  const share = { id: row.share_id, code: row.code, downpwdSealed: row.downpwd_sealed, imageKey: row.image_key };
  return {
    code: row.code,
    url: urls.share(row.code),
    // Stored sealed (shares.downpwd_sealed): the operations layer opens it for the owner.
    downpwd: urls.shareDownpwd(share),
    downValue: row.download_limit,
    downloads: row.downloads,
    description: row.description,
    image: urls.shareImage(share),
  };
}

export async function countShared(db: Kysely<Database>, accountId: number): Promise<ListingCount> {
  const row = await db
    .selectNoFrom((eb) => [
      sharedFolders(db, accountId).select(eb.fn.countAll<number>().as('n')).as('folders'),
      sharedFiles(db, accountId).select(eb.fn.countAll<number>().as('n')).as('files'),
    ])
    .executeTakeFirstOrThrow();
  return { folders: Number(row.folders), files: Number(row.files) };
}

/** Paths of every folder holding a shared live item, in one query. */
export async function sharedItemParentPaths(db: Kysely<Database>, accountId: number): Promise<FolderPaths> {
  const parents = sharedFolders(db, accountId)
    .select('folders.parent_id as id')
    .union(sharedFiles(db, accountId).select('files.folder_id as id'));
  const folders = await ancestorsOf(db, accountId, { idsFrom: parents });
  // Every folder read is a parent of a shared item or an ancestor of one: all may need a path.
  return pathsOf(folders, folders.keys());
}

export function streamSharedFolders(
  db: Kysely<Database>,
  accountId: number,
  order: ListingOrder,
  paths: FolderPaths,
  urls: PublicUrls,
): BatchedItemSource<FolderItem> {
  const query = sharedFolders(db, accountId).select([...folderColumns, ...shareColumns]);
  return streamInOrder(db, query, 'folders', order, (row) =>
    toFolderItem(row, { path: pathIn(paths, row.parent_id, row.name), share: shareAttributes(row, urls) }),
  );
}

export function streamSharedFiles(
  db: Kysely<Database>,
  accountId: number,
  order: ListingOrder,
  paths: FolderPaths,
  urls: PublicUrls,
): BatchedItemSource<FileItem> {
  const query = sharedFiles(db, accountId).select([...fileColumns, ...shareColumns]);
  return streamInOrder(db, query, 'files', order, (row) =>
    toFileItem(row, { path: pathIn(paths, row.folder_id, row.name), share: shareAttributes(row, urls) }),
  );
}

// ---- Linked files (GetLinkFiles) -----------------------------------------------------------------

/** The account's links to live files (CROSS JOIN: see sharedFolders). */
function linkedFiles(db: Kysely<Database>, accountId: number) {
  return db
    .selectFrom('links')
    .crossJoin('files')
    .whereRef('files.id', '=', 'links.file_id')
    .whereRef('files.account_id', '=', 'links.account_id')
    .where('links.account_id', '=', accountId)
    .where(isLive('files'));
}

export async function countLinked(db: Kysely<Database>, accountId: number): Promise<number> {
  const row = await linkedFiles(db, accountId)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Paths of every folder holding a linked live file, in one query. */
export async function linkedFileParentPaths(db: Kysely<Database>, accountId: number): Promise<FolderPaths> {
  const folders = await ancestorsOf(db, accountId, { idsFrom: linkedFiles(db, accountId).select('files.folder_id as id').distinct() });
  return pathsOf(folders, folders.keys());
}

export function streamLinkedFiles(
  db: Kysely<Database>,
  accountId: number,
  order: ListingOrder,
  paths: FolderPaths,
  urls: PublicUrls,
): BatchedItemSource<FileItem> {
  const query = linkedFiles(db, accountId).select([...fileColumns, 'links.code', 'links.hits']);
  return streamInOrder(db, query, 'files', order, (row) =>
    toFileItem(row, { path: pathIn(paths, row.folder_id, row.name), link: { url: urls.link(row.code, row.name), hits: row.hits } }),
  );
}
