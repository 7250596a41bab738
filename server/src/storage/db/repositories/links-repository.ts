/**
 * SQL for direct links (rules: operations/sharing/links.ts). A file has at most one link; a link leads to its file
 * only while it is live, and a binned file keeps its row so a restore brings it back.
 */
import { sql, type Kysely } from 'kysely';
import type { ItemLock } from './encryption-repository';
import type { Database } from '../schema';
import { MAX_WALK_DEPTH } from './items-repository';

/** A live file as a link sees it: where its bytes are, its link (if any), and what locks it. */
export interface LinkTarget {
  readonly fileId: number;
  readonly accountId: number;
  readonly name: string;
  readonly ext: string;
  readonly linked: boolean;
  /** The bytes as stored: size, strong validator, and where they are in the content store. */
  readonly size: number;
  readonly sha256: string;
  readonly storageKey: string;
  /** The file's link; null when it has none. */
  readonly link: { readonly id: number; readonly code: string; readonly hits: number } | null;
  /** Null when nothing is encrypted: neither the file (its record or its content) nor any folder above it. */
  readonly lock: ItemLock | null;
}

/** Which file: one of an account's files by id (FileLink), or the file a code leads to (the /l/ route). */
export type LinkTargetKey = { readonly accountId: number; readonly fileId: number } | { readonly code: string };

interface TargetRow {
  file_id: number;
  account_id: number;
  name: string;
  ext: string;
  linked: number;
  file_encrypted: number;
  content_encrypted: number;
  size: number;
  sha256: string;
  storage_key: string;
  link_id: number | null;
  code: string | null;
  hits: number | null;
  locked_folder_id: number | null;
  locked_folder_tip: string | null;
  file_tip: string | null;
}

/**
 * The live file `key` names, its content, link and lock, in one query: every rule of what locks an item belongs
 * here, so that FileLink and the /l/ route cannot disagree.
 */
export async function findLinkTarget(db: Kysely<Database>, key: LinkTargetKey): Promise<LinkTarget | undefined> {
  // The file is matched by a predicate on `files` itself (never a joined row of constants), so that
  // both engines find it by primary key, or through the unique index on links.code.
  const [from, match] =
    'code' in key
      ? [sql`links t join files f on f.id = t.file_id and f.account_id = t.account_id`, sql`t.code = ${key.code}`]
      : [sql`files f`, sql`f.id = ${key.fileId} and f.account_id = ${key.accountId}`];
  const { rows } = await sql<TargetRow>`
    with recursive
    live_file as (
      select f.id, f.account_id, f.folder_id, f.name, f.ext, f.linked, f.encrypted, f.content_id, f.key_id
      from ${from}
      where ${match} and f.deleted_at is null and f.binned_under is null
    ),
    chain(id, account_id, parent_id, encrypted, key_id, depth) as (
      select fo.id, fo.account_id, fo.parent_id, fo.encrypted, fo.key_id, 1
      from live_file lf join folders fo on fo.id = lf.folder_id and fo.account_id = lf.account_id
      union all
      select fo.id, fo.account_id, fo.parent_id, fo.encrypted, fo.key_id, c.depth + 1
      from chain c join folders fo on fo.id = c.parent_id and fo.account_id = c.account_id
      where c.depth < ${MAX_WALK_DEPTH}
    )
    select
      lf.id as file_id, lf.account_id, lf.name, lf.ext, lf.linked, lf.encrypted as file_encrypted,
      ct.encrypted as content_encrypted, ct.size, ct.sha256, ct.storage_key,
      l.id as link_id, l.code, l.hits,
      (select c.id from chain c where c.encrypted = 1 order by c.depth limit 1) as locked_folder_id,
      (select k.tip from chain c join encryption_keys k on k.id = c.key_id where c.encrypted = 1 order by c.depth limit 1) as locked_folder_tip,
      (select k.tip from encryption_keys k where k.id = lf.key_id) as file_tip
    from live_file lf
    join content ct on ct.id = lf.content_id
    left join links l on l.file_id = lf.id and l.account_id = lf.account_id`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  const fileId = Number(row.file_id);
  let lock: ItemLock | null = null;
  if (row.locked_folder_id !== null) lock = { type: 'folder', id: Number(row.locked_folder_id), tip: row.locked_folder_tip ?? '' };
  else if (Number(row.file_encrypted) === 1 || Number(row.content_encrypted) === 1) lock = { type: 'file', id: fileId, tip: row.file_tip ?? '' };
  return {
    fileId,
    accountId: Number(row.account_id),
    name: row.name,
    ext: row.ext,
    linked: Number(row.linked) === 1,
    size: Number(row.size),
    sha256: row.sha256,
    storageKey: row.storage_key,
    link: row.link_id === null ? null : { id: Number(row.link_id), code: row.code as string, hits: Number(row.hits) },
    lock,
  };
}

/** Links the file with `code` unless it has a link; returns its code afterwards (the older one if a concurrent FileLink won). */
export async function insertLink(
  db: Kysely<Database>,
  link: { readonly accountId: number; readonly fileId: number; readonly code: string; readonly at: Date },
): Promise<string> {
  await db
    .insertInto('links')
    .values({ account_id: link.accountId, file_id: link.fileId, code: link.code, created_at: link.at.getTime() })
    .onConflict((oc) => oc.column('file_id').doNothing())
    .execute();
  await setLinkedFlag(db, link.accountId, link.fileId, true);
  const row = await db
    .selectFrom('links')
    .select('code')
    .where('file_id', '=', link.fileId)
    .where('account_id', '=', link.accountId)
    .executeTakeFirstOrThrow();
  return row.code;
}

/** Removes the file's link, if it has one, and clears its linked flag. */
export async function deleteLink(db: Kysely<Database>, accountId: number, fileId: number): Promise<void> {
  await db.deleteFrom('links').where('account_id', '=', accountId).where('file_id', '=', fileId).execute();
  await setLinkedFlag(db, accountId, fileId, false);
}

async function setLinkedFlag(db: Kysely<Database>, accountId: number, fileId: number, linked: boolean): Promise<void> {
  await db
    .updateTable('files')
    .set({ linked: linked ? 1 : 0 })
    .where('account_id', '=', accountId)
    .where('id', '=', fileId)
    .execute();
}

/** Counts one hit, atomically (concurrent hits never overwrite each other). */
export async function countLinkHit(db: Kysely<Database>, linkId: number): Promise<void> {
  await db
    .updateTable('links')
    .set((eb) => ({ hits: eb('hits', '+', 1) }))
    .where('id', '=', linkId)
    .execute();
}
