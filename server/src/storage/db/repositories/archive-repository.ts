/** What a ZIP download reads: the live folders beneath a selection, their files a page at a time, and their keys. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema';

export interface ArchiveFolder {
  readonly id: number;
  readonly parentId: number;
  readonly name: string;
  readonly updatedAt: number;
  readonly encrypted: boolean;
  /** The key of the nearest encrypted folder at or above it; null when plain. */
  readonly keyId: number | null;
}

export interface ArchiveFile {
  readonly id: number;
  readonly folderId: number;
  readonly name: string;
  /** The plaintext's size (the stored bytes' for plaintext content). */
  readonly size: number;
  readonly updatedAt: number;
  /** The file or its content is encrypted. */
  readonly encrypted: boolean;
  /** The key the content is encrypted with; null for plaintext. */
  readonly keyId: number | null;
  readonly contentId: number;
  readonly storageKey: string;
}

interface FolderRow {
  id: number;
  parent_id: number;
  name: string;
  updated_at: number | string;
  encrypted: number;
  key_id: number | string | null;
}

/** The live folders `rootIds` of the account and every live folder beneath them, in one recursive query. */
export async function liveFoldersBeneath(db: Kysely<Database>, accountId: number, rootIds: readonly number[]): Promise<ArchiveFolder[]> {
  if (rootIds.length === 0) return [];
  const { rows } = await sql<FolderRow>`
    with recursive tree(id, parent_id, name, updated_at, encrypted, key_id) as (
      select id, parent_id, name, updated_at, encrypted, key_id from folders
      where id in (${sql.join(rootIds)}) and account_id = ${accountId} and deleted_at is null and binned_under is null
      union
      select fo.id, fo.parent_id, fo.name, fo.updated_at, fo.encrypted, fo.key_id
      from folders fo join tree t on fo.parent_id = t.id
      where fo.account_id = ${accountId} and fo.deleted_at is null and fo.binned_under is null
    )
    select id, parent_id, name, updated_at, encrypted, key_id from tree`.execute(db);
  return rows.map((row) => ({
    id: Number(row.id),
    parentId: Number(row.parent_id),
    name: row.name,
    updatedAt: Number(row.updated_at),
    encrypted: Number(row.encrypted) === 1,
    keyId: row.key_id === null ? null : Number(row.key_id),
  }));
}

const fileColumns = [
  'files.id',
  'files.folder_id',
  'files.name',
  'content.size',
  'files.size as plain_size',
  'files.updated_at',
  'files.encrypted',
  'files.key_id',
  'files.content_id',
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
  const encrypted = Number(row.encrypted) === 1 || Number(row.content_encrypted) === 1;
  return {
    id: Number(row.id),
    folderId: Number(row.folder_id),
    name: row.name,
    size: Number(encrypted ? row.plain_size : row.size),
    updatedAt: Number(row.updated_at),
    encrypted,
    keyId: row.key_id === null ? null : Number(row.key_id),
    contentId: Number(row.content_id),
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

/** The keys of the encrypted live files in `folderIds`, each with one file of it (null: encrypted with no key recorded). */
export async function encryptedFileKeysIn(db: Kysely<Database>, accountId: number, folderIds: readonly number[]): Promise<{ keyId: number | null; fileId: number }[]> {
  if (folderIds.length === 0) return [];
  const rows = await liveFiles(db, accountId)
    .clearSelect()
    .select((eb) => ['files.key_id', eb.fn.min('files.id').as('file_id')])
    .where('files.folder_id', 'in', folderIds)
    .where((eb) => eb.or([eb('files.encrypted', '=', 1), eb('content.encrypted', '=', 1)]))
    .groupBy('files.key_id')
    .execute();
  return rows.map((row) => ({ keyId: row.key_id === null ? null : Number(row.key_id), fileId: Number(row.file_id) }));
}
