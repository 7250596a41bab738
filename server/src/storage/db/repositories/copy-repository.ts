/**
 * SQL for Copy: the live subtrees under the copied folders are read by one recursive CTE each for folders and
 * file totals; folder copies are written in batched INSERTs, level by level (a level's parents must exist first),
 * and file copies by INSERT … SELECT from their originals, so that no file row passes through JavaScript.
 */
import { sql, type Kysely } from 'kysely';
import { engineOf } from '../engine/dialect';
import type { Database } from '../schema';
import { idList, type ItemName } from './items-repository';

/** A live folder beneath (or being) a copied root; `level` 0 is the root itself. */
export interface SubtreeFolder {
  readonly root: number;
  readonly id: number;
  readonly parentId: number;
  readonly name: string;
  readonly nameKey: string;
  readonly sortKey: string;
  readonly size: number;
  readonly encrypted: boolean;
  readonly level: number;
}

/** What Copy checks of the files beneath one copied folder: how many, their bytes, whether any is encrypted. */
export interface SubtreeFileTotals {
  readonly root: number;
  readonly folderId: number;
  readonly count: number;
  readonly bytes: number;
  readonly encrypted: boolean;
}
/** Folder rows per INSERT. */
const ROWS_PER_INSERT = 50;

/**
 * File rows per INSERT … SELECT: the event loop waits for each statement, and a copied row costs some 6–20 µs
 * without the search-index triggers (copies are indexed later, 0015_deferred_search_index).
 */
const FILE_ROWS_PER_STATEMENT = 1_000;

const subtreeCte = (accountId: number, roots: readonly number[]) => sql`
  with recursive down(root, id, level) as (
    select id, id, 0 from folders where account_id = ${accountId} and id in ${idList(roots)}
    union all
    select d.root, f.id, d.level + 1
    from down d cross join folders f
    where f.account_id = ${accountId} and f.parent_id = d.id and f.deleted_at is null and f.binned_under is null
  )`;

/**
 * The live folders of the subtrees under `roots` (roots included), each tagged with its root; at most `atMost`
 * rows are returned, so an oversized copy is noticed without reading all of it.
 */
export async function readSubtreeFolders(db: Kysely<Database>, accountId: number, roots: readonly number[], atMost: number): Promise<SubtreeFolder[]> {
  if (roots.length === 0) return [];
  const { rows } = await sql<{ root: number; id: number; parent_id: number; name: string; name_key: string; sort_key: string; size: number; encrypted: number; level: number }>`
    ${subtreeCte(accountId, roots)}
    select d.root, f.id, f.parent_id, f.name, f.name_key, f.sort_key, f.size, f.encrypted, d.level
    from down d join folders f on f.id = d.id
    order by d.level
    limit ${atMost}`.execute(db);
  return rows.map((row) => ({
    root: Number(row.root),
    id: Number(row.id),
    parentId: Number(row.parent_id),
    name: row.name,
    nameKey: row.name_key,
    sortKey: row.sort_key,
    size: Number(row.size),
    encrypted: Number(row.encrypted) === 1,
    level: Number(row.level),
  }));
}

/**
 * The files of the subtrees under `roots`, totalled per (root, folder); the first `atMost` files only, so an
 * oversized copy is noticed without reading all of it. The rows themselves stay in the database (copyFolderFiles).
 */
export async function subtreeFileTotals(db: Kysely<Database>, accountId: number, roots: readonly number[], atMost: number): Promise<SubtreeFileTotals[]> {
  if (roots.length === 0 || atMost <= 0) return [];
  const { rows } = await sql<{ root: number; folder_id: number; count: number; bytes: number; encrypted: number }>`
    ${subtreeCte(accountId, roots)}
    select root, folder_id, count(*) as count, sum(size) as bytes, max(encrypted) as encrypted from (
      select d.root, f.folder_id, f.size, f.encrypted
      from down d join files f on f.folder_id = d.id
      where f.account_id = ${accountId} and f.deleted_at is null and f.binned_under is null
      limit ${atMost}) as found
    group by root, folder_id`.execute(db);
  return rows.map((row) => ({
    root: Number(row.root),
    folderId: Number(row.folder_id),
    count: Number(row.count),
    bytes: Number(row.bytes),
    encrypted: Number(row.encrypted) === 1,
  }));
}

/** 0 on SQLite: a copy's names go to the search indexes later; PostgreSQL's index keeps up by itself. */
const copiedSearchIndexed = (db: Kysely<Database>) => (engineOf(db) === 'sqlite' ? 0 : 1);

/**
 * Copies the live files of folder `from` into folder `to` inside the database (INSERT … SELECT), in id order, a
 * bounded number of rows per statement; `between` runs between statements (the caller gives the event loop back).
 */
export async function copyFolderFiles(db: Kysely<Database>, accountId: number, from: number, to: number, at: Date, between: () => Promise<void> | undefined): Promise<void> {
  const live = sql`account_id = ${accountId} and folder_id = ${from} and deleted_at is null and binned_under is null`;
  for (let after = 0; ; ) {
    // The id that ends this statement's rows, or none when the rest fits in one statement.
    const { rows: [bound] } = await sql<{ id: number }>`
      select id from files where ${live} and id > ${after} order by id limit 1 offset ${FILE_ROWS_PER_STATEMENT - 1}`.execute(db);
    const last = bound === undefined ? null : Number(bound.id);
    await sql`insert into files (account_id, folder_id, name, name_key, sort_key, ext, size, sha256, content_id, key_id, encrypted, created_at, updated_at, search_indexed)
      select account_id, cast(${to} as bigint), name, name_key, sort_key, ext, size, sha256, content_id, null, 0,
        cast(${at.getTime()} as bigint), cast(${at.getTime()} as bigint), cast(${copiedSearchIndexed(db)} as smallint)
      from files where ${live} and id > ${after} ${last === null ? sql`` : sql`and id <= ${last}`} order by id`.execute(db);
    if (last === null) return;
    after = last;
    await between();
  }
}

export interface FolderCopy {
  readonly parentId: number;
  readonly name: ItemName;
  readonly size: number;
}

/**
 * Inserts folder copies, batched; returns their new ids in the order given. Siblings' name keys are unique under
 * one parent, so each returned row is matched back by (parent, name key), never by the order of RETURNING.
 */
export async function insertFolderCopies(db: Kysely<Database>, accountId: number, folders: readonly FolderCopy[], at: Date): Promise<number[]> {
  const idOf = new Map<string, number>();
  const slot = (parentId: number, key: string) => `${parentId}/${key}`;
  for (let start = 0; start < folders.length; start += ROWS_PER_INSERT) {
    const rows = await db
      .insertInto('folders')
      .values(
        folders.slice(start, start + ROWS_PER_INSERT).map((folder) => ({
          account_id: accountId,
          parent_id: folder.parentId,
          name: folder.name.name,
          name_key: folder.name.key,
          sort_key: folder.name.sortKey,
          size: folder.size,
          created_at: at.getTime(),
          updated_at: at.getTime(),
        })),
      )
      .returning(['id', 'parent_id', 'name_key'])
      .execute();
    for (const row of rows) idOf.set(slot(Number(row.parent_id), row.name_key), Number(row.id));
  }
  return folders.map((folder) => idOf.get(slot(folder.parentId, folder.name.key))!);
}

export interface FileCopy {
  readonly folderId: number;
  readonly name: ItemName;
  readonly ext: string;
  readonly size: number;
  readonly sha256: string;
  readonly contentId: number;
}

/** Inserts plaintext file records that refer to existing content (no bytes are copied), batched. */
export async function insertFileCopies(db: Kysely<Database>, accountId: number, files: readonly FileCopy[], at: Date): Promise<void> {
  for (let start = 0; start < files.length; start += ROWS_PER_INSERT) {
    await db
      .insertInto('files')
      .values(
        files.slice(start, start + ROWS_PER_INSERT).map((file) => ({
          account_id: accountId,
          folder_id: file.folderId,
          name: file.name.name,
          name_key: file.name.key,
          sort_key: file.name.sortKey,
          ext: file.ext,
          size: file.size,
          sha256: file.sha256,
          content_id: file.contentId,
          key_id: null,
          encrypted: 0,
          created_at: at.getTime(),
          updated_at: at.getTime(),
          search_indexed: copiedSearchIndexed(db),
        })),
      )
      .execute();
  }
}
