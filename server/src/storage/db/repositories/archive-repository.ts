/** What a ZIP download reads: the live folders beneath a selection, and their files a page at a time. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema';

export interface ArchiveFolder {
  readonly id: number;
  readonly parentId: number;
  readonly name: string;
  readonly updatedAt: number;
  readonly encrypted: boolean;
}

export interface ArchiveFile {
  readonly id: number;
  readonly folderId: number;
  readonly name: string;
  readonly size: number;
  readonly updatedAt: number;
  /** The file or its content is encrypted. */
  readonly encrypted: boolean;
  readonly storageKey: string;
}

interface FolderRow {
  id: number;
  parent_id: number;
  name: string;
  updated_at: number | string;
  encrypted: number;
}

/** The live folders `rootIds` of the account and every live folder beneath them, in one recursive query. */
export async function liveFoldersBeneath(db: Kysely<Database>, accountId: number, rootIds: readonly number[]): Promise<ArchiveFolder[]> {
  if (rootIds.length === 0) return [];
  const { rows } = await sql<FolderRow>`
    with recursive tree(id, parent_id, name, updated_at, encrypted) as (
      select id, parent_id, name, updated_at, encrypted from folders
      where id in (${sql.join(rootIds)}) and account_id = ${accountId} and deleted_at is null and binned_under is null
      union
      select fo.id, fo.parent_id, fo.name, fo.updated_at, fo.encrypted
      from folders fo join tree t on fo.parent_id = t.id
      where fo.account_id = ${accountId} and fo.deleted_at is null and fo.binned_under is null
    )
    select id, parent_id, name, updated_at, encrypted from tree`.execute(db);
  return rows.map((row) => ({
    id: Number(row.id),
    parentId: Number(row.parent_id),
    name: row.name,
    updatedAt: Number(row.updated_at),
    encrypted: Number(row.encrypted) === 1,
  }));
}

const fileColumns = [
  'files.id',
  'files.folder_id',
  'files.name',
  'content.size',
  'files.updated_at',
  'files.encrypted',
  'content.encrypted as content_encrypted',
  'content.storage_key',
] as const;

function liveFiles(db: Kysely<Database>, accountId: number) {
  return db
    .selectFrom('files')
    .innerJoin('content', 'content.id', 'files.content_id')
    .select(fileColumns)
    .where('files.account_id', '=', accountId)
    .where('files.deleted_at', 'is', null)
    .where('files.binned_under', 'is', null);
}

type FileRow = Awaited<ReturnType<ReturnType<typeof liveFiles>['execute']>>[number];

function toArchiveFile(row: FileRow): ArchiveFile {
  return {
    id: Number(row.id),
    folderId: Number(row.folder_id),
    name: row.name,
    size: Number(row.size),
    updatedAt: Number(row.updated_at),
    encrypted: Number(row.encrypted) === 1 || Number(row.content_encrypted) === 1,
    storageKey: row.storage_key,
  };
}

/** The account's live files with these ids. */
export async function liveFilesById(db: Kysely<Database>, accountId: number, ids: readonly number[]): Promise<ArchiveFile[]> {
  if (ids.length === 0) return [];
  return (await liveFiles(db, accountId).where('files.id', 'in', ids).execute()).map(toArchiveFile);
}

/** A page of the live files in `folderIds`, in (folder, id) order, after the file `after` of that order. */
export async function liveFilesIn(
  db: Kysely<Database>,
  accountId: number,
  folderIds: readonly number[],
  after: { readonly folderId: number; readonly id: number } | null,
  limit: number,
): Promise<ArchiveFile[]> {
  let query = liveFiles(db, accountId).where('files.folder_id', 'in', folderIds);
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('files.folder_id', '>', after.folderId), eb.and([eb('files.folder_id', '=', after.folderId), eb('files.id', '>', after.id)])]),
    );
  }
  const rows = await query.orderBy('files.folder_id').orderBy('files.id').limit(limit).execute();
  return rows.map(toArchiveFile);
}

/** Whether any live file in `folderIds` is encrypted (itself or its content). */
export async function anyEncryptedFileIn(db: Kysely<Database>, accountId: number, folderIds: readonly number[]): Promise<boolean> {
  if (folderIds.length === 0) return false;
  const row = await liveFiles(db, accountId)
    .where('files.folder_id', 'in', folderIds)
    .where((eb) => eb.or([eb('files.encrypted', '=', 1), eb('content.encrypted', '=', 1)]))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
