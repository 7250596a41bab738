/**
 * The ShareService (ext, DECISIONS.md §9): ShareOpen, ShareList and ShareDownload, the anonymous
 * calls of the public share page `/s/{code}`. No uid, token or sign: the share code is the
 * capability, and the extraction code (if the share has one) must come with every call, so that
 * nothing a share issues — its item, its listings, its download URLs — works without it.
 *
 * Every call goes through openShare, in this order:
 * 1. An address blocked for too many wrong codes gets 429 with retryAfter, whatever it asks.
 * 2. The share code: unknown (or malformed) → 404, counted against the address.
 * 3. The item: not live (in the bin, beneath a folder in the bin, deleted) → 404 at once, as for an
 *    unknown code; a restore brings the share back. Not counted: the code was right.
 * 4. The extraction code, for a share that has one: the (share, address) pair and the share are
 *    checked for a block first (429); an empty one → 403 "needs its extraction code" (not counted:
 *    that is how a share page learns to ask); a wrong one → 403, counted against the pair, the
 *    share and the address (throttle.ts shareRules). A right one clears the pair's count.
 * 5. A locked item (encrypted, or beneath an encrypted folder) → 423. The tip is the owner's
 *    password hint and is not shown to visitors.
 *
 * ShareList lists a folder within a shared folder ("0" or "" = the shared folder): a folder
 * outside the shared subtree, a file share, or a folder not live is 404; the order rules are those
 * of every listing. Items carry no `path`: the owner's folders above the share are nobody's business.
 *
 * ShareDownload returns a short-lived download URL (downloads.ts) for the shared file or a live
 * file beneath the shared folder, bound to the share: opening it checks again that the share gives
 * that file with the same extraction code. Each URL counts one download against `downValue` with
 * one conditional UPDATE, so concurrent calls can never pass the limit. When the limit is reached
 * the answer is 403 "download limit reached" (DECISIONS.md's table has no 410; 403 = not allowed).
 * Every 403 of the ShareService carries `reason` (ShareRefusalReason) so that clients can tell them apart.
 */
import { countChildren, streamChildFiles, streamChildFolders } from '../../storage/db/repositories/listings-repository';
import { countShareDownload, findShareByCode, findSharedTarget, type SharedTarget, type ShareRecord } from '../../storage/db/repositories/shares-repository';
import type { CallContext, ItemResult, Listing, ParamsOf, ShareAttributes, UrlResult } from '../context';
import { sameSecret } from '../crypto/constant-time';
import { DOWNLOAD_URL_LIFETIME_MS, signDownloadToken } from '../content/downloads';
import { lockedRefusal, notFound, OpError, ResultCode, tooManyAttempts } from '../errors';
import { itemIdOf } from '../tree/id-lists';
import { parseFolderId, parseListingOrder } from '../tree/listings';
import {
  extractionCodeStamp,
  normalizedExtractionCode,
  openExtractionCode,
  SHARE_CODE_FORMAT,
  shareImageUrl,
  shareUrl,
} from './shares';
import type { ItemLock } from '../../storage/db/repositories/encryption-repository';
import { clearFailures, extractionCodeCounters, recordFailure, secondsBlocked, shareAddressCounter } from '../accounts/throttle';

/** An open share and its live item. */
interface OpenShare {
  readonly share: ShareRecord;
  readonly target: SharedTarget;
}

const SHARE_NOT_FOUND = 'share not found, or no longer shared';

/**
 * Why a ShareService call is 403, as the refusal's `reason` attribute: the share page decides on
 * it (ask for the code, say it was wrong, say the downloads are used up), never on the message.
 */
export type ShareRefusalReason = 'downpwd-required' | 'downpwd-wrong' | 'download-limit';

function refusedShare(reason: ShareRefusalReason, message: string): OpError {
  return new OpError(ResultCode.Forbidden, message, { reason });
}

function lockedForVisitors(lock: ItemLock, what: string): never {
  throw lockedRefusal(lock, `${what} is encrypted: the owner must decrypt it before it can be opened`, 'visitor');
}

async function refuseIfBlocked(ctx: CallContext, counters: Parameters<typeof secondsBlocked>[1]): Promise<void> {
  const retryAfter = await secondsBlocked(ctx.services.db, counters, ctx.services.now());
  if (retryAfter > 0) throw tooManyAttempts('too many wrong share codes or extraction codes; try again later', retryAfter);
}

/** Steps 1–5 of the header: the share a code names, its live item, the extraction code, the lock. */
async function openShare(ctx: CallContext, code: string | null, downpwd: string | null): Promise<OpenShare> {
  const { db, secret, now } = ctx.services;
  const address = shareAddressCounter(ctx.clientAddress);
  await refuseIfBlocked(ctx, [address]);

  const share = code !== null && SHARE_CODE_FORMAT.test(code) ? await findShareByCode(db, code) : undefined;
  if (!share) {
    await recordFailure(db, [address], now());
    throw notFound(SHARE_NOT_FOUND);
  }
  const target = await findSharedTarget(db, share.accountId, { type: share.itemType, id: share.itemId });
  if (!target) throw notFound(SHARE_NOT_FOUND);

  if (share.downpwdSealed !== null) {
    const [pair, perShare] = extractionCodeCounters(share.id, ctx.clientAddress);
    await refuseIfBlocked(ctx, [pair, perShare, address]);
    const given = normalizedExtractionCode(downpwd);
    if (given === '') throw refusedShare('downpwd-required', 'this share needs its extraction code');
    const expected = openExtractionCode(secret, share.downpwdSealed);
    if (expected === null) throw new Error(`share ${share.id}: its extraction code cannot be opened with this server secret`);
    if (!sameSecret(given, expected)) {
      await recordFailure(db, [pair, perShare, address], now());
      throw refusedShare('downpwd-wrong', 'wrong extraction code');
    }
    await clearFailures(db, pair);
  }

  if (target.lock) lockedForVisitors(target.lock, share.itemType === 'folder' ? 'the shared folder' : 'the shared file');
  return { share, target };
}

/** What visitors see of a share: never its extraction code. */
function visitorShareAttributes(ctx: CallContext, share: ShareRecord): ShareAttributes {
  return {
    code: share.code,
    url: shareUrl(ctx.baseUrl, share.code),
    downpwd: '',
    downValue: share.downloadLimit,
    downloads: share.downloads,
    description: share.description,
    image: shareImageUrl(ctx.baseUrl, ctx.services.secret, share),
  };
}

export async function shareOpen(ctx: CallContext, params: ParamsOf<'ShareOpen'>): Promise<ItemResult> {
  const { share, target } = await openShare(ctx, params.code, params.downpwd);
  const attributes = visitorShareAttributes(ctx, share);
  const item = target.record;
  return { kind: 'item', item: { ...item, share: attributes } };
}

export async function shareList(ctx: CallContext, params: ParamsOf<'ShareList'>): Promise<Listing> {
  const order = parseListingOrder(params.order, params.desc);
  const requested = parseFolderId(params.dir);
  const { share } = await openShare(ctx, params.code, params.downpwd);
  if (share.itemType !== 'folder') throw notFound('folder not found: this share is a file');
  const owner = share.accountId;
  const { db } = ctx.services;

  let folderId = share.itemId;
  if (requested !== 0 && requested !== share.itemId) {
    const folder = await findSharedTarget(db, owner, { type: 'folder', id: requested }, share.itemId);
    if (!folder || !folder.inside) throw notFound('folder not found in this share');
    if (folder.lock) lockedForVisitors(folder.lock, 'this folder');
    folderId = requested;
  }
  const count = await countChildren(db, owner, folderId);
  return {
    kind: 'listing',
    count: count.folders + count.files,
    folders: streamChildFolders(db, owner, folderId, order),
    files: streamChildFiles(db, owner, folderId, order),
  };
}

export async function shareDownload(ctx: CallContext, params: ParamsOf<'ShareDownload'>): Promise<UrlResult> {
  const { share, target } = await openShare(ctx, params.code, params.downpwd);
  const { db, secret, now } = ctx.services;
  const fileId = itemIdOf(params.fid);

  let file;
  if (target.type === 'file') {
    if (fileId !== share.itemId) throw notFound('file not found in this share');
    file = target.record;
  } else {
    const found = await findSharedTarget(db, share.accountId, { type: 'file', id: fileId }, share.itemId);
    if (!found || found.type !== 'file' || !found.inside) throw notFound('file not found in this share');
    if (found.lock) lockedForVisitors(found.lock, 'this file');
    file = found.record;
  }

  // Last, once everything else has passed: a refused call never uses up a download.
  if (!(await countShareDownload(db, share.id))) throw refusedShare('download-limit', 'download limit reached: this share allows no more downloads');
  const expires = new Date(now().getTime() + DOWNLOAD_URL_LIFETIME_MS);
  const token = signDownloadToken(secret, {
    fileId: file.id,
    accountId: share.accountId,
    contentId: file.contentId,
    expires,
    share: { id: share.id, stamp: extractionCodeStamp(share.downpwdSealed) },
  });
  return { kind: 'url', url: `${ctx.baseUrl}/d/${token}/${encodeURIComponent(file.name)}`, expires };
}
