/**
 * The queries of the call path that run on every signed listing call, compiled once per database
 * (prepared-query.ts) instead of built by Kysely on every call: the folder check of GetFiles, the
 * walk up to the folder's encrypted ancestors (the lock check), and the account's version (what the
 * token check, the folder checks and the listing cache keep their reads by: migrations
 * 0008_listing_versions and 0011_session_versions). Each reads exactly what the general
 * repository function of the same meaning reads (noted on each).
 */
import { sql, type Kysely } from 'kysely';
import { preparedQuery } from './prepared-query';
import { commitStampsOf } from './sqlite-driver';
import type { Database } from '../schema';

/** The bound of walks up the tree, as encryption-repository's MAX_WALK_DEPTH: a corrupt cycle ends. */
const MAX_WALK_DEPTH = 100_000;

const liveFolder = preparedQuery<[accountId: number, folderId: number], { id: number }>(2, (db: Kysely<Database>, accountId, folderId) =>
  db
    .selectFrom('folders')
    .select('folders.id')
    .where('folders.id', '=', folderId)
    .where('folders.account_id', '=', accountId)
    .where('folders.deleted_at', 'is', null)
    .where('folders.binned_under', 'is', null),
);

/** Whether the folder is a live folder of the account (not missing, not another account's, not in the bin). */
export async function isLiveFolderOf(db: Kysely<Database>, accountId: number, folderId: number): Promise<boolean> {
  return (await liveFolder.executeTakeFirst(db, accountId, folderId)) !== undefined;
}

const encryptedFolderChain = preparedQuery<[accountId: number, folderId: number], { id: number; key_id: number }>(
  2,
  (db, accountId, folderId) => sql<{ id: number; key_id: number }>`
    with recursive chain(id, parent_id, key_id, depth) as (
      select id, parent_id, key_id, 0 from folders where id = ${folderId} and account_id = ${accountId}
      union all
      select f.id, f.parent_id, f.key_id, c.depth + 1
      from folders f join chain c on f.id = c.parent_id
      where f.account_id = ${accountId} and c.depth < ${MAX_WALK_DEPTH}
    )
    select id, key_id from chain where key_id is not null order by depth desc`,
);

/**
 * The encrypted folders from the root down to the folder (itself included) and their keys,
 * root-most first; [] when none (encryption-repository lockChain of a folder).
 */
export async function encryptedFoldersAbove(db: Kysely<Database>, accountId: number, folderId: number): Promise<Array<{ id: number; keyId: number }>> {
  const rows = await encryptedFolderChain.execute(db, accountId, folderId);
  return rows.map((row) => ({ id: Number(row.id), keyId: Number(row.key_id) }));
}

const versionOfAccount = preparedQuery<[accountId: number], { version: number }>(1, (db, accountId) =>
  sql<{ version: number }>`select cast(coalesce(sum(version), 0) as bigint) as version from listing_versions where account_id = ${accountId}`,
);

/** Per app; at most this many accounts between two commits (a few bytes each). */
const MAX_KEPT_VERSIONS = 50_000;

/** The versions read since the database's last commit, by account (accountVersion; operations/caches.ts). */
export class AccountVersions {
  /** The WAL-index header read before any of these versions was (commit-stamps.ts). */
  stamp: Buffer | null = null;
  byAccount = new Map<number, number>();
}

/**
 * The account's version: it grows with every committed change to what a listing of the account
 * shows (0008_listing_versions) and to its sessions (0011_session_versions), whoever made it.
 *
 * On SQLite the version read is kept in `kept` and used again, without a query, until anything at
 * all is committed to the database by any connection (commit-stamps.ts): it cannot have moved before
 * that. The stamp is read before the version, so a version kept with a stamp is never older than it.
 */
export async function accountVersion(db: Kysely<Database>, accountId: number, kept?: AccountVersions): Promise<number> {
  const stamps = kept ? commitStampsOf(db) : null;
  const keptVersion = kept?.byAccount.get(accountId);
  // Nothing committed since the stamp the version was kept with: it is the version now.
  if (keptVersion !== undefined && stamps && stamps.unchangedSince(kept!.stamp!)) return keptVersion;
  const stamp = stamps?.current() ?? null;
  const row = await versionOfAccount.executeTakeFirst(db, accountId);
  const version = Number(row?.version ?? 0);
  if (stamp && kept) {
    // Another read may have kept versions at a later stamp meanwhile; either set is right for its
    // stamp, and the one kept last is the one the next calls compare with.
    if (!kept.stamp?.equals(stamp) || kept.byAccount.size >= MAX_KEPT_VERSIONS) {
      kept.stamp = stamp;
      kept.byAccount = new Map();
    }
    kept.byAccount.set(accountId, version);
  }
  return version;
}
