/**
 * Folder paths (`/A/B`) and chains for listings: the folders involved and all their ancestors come
 * from one recursive query, each path is built once from its parent's, never a query per item.
 */
import { sql, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Database } from '../schema';
import { alongWaysUp } from './items-repository';

/** Absolute paths of folders by id: `/A/B`, and "" for the root (0), so that a child is `${path}/${name}`. */
export type FolderPaths = ReadonlyMap<number, string>;

/** Neither in the bin nor beneath a folder in the bin. Written as the listing indexes' own condition. */
export function isLive(table: 'folders' | 'files'): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(`${table}.deleted_at`)} is null and ${sql.ref(`${table}.binned_under`)} is null`;
}

/** `${parent}/${name}`; the root's path is "" here, so its children are `/name`. */
export function childPath(parentPath: string, name: string): string {
  return `${parentPath}/${name}`;
}

interface FolderLink {
  readonly parentId: number;
  readonly name: string;
}

/** Where a walk up the tree starts. */
type AncestorSeed =
  /** Folders by id: a bounded list (an id list of a call, the parents of listed items). */
  | { readonly ids: readonly number[] }
  /** One folder, if it is live. */
  | { readonly liveFolder: number }
  /** The folders a query names (`id` column), e.g. the parents of shared items. */
  | { readonly idsFrom: SelectQueryBuilder<Database, any, { id: number }> };

/**
 * The seeds and all their ancestors in one recursive query (UNION reads a shared ancestor once and ends a cycle).
 * Id lists are looked up by id alone, other accounts' rows dropped here: SQLite might walk the account index instead.
 */
export async function ancestorsOf(db: Kysely<Database>, accountId: number, seed: AncestorSeed): Promise<Map<number, FolderLink>> {
  if ('ids' in seed && seed.ids.length === 0) return new Map();
  const rows = await db
    .withRecursive('ancestors(id, parent_id, name, account_id)', (qc) => {
      const first =
        'idsFrom' in seed
          ? // CROSS JOIN: the seed ids drive, each folder is read by its id (see sharedFolders).
            qc
              .selectFrom(seed.idsFrom.as('seed'))
              .crossJoin('folders')
              .whereRef('folders.id', '=', 'seed.id')
              .where('folders.account_id', '=', accountId)
          : 'ids' in seed
            ? qc.selectFrom('folders').where('folders.id', 'in', seed.ids)
            : qc
                .selectFrom('folders')
                .where('folders.id', '=', seed.liveFolder)
                .where('folders.account_id', '=', accountId)
                .where(isLive('folders'));
      return first.select(['folders.id', 'folders.parent_id', 'folders.name', 'folders.account_id']).union((qc) =>
        qc
          .selectFrom('folders')
          .innerJoin('ancestors', 'ancestors.parent_id', 'folders.id')
          .select(['folders.id', 'folders.parent_id', 'folders.name', 'folders.account_id'])
          .where('folders.account_id', '=', accountId),
      );
    })
    .selectFrom('ancestors')
    .select(['id', 'parent_id', 'name', 'account_id'])
    .execute();
  return new Map(rows.filter((row) => row.account_id === accountId).map((row) => [row.id, { parentId: row.parent_id, name: row.name }]));
}

/** Follows parent links up to the root: the folder's chain, root-most first. Throws on a broken tree. */
function chainOf(folders: ReadonlyMap<number, FolderLink>, folderId: number): Array<{ id: number; name: string }> {
  const chain: Array<{ id: number; name: string }> = [];
  for (let id = folderId; id !== 0; ) {
    const folder = folders.get(id);
    if (!folder || chain.length > folders.size) throw new Error(`folder ${folderId}: its chain of parents is broken at ${id}`);
    chain.push({ id, name: folder.name });
    id = folder.parentId;
  }
  return chain.reverse();
}

/** Paths of `folderIds` and of the root (""), each built once from its parent's; a broken chain gets no path, not a failure. */
export function pathsOf(folders: ReadonlyMap<number, FolderLink>, folderIds: Iterable<number>): Map<number, string> {
  return alongWaysUp(folders, [0, ...folderIds], '', (_id, folder, parentPath) => childPath(parentPath, folder.name));
}

/** A live folder of the account and its ancestors, root-most first, ending with itself; undefined when not one. */
export async function liveFolderChain(
  db: Kysely<Database>,
  accountId: number,
  folderId: number,
): Promise<Array<{ id: number; name: string }> | undefined> {
  const folders = await ancestorsOf(db, accountId, { liveFolder: folderId });
  return folders.has(folderId) ? chainOf(folders, folderId) : undefined;
}

/** Paths of the account's folders among `folderIds` (a call's id list), in one query; others get no path. */
export async function folderPaths(db: Kysely<Database>, accountId: number, folderIds: Iterable<number>): Promise<FolderPaths> {
  const ids = [...new Set(folderIds)].filter((id) => id !== 0);
  const folders = await ancestorsOf(db, accountId, { ids });
  return pathsOf(folders, ids);
}

/** An item's path from its folder's; undefined when unknown (moved into a folder created after the paths were read). */
export function pathIn(paths: FolderPaths, folderId: number, name: string): string | undefined {
  const parent = paths.get(folderId);
  return parent === undefined ? undefined : childPath(parent, name);
}
