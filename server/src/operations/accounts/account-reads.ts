/**
 * Reads kept at the account's version (docs/design.md §6): a folder's state is reused while the account's
 * version, read once by the call's token check and moved by triggers on every commit, is the same.
 */
import { lockChain, type LockLink } from '../../storage/db/repositories/encryption-repository';
import { isLiveFolderOf } from '../../storage/db/engine/hot-queries';
import { findAccount } from '../../storage/db/repositories/accounts-repository';
import type { AccountResult, AuthenticatedContext, CallContext } from '../context';
import { notFound } from '../errors';

/** The version a call's checks of `accountId` may use: the caller's reading, when it is of that account. */
export function callVersionOf(ctx: CallContext, accountId: number): number | undefined {
  return ctx.caller?.uid === accountId ? ctx.caller.accountVersion : undefined;
}

/** What the checks of a call on a folder need: live (the account's, not in the bin), and its encrypted ancestors. */
export interface FolderState {
  readonly live: boolean;
  /** Root-most first (storage lockChain); [] when not live. */
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
  store?.put(key, version!, state, 200 + 100 * state.lockChain.length);
  return state;
}

/** GetAccountInfo (ext): the caller's name, bytes used (the bin's included, every copy in full) and quota. */
export async function getAccountInfo(ctx: AuthenticatedContext): Promise<AccountResult> {
  const account = await findAccount(ctx.services.db, { id: ctx.caller.uid });
  if (!account) throw notFound('account-not-found', 'account not found');
  return { kind: 'account', account: { name: account.name, used: account.usedBytes, quota: account.quotaBytes } };
}
