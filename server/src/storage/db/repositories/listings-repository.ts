/**
 * SQL for listings (DECISIONS.md §13): a folder's children, the newest files, the recycle bin,
 * shared and linked items. Rows become FolderItem / FileItem here.
 *
 * - A listing that can be big (a folder, the bin, shares, links) is counted with one query and then
 *   read from a database cursor a chunk of rows at a time (handed out as batches of items:
 *   BatchedItemSource), folders and then files, in the order asked for, so that 100,000 items
 *   never sit in memory. The streams are lazy: nothing is read, and no
 *   connection is taken, until the protocol layer starts writing them. A cursor is let go while
 *   its reader pauses (readWithoutHolding), so a slow client never holds the connection.
 * - The count and the rows are separate reads: a change committed between them (an upload into
 *   the folder being listed) can make the count differ from the items by that change.
 * - Order: the key, then the natural name order (sort_key), then id. `descending` reverses the key
 *   only; ties are always ascending, so equal items keep one predictable order in both directions.
 *   For order=name the listing index (account_id, parent, sort_key, id) of
 *   0002_item_order_and_search serves it as it is read (descending: read backwards, only items with
 *   equal sort keys re-sorted by id); other keys are sorted by the database.
 * - Paths of items in many folders come from one recursive query over all the folders involved
 *   (folder-paths.ts), never a query per item.
 *
 * This module maps rows to items itself; items-repository (folder and file changes) has its own
 * records. Both read the same columns; if they drift, unify them.
 */
import { sql, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { BatchedItemSource, BinAttributes, FileItem, FolderItem, ShareAttributes, SortKey } from '../../../catalog/results';
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

/**
 * Rows per chunk of a listing's cursor: a round trip on PostgreSQL, a synchronous read on SQLite
 * (a few milliseconds, during which nothing else runs on the one connection anyway).
 */
const STREAM_CHUNK_ROWS = 1_000;

/**
 * Rows per chunk of the recycle bin's cursor: each row carries the path its item was deleted from,
 * up to 64 KiB at the deepest (256 folders of 255 characters), so 1,000 of them would be 64 MiB
 * read in one step.
 */
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

/**
 * Rows strictly after `last` in the listing order, written so that the leading range term
 * (`key >= v`, or `<=` when descending) can seek in the index that serves the order.
 */
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
 * Reads rows through a cursor (`open(undefined)`), a chunk of rows at a time, and lets go of it
 * while the reader pauses: when no chunk has been asked for during CURSOR_IDLE_MS, the cursor is
 * closed, and the next chunk is read from a new cursor opened after the last row handed out
 * (`open(last)`). With `letGoWhenWanted` (an order an index serves), it also lets go between two
 * chunks whenever another call waits for SQLite's connection (sqlite-driver connectionWanted).
 *
 * Why: a cursor holds a database connection while it is open, and the embedded SQLite engine has
 * exactly one. The protocol layer reads a listing as fast as the client takes it; a client on a
 * slow link (or one that has gone) would otherwise stop every other call for as long as it reads.
 * Resuming costs one query (for order=name an index seek; for other keys the database sorts the
 * rest again), at most once per pause.
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

/**
 * The rows of `query` as the driver reads them, a chunk at a time: up to `rows` rows read
 * synchronously per step on SQLite (sqlite-driver.ts), one round trip of the cursor on PostgreSQL.
 * Kysely's own stream() hands the same chunks out one row per await; its executor is what that
 * stream() reads from (db.getExecutor, as dialect.ts engineOf uses it).
 */
async function* chunksOf<R>(db: Kysely<Database>, query: SelectQueryBuilder<Database, any, R>, rows: number): AsyncGenerator<readonly R[]> {
  for await (const result of db.getExecutor().stream<R>(query.compile(), rows)) yield result.rows;
}

interface StreamOptions {
  /** What "time" sorts on: updated_at, or the deletion time in the bin (BIN_TIME_COLUMN). */
  readonly timeColumn?: string;
  readonly chunkRows?: number;
  /**
   * Whether an index serves the order, so that a cursor opened again after a row costs an index
   * seek: then it lets other calls have SQLite's connection between chunks when they wait for it.
   * Where the database sorts (other orders), opening it again would sort what is left again, in
   * one step: it keeps the connection until it ends (or its reader pauses).
   */
  readonly indexOrdered?: boolean;
  /**
   * SQLite: `deleted_from` read after the sort, by a correlated subquery over the sorted rows,
   * instead of selected by `query`: a row of the bin carries the path it came from (up to 64 KiB),
   * and a sort that carries 1,000 of those copies 64 MiB in one step (60–350 ms measured).
   */
  readonly deletedFromAfterSort?: boolean;
}

/**
 * Streams `query` (filtered, selecting sort_key and the key column) in the listing order, without
 * holding its cursor, and turns each row into an item: what the stream functions below return.
 */
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
  const rows = () =>
    readWithoutHolding<R>(db, (after) => chunksOf(db, options.deletedFromAfterSort ? withDeletedFrom(after) : ordered(after), chunkRows), indexOrdered);
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

interface FolderRow {
  id: number;
  sort_key: string;
  parent_id: number;
  name: string;
  size: number;
  updated_at: number;
  shared: 0 | 1;
  linked: 0 | 1;
  encrypted: 0 | 1;
  tip: string | null;
  progress: number | null;
}

interface FileRow {
  id: number;
  sort_key: string;
  folder_id: number;
  name: string;
  ext: string;
  size: number;
  sha256: string;
  updated_at: number;
  shared: 0 | 1;
  linked: 0 | 1;
  encrypted: 0 | 1;
  tip: string | null;
}

/** What some listings add to an item. */
interface Extras {
  readonly path?: string;
  readonly bin?: BinAttributes;
  readonly share?: ShareAttributes;
  readonly link?: { readonly url: string; readonly hits: number };
}

const NO_EXTRAS: Extras = {};

/*
 * Items are built as literals of one shape, without spreads: a listing builds 100,000 of them.
 * Optional attributes absent from a row are left undefined (the writer skips undefined values).
 * `tip` only on encrypted items (DECISIONS.md §2), from the item's key (encryption-repository).
 */

const toFolderItem = (row: FolderRow, extras: Extras = NO_EXTRAS): FolderItem => ({
  type: 'folder',
  id: row.id,
  dir: row.parent_id,
  name: row.name,
  size: row.size,
  time: new Date(row.updated_at),
  shared: row.shared === 1,
  linked: row.linked === 1,
  encrypted: row.encrypted === 1,
  tip: row.encrypted === 1 ? (row.tip ?? '') : undefined,
  progress: row.progress === null ? undefined : Number(row.progress),
  path: extras.path,
  bin: extras.bin,
  share: extras.share,
  link: extras.link,
});

const toFileItem = (row: FileRow, extras: Extras = NO_EXTRAS): FileItem => ({
  type: 'file',
  id: row.id,
  dir: row.folder_id,
  name: row.name,
  ext: row.ext,
  size: row.size,
  hash: row.sha256,
  time: new Date(row.updated_at),
  shared: row.shared === 1,
  linked: row.linked === 1,
  encrypted: row.encrypted === 1,
  tip: row.encrypted === 1 ? (row.tip ?? '') : undefined,
  path: extras.path,
  bin: extras.bin,
  share: extras.share,
  link: extras.link,
});

// ---- A folder's children (GetFiles, GetFilesWhitPath) -------------------------------------------

/**
 * The number of live folders and files directly in a folder (0 = the root), in one query.
 *
 * Counted in the listing indexes (0002_item_order_and_search: partial, live rows only), which
 * hold every column the count needs. Without statistics SQLite picks the (account, parent) index
 * instead and reads each row from the table to see whether it is live: 20–30 ms instead of 8–10
 * for a folder of 100,000 files, in one step of the event loop. PostgreSQL plans it from its own
 * statistics (and has no INDEXED BY).
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

/**
 * The live subfolders of a folder, streamed in order. With `parentPath` (the folder's own path,
 * "" for the root) each item carries its path.
 */
export function streamChildFolders(
  db: Kysely<Database>,
  accountId: number,
  parentId: number,
  order: ListingOrder,
  parentPath?: string,
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
    { indexOrdered: order.key === 'name' },
  );
}

/** The live files of a folder, streamed in order; with `parentPath`, each carries its path. */
export function streamChildFiles(
  db: Kysely<Database>,
  accountId: number,
  parentId: number,
  order: ListingOrder,
  parentPath?: string,
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
    { indexOrdered: order.key === 'name' },
  );
}

// ---- Files among a bounded set (GetNewUploadFiles, FileSearch) ---------------------------------

/**
 * The account's live files among `ids` (a bounded list: the newest 500, the first 1,000 search
 * hits), sorted by `order`, each with its path: two queries.
 *
 * The files are looked up by id alone and rows of other accounts dropped here (as in ancestorsOf):
 * given `account_id = ? and id in (…1,000 ids)`, SQLite without statistics prefers to read all the
 * account's files through an account index (115 ms rather than 3 ms in an account of a million).
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

/**
 * The ids of the account's `limit` most recently added live files added at or after `since`,
 * newest first (the files_recent index).
 */
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

/**
 * What the bin lists: the items deleted directly (deleted_at set), not what lies beneath a folder
 * in the bin. Its "time" order is the deletion time, which is what a bin is looked through by; the
 * items' `time` attribute stays their last modification, as everywhere.
 */
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

/*
 * Shared and linked items are read from the account's shares (links), each item then by its id.
 * CROSS JOIN fixes that order on SQLite (its documented rule: the left table is the outer loop),
 * where without statistics the planner may otherwise read all the account's items and look for a
 * share beside each; PostgreSQL reads it as an ordinary join and plans it from its statistics.
 * The item's owner must be the share's owner.
 */

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
