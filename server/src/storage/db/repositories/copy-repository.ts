/**
 * SQL for Copy: the live subtrees' folders are read by one recursive CTE and their files in runs of bounded size.
 * Folder copies are written in batched INSERTs, level by level (a level's parents must exist first), file copies
 * by INSERT … SELECT from their originals, so that no file row passes through JavaScript.
 */
import { sql, type Kysely } from 'kysely';
import { engineOf } from '../engine/dialect';
import type { Database } from '../schema';
import { idList, newFileRow, type ItemName, type NewFile } from './items-repository';

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

/**
 * A run of one folder's live files, in id order: ids in (after, last], at most FILE_ROWS_PER_STATEMENT of them.
 * Copy checks the runs (count, bytes, encryption), then copies each run with one INSERT … SELECT.
 */
export interface FileRun {
  readonly root: number;
  readonly folderId: number;
  readonly after: number;
  readonly last: number;
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
 * The runs of live files in `folders` (each with the root it is copied under), read a statement per run, until more
 * than `atMost` files are found (the caller refuses then, without reading the rest). `between` runs after each
 * statement (the caller gives the event loop back).
 */
export async function readFileRuns(
  db: Kysely<Database>,
  accountId: number,
  folders: readonly { readonly root: number; readonly id: number }[],
  atMost: number,
  between: () => Promise<void> | undefined,
): Promise<FileRun[]> {
  const runs: FileRun[] = [];
  let found = 0;
  for (const folder of folders) {
    for (let after = 0; found <= atMost; ) {
      const { rows: [run] } = await sql<{ count: number; bytes: number | null; encrypted: number | null; last: number | null }>`
        select count(*) as count, sum(size) as bytes, max(encrypted) as encrypted, max(id) as last from (
          select id, size, encrypted from files
          where account_id = ${accountId} and folder_id = ${folder.id} and deleted_at is null and binned_under is null and id > ${after}
          order by id limit ${FILE_ROWS_PER_STATEMENT}) as run`.execute(db);
      await between();
      const count = Number(run.count);
      if (count === 0) break;
      runs.push({ root: folder.root, folderId: folder.id, after, last: Number(run.last), count, bytes: Number(run.bytes), encrypted: Number(run.encrypted) === 1 });
      found += count;
      if (count < FILE_ROWS_PER_STATEMENT) break;
      after = Number(run.last);
    }
  }
  return runs;
}

/** 0 on SQLite: a copy's names go to the search indexes later; PostgreSQL's index keeps up by itself. */
const copiedSearchIndexed = (db: Kysely<Database>) => (engineOf(db) === 'sqlite' ? 0 : 1);

/** Copies a run of files into folder `to` inside the database (INSERT … SELECT): no row passes through JavaScript. */
export async function copyFileRun(db: Kysely<Database>, accountId: number, run: FileRun, to: number, at: Date): Promise<void> {
  await sql`insert into files (account_id, folder_id, name, name_key, sort_key, ext, size, sha256, content_id, key_id, encrypted, created_at, updated_at, search_indexed)
    select account_id, cast(${to} as bigint), name, name_key, sort_key, ext, size, sha256, content_id, null, 0,
      cast(${at.getTime()} as bigint), cast(${at.getTime()} as bigint), cast(${copiedSearchIndexed(db)} as smallint)
    from files
    where account_id = ${accountId} and folder_id = ${run.folderId} and deleted_at is null and binned_under is null
      and id > ${run.after} and id <= ${run.last}
    order by id`.execute(db);
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

/** A plaintext file record that refers to existing content. */
export type FileCopy = Omit<NewFile, 'accountId' | 'keyId' | 'at'>;

/** Inserts plaintext file records that refer to existing content (no bytes are copied), batched. */
export async function insertFileCopies(db: Kysely<Database>, accountId: number, files: readonly FileCopy[], at: Date): Promise<void> {
  for (let start = 0; start < files.length; start += ROWS_PER_INSERT) {
    await db
      .insertInto('files')
      .values(
        files.slice(start, start + ROWS_PER_INSERT).map((file) => ({ ...newFileRow(accountId, { ...file, keyId: null }, at.getTime()), search_indexed: copiedSearchIndexed(db) })),
      )
      .execute();
  }
}
