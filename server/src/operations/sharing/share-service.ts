/**
 * The ShareService (docs/sharing.md §5): anonymous calls of the share page; the share code is the capability, and the
 * extraction code must come with every call, so nothing a share issues works without it.
 */
import { countChildren, streamChildFiles, streamChildFolders } from '../../storage/db/repositories/listings-repository';
import { countShareDownload, findShareByCode, findSharedTarget, type SharedTarget, type ShareRecord } from '../../storage/db/repositories/shares-repository';
import type { CallContext, ItemResult, Listing, ParamsOf, UrlResult } from '../context';
import { sameSecret } from '../crypto/constant-time';
import { grantUrl, urlLifetime, type GrantRoute } from '../content/downloads';
import { claimedKind } from '../previews/content-sniffing';
import { forbidden, lockedRefusal, notFound, type OpError, tooManyAttempts } from '../errors';
import type { ReasonOf } from '../reasons';
import { itemIdOf, parseIdList } from '../tree/id-lists';
import { checkZipContents, urlExpiry, zipUrl } from '../content/zip-downloads';
import { findLiveFiles, findLiveFolders } from '../../storage/db/repositories/items-repository';
import { parseFolderId, parseListingOrder } from '../tree/listings';
import { downpwdOf, extractionCodeStamp, normalizedExtractionCode, SHARE_CODE_FORMAT, shareAttributes } from './shares';
import type { ItemLock } from '../../storage/db/repositories/encryption-repository';
import { clearFailures, extractionCodeCounters, recordFailure, secondsBlocked, shareAddressCounter } from '../accounts/throttle';

interface OpenShare {
  readonly share: ShareRecord;
  readonly target: SharedTarget;
}

const SHARE_NOT_FOUND = 'share not found, or no longer shared';

/** Why a ShareService call is 403: the share page decides on it (ask, wrong, used up), never on the message. */
export type ShareRefusalReason = Exclude<ReasonOf<403>, 'sign-wrong' | 'password-wrong'>;

const refusedShare = (reason: ShareRefusalReason, message: string): OpError => forbidden(reason, message);

function lockedForVisitors(lock: ItemLock, what: string): never {
  throw lockedRefusal(lock, `${what} is encrypted: the owner must decrypt it before it can be opened`, 'visitor');
}

async function refuseIfBlocked(ctx: CallContext, counters: Parameters<typeof secondsBlocked>[1]): Promise<void> {
  const retryAfter = await secondsBlocked(ctx.services.db, counters, ctx.services.now());
  if (retryAfter > 0) throw tooManyAttempts('share-attempts', 'too many wrong share codes or extraction codes; try again later', retryAfter);
}

/** The share a code names, its live item, the extraction code, the lock, checked in that order (docs/sharing.md §5). */
export async function openShare(ctx: CallContext, code: string | null, downpwd: string | null): Promise<OpenShare> {
  const { db, secret, now } = ctx.services;
  const address = shareAddressCounter(ctx.clientAddress);
  await refuseIfBlocked(ctx, [address]);

  const share = code !== null && SHARE_CODE_FORMAT.test(code) ? await findShareByCode(db, code) : undefined;
  if (!share) {
    await recordFailure(db, [address], now());
    throw notFound('share-not-found', SHARE_NOT_FOUND);
  }
  const target = await findSharedTarget(db, share.accountId, { type: share.itemType, id: share.itemId });
  if (!target) throw notFound('share-not-found', SHARE_NOT_FOUND);

  if (share.downpwdSealed !== null) {
    const [pair, perShare] = extractionCodeCounters(share.id, ctx.clientAddress);
    await refuseIfBlocked(ctx, [pair, perShare, address]);
    const given = normalizedExtractionCode(downpwd);
    if (given === '') throw refusedShare('downpwd-required', 'this share needs its extraction code');
    if (!sameSecret(given, downpwdOf(secret, share))) {
      await recordFailure(db, [pair, perShare, address], now());
      throw refusedShare('downpwd-wrong', 'wrong extraction code');
    }
    await clearFailures(db, pair);
  }

  if (target.lock) lockedForVisitors(target.lock, share.itemType === 'folder' ? 'the shared folder' : 'the shared file');
  return { share, target };
}

export async function shareOpen(ctx: CallContext, params: ParamsOf<'ShareOpen'>): Promise<ItemResult> {
  const { share, target } = await openShare(ctx, params.code, params.downpwd);
  return { kind: 'item', item: { ...target.record, share: shareAttributes(ctx.services.secret, ctx.baseUrl, share, 'visitor') } };
}

export async function shareList(ctx: CallContext, params: ParamsOf<'ShareList'>): Promise<Listing> {
  const order = parseListingOrder(params.order, params.desc);
  const requested = parseFolderId(params.dir);
  const { share } = await openShare(ctx, params.code, params.downpwd);
  const folderId = await folderInShare(ctx, share, requested);
  const owner = share.accountId;
  const { db } = ctx.services;
  const count = await countChildren(db, owner, folderId);
  return {
    kind: 'listing',
    count: count.folders + count.files,
    folders: streamChildFolders(db, owner, folderId, order),
    files: streamChildFiles(db, owner, folderId, order),
  };
}

/** The folder `requested` (0: the shared folder itself) if it is the shared folder or a live, unlocked folder beneath it. */
async function folderInShare(ctx: CallContext, share: ShareRecord, requested: number): Promise<number> {
  if (share.itemType !== 'folder') throw notFound('folder-not-found', 'folder not found: this share is a file');
  if (requested === 0 || requested === share.itemId) return share.itemId;
  const folder = await findSharedTarget(ctx.services.db, share.accountId, { type: 'folder', id: requested }, share.itemId);
  if (!folder || !folder.inside) throw notFound('folder-not-found', 'folder not found in this share');
  if (folder.lock) lockedForVisitors(folder.lock, 'this folder');
  return requested;
}

/** A ZIP of the shared folder, or of a selection in one of its folders (`dir`): one download of the share's limit. */
export async function shareZipDownload(ctx: CallContext, params: ParamsOf<'ShareZipDownload'>): Promise<UrlResult> {
  const { db, config } = ctx.services;
  // What the call says is checked first (400), as every operation does, before the share is looked at.
  const requested = parseFolderId(params.dir);
  let folderIds = parseIdList(params.dirids, 'dirids', config.limits.maxIdsPerList);
  const fileIds = parseIdList(params.fids, 'fids', config.limits.maxIdsPerList);
  const { share, target } = await openShare(ctx, params.code, params.downpwd);
  const within = await folderInShare(ctx, share, requested);
  const owner = share.accountId;
  let name = target.record.name;
  if (folderIds.length === 0 && fileIds.length === 0) {
    folderIds = [within];
    if (within !== share.itemId) name = (await findLiveFolders(db, owner, [within]))[0]?.name ?? name;
  } else {
    const folders = (await findLiveFolders(db, owner, folderIds)).filter((folder) => folder.dir === within);
    const files = (await findLiveFiles(db, owner, fileIds)).filter((file) => file.dir === within);
    if (folders.length !== folderIds.length || files.length !== fileIds.length) throw notFound('item-not-found', 'not found in this share');
    if (folders.length + files.length === 1) name = folders[0]?.name ?? files[0].name;
  }
  const grant = { accountId: owner, folderIds, fileIds, expires: urlExpiry(ctx.services), share: { id: share.id, stamp: extractionCodeStamp(share.downpwdSealed), within } };
  await checkZipContents(ctx.services, grant);
  await countDownload(ctx, share.id);
  return zipUrl(ctx.services, ctx.baseUrl, name, grant);
}

/** Counts one download of the share, 403 past its limit: called last, so that a refused call never uses one up. */
async function countDownload(ctx: CallContext, shareId: number): Promise<void> {
  if (!(await countShareDownload(ctx.services.db, shareId))) throw refusedShare('download-limit', 'download limit reached: this share allows no more downloads');
}

export async function shareDownload(ctx: CallContext, params: ParamsOf<'ShareDownload'>): Promise<UrlResult> {
  return sharedFileUrl(ctx, params, 'd');
}

/**
 * SharePreview: ShareDownload's grant for the preview route /v/ (docs/sharing.md §previews). Images
 * (and unknown kinds, which /v/ refuses) get a grant for the scaled rendition only, not counted;
 * anything that could give the original (video, audio, PDF, text) counts one download.
 */
export async function sharePreview(ctx: CallContext, params: ParamsOf<'SharePreview'>): Promise<UrlResult> {
  return sharedFileUrl(ctx, params, 'v');
}

async function sharedFileUrl(ctx: CallContext, params: ParamsOf<'ShareDownload'>, route: GrantRoute): Promise<UrlResult> {
  const { share, target } = await openShare(ctx, params.code, params.downpwd);
  const { db, secret, now } = ctx.services;
  const fileId = itemIdOf(params.fid);

  let file;
  if (target.type === 'file') {
    if (fileId !== share.itemId) throw notFound('file-not-found', 'file not found in this share');
    file = target.record;
  } else {
    const found = await findSharedTarget(db, share.accountId, { type: 'file', id: fileId }, share.itemId);
    if (!found || found.type !== 'file' || !found.inside) throw notFound('file-not-found', 'file not found in this share');
    if (found.lock) lockedForVisitors(found.lock, 'this file');
    file = found.record;
  }

  const kind = claimedKind(file.ext);
  const renditionOnly = route === 'v' && (kind === 'image' || kind === undefined);
  if (!renditionOnly) await countDownload(ctx, share.id);
  const grant = {
    fileId: file.id,
    accountId: share.accountId,
    contentId: file.contentId,
    expires: new Date(now().getTime() + urlLifetime(route)),
    share: { id: share.id, stamp: extractionCodeStamp(share.downpwdSealed) },
    ...(renditionOnly ? { renditionOnly } : {}),
  };
  return grantUrl(ctx.baseUrl, secret, grant, file.name, route);
}
