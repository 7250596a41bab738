/**
 * The listing operations: folders first, then files, each in the order asked for; unbounded lists are
 * counted then streamed, bounded ones (new files, search hits) read whole (docs/design.md §10).
 */
import {
  countBin,
  countLinked,
  countShared,
  linkedFileParentPaths,
  listFilesAmong,
  listFoldersAmong,
  newestFileIds,
  sharedItemParentPaths,
  streamBinFiles,
  streamBinFolders,
  streamLinkedFiles,
  streamSharedFiles,
  streamSharedFolders,
  type ListingOrder,
  type PublicUrls,
} from '../../storage/db/repositories/listings-repository';
import { liveFolderChain } from '../../storage/db/repositories/folder-paths';
import { SORT_KEYS, type SortKey } from '../../catalog/results';
import { findFileIdsByName, findFolderIdsByName } from '../../storage/db/repositories/search-repository';
import type { AuthenticatedContext, CallContext, Listing, ParamsOf } from '../context';
import { callVersionOf, folderState } from '../accounts/account-reads';
import { lockOnChain, refuseIfLocked } from '../encryption/encryption';
import { folderChildren } from './listing-cache';
import { invalidArgument, lockedRefusal, notFound } from '../errors';
import { nameKey, nameLength } from './names';
import { shareRendering, shareUrl } from '../sharing/shares';
import { linkUrl } from '../sharing/links';

export type { ListingOrder } from '../../storage/db/repositories/listings-repository';
export { SORT_KEYS, type SortKey } from '../../catalog/results';

/** GetNewUploadFiles: files added in the last 30 days, the newest 500 of them. */
export const NEW_UPLOADS_DAYS = 30;
export const NEW_UPLOADS_LIMIT = 500;

/** FileSearch and FolderSearch answer at most this many hits, with truncated="1" when more match. */
export const SEARCH_HIT_LIMIT = 1_000;

const DAY_MS = 86_400_000;

/** `order` and `desc`: exactly a sort key and "1" or "0"; anything else is 400, so a typo never passes as a default. */
export function parseListingOrder(order: string | null, desc: string | null): ListingOrder {
  if (!SORT_KEYS.includes(order as SortKey)) throw invalidArgument('parameter-invalid', `order must be one of ${SORT_KEYS.join(', ')}`);
  if (desc !== '0' && desc !== '1') throw invalidArgument('parameter-invalid', 'desc must be "1" (descending) or "0" (ascending)');
  return { key: order as SortKey, descending: desc === '1' };
}

/** `dir`: "0", "" or absent is the root; else decimal digits (400 if not); an id too large to exist is 404. */
export function parseFolderId(dir: string | null): number {
  if (dir === null || dir === '') return 0;
  if (!/^[0-9]+$/.test(dir)) throw invalidArgument('parameter-invalid', 'dir must be a folder id (decimal digits), or "0" or "" for the root');
  const id = Number(dir);
  if (!Number.isSafeInteger(id)) throw notFound('folder-not-found', 'folder not found');
  return id;
}

function publicUrls(ctx: CallContext): PublicUrls {
  return {
    share: (code) => shareUrl(ctx.baseUrl, code),
    link: (code, fileName) => linkUrl(ctx.baseUrl, code, fileName),
    ...shareRendering(ctx),
  };
}

// A missing folder, another account's and a binned one are the same 404: no existence oracle. A folder
// locked for the caller answers 423 with what to unlock (encryption.ts).
export async function checkFolder(ctx: CallContext, accountId: number, folderId: number): Promise<void> {
  if (folderId === 0) return;
  const folder = await folderState(ctx, accountId, folderId);
  if (!folder.live) throw notFound('folder-not-found', 'folder not found');
  const lock = await lockOnChain(ctx.services.db, ctx.caller, accountId, folder.lockChain);
  if (lock) throw lockedRefusal(lock);
}

/** The chain of a live folder of the caller, root-most first and the folder last; [] for the root. */
async function folderChain(ctx: CallContext, accountId: number, folderId: number): Promise<Array<{ id: number; name: string }>> {
  if (folderId === 0) return [];
  const chain = await liveFolderChain(ctx.services.db, accountId, folderId);
  if (!chain) throw notFound('folder-not-found', 'folder not found');
  await refuseIfLocked(ctx.services.db, ctx.caller, { type: 'folder', id: folderId });
  return chain;
}

export async function getFiles(ctx: AuthenticatedContext, params: ParamsOf<'GetFiles'>): Promise<Listing> {
  const { uid } = ctx.caller;
  const folderId = parseFolderId(params.dir);
  const order = parseListingOrder(params.order, params.desc);
  await checkFolder(ctx, uid, folderId);
  const children = await folderChildren(ctx.services, { accountId: uid, folderId, order }, callVersionOf(ctx, uid));
  return { kind: 'listing', count: children.count, folders: children.folders, files: children.files };
}

export async function getFilesWhitPath(ctx: AuthenticatedContext, params: ParamsOf<'GetFilesWhitPath'>): Promise<Listing> {
  const { uid } = ctx.caller;
  const folderId = parseFolderId(params.dir);
  const order = parseListingOrder(params.order, params.desc);
  const chain = await folderChain(ctx, uid, folderId);
  const folderPath = chain.map((link) => `/${link.name}`).join('');
  return {
    kind: 'listing',
    path: { value: folderPath || '/', dirs: [{ id: 0, name: '' }, ...chain] },
    ...(await folderChildren(ctx.services, { accountId: uid, folderId, order, folderPath }, callVersionOf(ctx, uid))),
  };
}

export async function getNewUploadFiles(ctx: AuthenticatedContext, params: ParamsOf<'GetNewUploadFiles'>): Promise<Listing> {
  const { uid } = ctx.caller;
  const order = parseListingOrder(params.order, params.desc);
  const since = new Date(ctx.services.now().getTime() - NEW_UPLOADS_DAYS * DAY_MS);
  const { db } = ctx.services;
  const files = await listFilesAmong(db, uid, await newestFileIds(db, uid, since, NEW_UPLOADS_LIMIT), order);
  return { kind: 'listing', count: files.length, folders: [], files };
}

/** The keyword as given (not trimmed: " report" wants the space), compared as a name key: case-insensitive in every script. */
function searchKey(keyword: string | null, maxLength: number): string {
  if (keyword === null || keyword === '') throw invalidArgument('keyword-empty', 'keyword is empty');
  if (nameLength(keyword) > maxLength) throw invalidArgument('keyword-too-long', `keyword is longer than ${maxLength} characters`);
  return nameKey(keyword);
}

/**
 * The hits of a search: one candidate past the limit tells whether more match; items under folders locked for this
 * session are not candidates, so the limit counts visible hits only.
 */
async function searchHits<Item>(
  ctx: AuthenticatedContext,
  params: { keyword: string | null; order: string | null; desc: string | null },
  find: typeof findFileIdsByName,
  list: (db: AuthenticatedContext['services']['db'], accountId: number, ids: readonly number[], order: ListingOrder) => Promise<Item[]>,
): Promise<{ items: Item[]; truncated: boolean }> {
  const { uid, tokenId } = ctx.caller;
  const order = parseListingOrder(params.order, params.desc);
  const key = searchKey(params.keyword, ctx.services.config.limits.maxKeywordLength);
  const { db } = ctx.services;
  const candidates = await find(db, uid, key, SEARCH_HIT_LIMIT + 1, tokenId);
  return { items: await list(db, uid, candidates.slice(0, SEARCH_HIT_LIMIT), order), truncated: candidates.length > SEARCH_HIT_LIMIT };
}

export async function fileSearch(ctx: AuthenticatedContext, params: ParamsOf<'FileSearch'>): Promise<Listing> {
  const { items: files, truncated } = await searchHits(ctx, params, findFileIdsByName, listFilesAmong);
  return { kind: 'listing', count: files.length, truncated, folders: [], files };
}

/** FolderSearch (extension): FileSearch's rules for folder names; each hit carries its own path. */
export async function folderSearch(ctx: AuthenticatedContext, params: ParamsOf<'FolderSearch'>): Promise<Listing> {
  const { items: folders, truncated } = await searchHits(ctx, params, findFolderIdsByName, listFoldersAmong);
  return { kind: 'listing', count: folders.length, truncated, folders, files: [] };
}

export async function getRecycleFiles(ctx: AuthenticatedContext, params: ParamsOf<'GetRecycleFiles'>): Promise<Listing> {
  const { uid } = ctx.caller;
  const order = parseListingOrder(params.order, params.desc);
  const { db, config } = ctx.services;
  const count = await countBin(db, uid);
  return {
    kind: 'listing',
    count: count.folders + count.files,
    folders: streamBinFolders(db, uid, order, config.recycleRetentionDays),
    files: streamBinFiles(db, uid, order, config.recycleRetentionDays),
  };
}

export async function getShareFiles(ctx: AuthenticatedContext, params: ParamsOf<'GetShareFiles'>): Promise<Listing> {
  const { uid } = ctx.caller;
  const order = parseListingOrder(params.order, params.desc);
  const { db } = ctx.services;
  const count = await countShared(db, uid);
  const paths = await sharedItemParentPaths(db, uid);
  const urls = publicUrls(ctx);
  return {
    kind: 'listing',
    count: count.folders + count.files,
    folders: streamSharedFolders(db, uid, order, paths, urls),
    files: streamSharedFiles(db, uid, order, paths, urls),
  };
}

export async function getLinkFiles(ctx: AuthenticatedContext, params: ParamsOf<'GetLinkFiles'>): Promise<Listing> {
  const { uid } = ctx.caller;
  const order = parseListingOrder(params.order, params.desc);
  const { db } = ctx.services;
  const count = await countLinked(db, uid);
  const paths = await linkedFileParentPaths(db, uid);
  return { kind: 'listing', count, folders: [], files: streamLinkedFiles(db, uid, order, paths, publicUrls(ctx)) };
}
