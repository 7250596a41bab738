/**
 * Reads kept at the account's version (docs/design.md §6): what the checks of a
 * call read about an account (its token, the folder it names) is kept in memory with the version
 * it was read at, and used again while that is still the account's version.
 *
 * The account's version (storage/db/engine/hot-queries.ts accountVersion) is a counter that the database
 * itself moves on, in triggers, with every committed change to the account's folders, files,
 * encryption (migration 0008_listing_versions) and sessions (0011_session_versions), whoever makes
 * it: this process, another instance on the same PostgreSQL, the CLI. A value is kept with a
 * version read no later than the value itself, so it can be newer than its version but never older;
 * and it is used only while the account's version read afresh is the same. A change committed
 * anywhere is therefore seen by the next call, exactly as without the cache.
 *
 * Every authenticated call reads its account's version once, when its token is checked
 * (sessions.ts: it is `caller.accountVersion`), and its checks use that reading: one small query
 * instead of one per check. What is kept is in the app's caches (caches.ts).
 */
import { lockChain, type LockLink } from '../../storage/db/repositories/encryption-repository';
import { isLiveFolderOf } from '../../storage/db/engine/hot-queries';
import type { CallContext } from '../context';

/** The version a call's checks of `accountId` may use: the caller's reading, when it is of that account. */
export function callVersionOf(ctx: CallContext, accountId: number): number | undefined {
  return ctx.caller?.uid === accountId ? ctx.caller.accountVersion : undefined;
}

/** What the checks of a call on a folder need to know of it. */
export interface FolderState {
  /** The folder exists, is the account's and is not in the bin. */
  readonly live: boolean;
  /** The encrypted folders at and above it, root-most first (storage lockChain); [] when not live. */
  readonly lockChain: readonly LockLink[];
}

/** A folder of the account (not the root), as of the call: kept at the call's version, else read. */
export async function folderState(ctx: CallContext, accountId: number, folderId: number): Promise<FolderState> {
  const version = callVersionOf(ctx, accountId);
  const key = `${accountId}/${folderId}`;
  const store = version === undefined ? null : ctx.services.caches.folderStates;
  const kept = store?.get(key, version!);
  if (kept) return kept;
  const { db } = ctx.services;
  const live = await isLiveFolderOf(db, accountId, folderId);
  const state: FolderState = Object.freeze({ live, lockChain: Object.freeze(live ? await lockChain(db, accountId, { type: 'folder', id: folderId }) : []) });
  // About 200 bytes, and 100 a link.
  store?.put(key, version!, state, 200 + 100 * state.lockChain.length);
  return state;
}
