/** The queries every signed listing call runs, compiled once (prepared-query.ts); each reads what its repository twin reads. */
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

/** The encrypted folders from the root down to the folder (itself included) with their keys; [] when none. */
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
 * The account's version (grows with every change a listing or a session shows). On SQLite it is kept until anything
 * commits (commit-stamps.ts); the stamp is read before the version, so a kept version is never older than its stamp.
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
