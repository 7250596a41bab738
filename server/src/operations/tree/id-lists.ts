/**
 * Ids from the wire, and the check that they name the caller's live items, one query per set. An id
 * no item can have, another account's and a binned one are all the same 404, so no id leaks.
 */
import type { Kysely } from 'kysely';
import { findLiveFiles, findLiveFolders, type FileRecord, type FolderRecord } from '../../storage/db/repositories/items-repository';
import type { Database } from '../../storage/db/schema';
import { invalidArgument, notFound } from '../errors';

/** Ids start at 1, so no item has this one: what an id that cannot exist becomes. */
const NO_ITEM = 0;

const DIGITS = /^[0-9]+$/;
const SHOWN_TOKEN_LENGTH = 24;

function idFromDigits(digits: string): number {
  const value = Number(digits);
  return Number.isSafeInteger(value) && value > 0 ? value : NO_ITEM;
}

/** A long parameter that names one item (fid, the dirid of FolderRename): NO_ITEM when none can have it. */
export function itemIdOf(value: bigint | number): number {
  const id = Number(value);
  return Number.isSafeInteger(id) && id > 0 ? id : NO_ITEM;
}

/** Parses one id list; `what` names the parameter in messages ("dirids", "fids"). */
export function parseIdList(text: string | null, what: string, maxIds: number): number[] {
  const ids = new Set<number>();
  for (const entry of (text ?? '').split(',')) {
    const token = entry.trim();
    if (token === '') continue;
    if (!DIGITS.test(token)) {
      const shown = token.length > SHOWN_TOKEN_LENGTH ? `${token.slice(0, SHOWN_TOKEN_LENGTH)}…` : token;
      throw invalidArgument('parameter-invalid', `${what} must be comma-separated ids: "${shown}" is not an id`);
    }
    ids.add(idFromDigits(token));
    if (ids.size > maxIds) throw invalidArgument('too-many-ids', `${what} holds more than ${maxIds} ids`);
  }
  return [...ids];
}

/** parseIdList of a call that needs at least one item (FolderDelete, FileShare, FolderShare). */
export function parseNonEmptyIdList(text: string | null, what: 'dirids' | 'fids', maxIds: number): number[] {
  const ids = parseIdList(text, what, maxIds);
  if (ids.length === 0) throw invalidArgument('ids-empty', `${what} is empty: name at least one ${what === 'dirids' ? 'folder' : 'file'}`);
  return ids;
}

export interface IdLists {
  readonly folderIds: readonly number[];
  readonly fileIds: readonly number[];
}

/** The two lists of a batch operation (Move, FolderAndFileDelete, …): one may be empty, not both. */
export function parseIdLists(dirids: string | null, fids: string | null, maxIds: number): IdLists {
  const folderIds = parseIdList(dirids, 'dirids', maxIds);
  const fileIds = parseIdList(fids, 'fids', maxIds);
  if (folderIds.length === 0 && fileIds.length === 0) throw invalidArgument('ids-empty', 'dirids and fids are both empty: name at least one item');
  return { folderIds, fileIds };
}

/** The found items by id; 404 naming the first of `ids` not among them. */
export function requireAll<T extends { id: number }>(kind: 'folder' | 'file', ids: readonly number[], found: readonly T[]): Map<number, T> {
  const byId = new Map(found.map((item) => [item.id, item]));
  const missing = ids.find((id) => !byId.has(id));
  if (missing !== undefined) throw notFound(`${kind}-not-found`, missing === NO_ITEM ? `${kind} not found` : `${kind} ${missing} not found`);
  return byId;
}

/** The caller's live folders with these ids, by id, in one query; 404 if any id is not one. */
export async function requireFolders(db: Kysely<Database>, accountId: number, ids: readonly number[]): Promise<Map<number, FolderRecord>> {
  return requireAll('folder', ids, await findLiveFolders(db, accountId, ids));
}

/** The caller's live files with these ids, by id, in one query; 404 if any id is not one. */
export async function requireFiles(db: Kysely<Database>, accountId: number, ids: readonly number[]): Promise<Map<number, FileRecord>> {
  return requireAll('file', ids, await findLiveFiles(db, accountId, ids));
}

export async function requireFolder(db: Kysely<Database>, accountId: number, dirid: bigint | number): Promise<FolderRecord> {
  const id = itemIdOf(dirid);
  return (await requireFolders(db, accountId, [id])).get(id)!;
}

export async function requireFile(db: Kysely<Database>, accountId: number, fid: bigint | number): Promise<FileRecord> {
  const id = itemIdOf(fid);
  return (await requireFiles(db, accountId, [id])).get(id)!;
}

/** A folder to put things in: 0 (the root), or the id of one of the caller's live folders; else 404. */
export async function requireParent(db: Kysely<Database>, accountId: number, dirid: bigint | number): Promise<number> {
  if (Number(dirid) === 0) return 0;
  return (await requireFolder(db, accountId, dirid)).id;
}

/** Move's and Copy's items and destination folder (0: the root), in two queries; 404 if any is not the caller's. */
export async function requireSelectionAndDestination(db: Kysely<Database>, accountId: number, ids: IdLists, todir: bigint | number) {
  // A todir no folder can have (negative, too large) becomes NO_ITEM, which the lookup refuses: only 0 is the root.
  const toRoot = Number(todir) === 0;
  const destination = toRoot ? 0 : itemIdOf(todir);
  const lookup = toRoot || ids.folderIds.includes(destination) ? ids.folderIds : [...ids.folderIds, destination];
  const folders = await requireFolders(db, accountId, lookup);
  const files = await requireFiles(db, accountId, ids.fileIds);
  return { destination, folders, files };
}
