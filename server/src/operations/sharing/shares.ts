/**
 * Sharing (docs/sharing.md §2–3): FileShare, FolderShare, Unshare, ensureShare, and the rules every reader of a share
 * follows. Sharing again keeps the code; the extraction code is sealed, not hashed, since the owner is shown it.
 */
import { createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { inBatches, TimeSlices } from '../../storage/db/engine/batches';
import { queueRemoval } from '../../storage/db/repositories/content-repository';
import { lockAccountTree } from '../../storage/db/repositories/items-repository';
import { releaseUsedBytes } from '../../storage/db/repositories/recycle-bin-repository';
import {
  deleteSharesOf,
  findLockAmong,
  findShareById,
  findSharedTarget,
  findSharesOf,
  insertShareIfMissing,
  setSharedFlags,
  upsertShares,
  type ShareRecord,
} from '../../storage/db/repositories/shares-repository';
import type { PublicUrls } from '../../storage/db/repositories/listings-repository';
import type { Database, ShareItemType } from '../../storage/db/schema';
import type { AuthenticatedContext, CallContext, Empty, FileItem, FolderItem, Listing, ParamsOf, ShareAttributes, Services } from '../context';
import { sameSecret } from '../crypto/constant-time';
import { seal, unseal } from '../crypto/sealing';
import { invalidArgument, lockedRefusal } from '../errors';
import { inTreeTransaction } from '../tree/file-records';
import { parseIdLists, parseNonEmptyIdList, requireFile, requireFiles, requireFolder, requireFolders } from '../tree/id-lists';

const CODE_BYTES = 16;
export const SHARE_CODE_FORMAT = /^[A-Za-z0-9_-]{22}$/;

export const DOWNPWD_MIN_LENGTH = 4;
export const DOWNPWD_MAX_LENGTH = 32;

const EXTRACTION_CODE_PURPOSE = 'fss/share-extraction-code/v1';
const IMAGE_URL_PURPOSE = 'fss/share-image-url/v1';

/** A share as other features see it (e-mail sharing): the extraction code unsealed. */
export interface Share {
  readonly id: number;
  readonly itemType: ShareItemType;
  readonly itemId: number;
  readonly code: string;
  /** The extraction code; "" = an open share. */
  readonly downpwd: string;
  /** Most downloads allowed; 0 = no limit. */
  readonly downValue: number;
  readonly downloads: number;
  readonly description: string;
  readonly hasImage: boolean;
}

export function newShareCode(): string {
  return randomBytes(CODE_BYTES).toString('base64url');
}

/** The public share page of a code (what listings, results and e-mails show). */
export function shareUrl(baseUrl: string, code: string): string {
  return `${baseUrl}/s/${code}`;
}

// ---- The extraction code, sealed under the server secret (crypto/sealing.ts) ---------------------

export function sealExtractionCode(secret: Buffer, code: string): string {
  return seal(secret, EXTRACTION_CODE_PURPOSE, Buffer.from(code, 'utf8'));
}

/** The extraction code sealed by sealExtractionCode; null when the secret or the data is wrong. */
export function openExtractionCode(secret: Buffer, sealed: string): string | null {
  return unseal(secret, EXTRACTION_CODE_PURPOSE, sealed)?.toString('utf8') ?? null;
}

/** The share's extraction code for its owner ("" when open); a value that cannot be opened (another secret) throws. */
export function downpwdOf(secret: Buffer, share: Pick<ShareRecord, 'id' | 'downpwdSealed'>): string {
  if (share.downpwdSealed === null) return '';
  const code = openExtractionCode(secret, share.downpwdSealed);
  if (code === null) throw new Error(`share ${share.id}: its extraction code cannot be opened with this server secret`);
  return code;
}

/**
 * What a share's download URL carries of its extraction code: a digest of the sealed value, which changes
 * with the code (an unchanged code keeps its seal) and reveals nothing of it (the seal is random).
 */
export function extractionCodeStamp(downpwdSealed: string | null): string {
  return createHash('sha256')
    .update(`${EXTRACTION_CODE_PURPOSE}\n${downpwdSealed ?? ''}`)
    .digest()
    .subarray(0, 12)
    .toString('base64url');
}

/** An extraction code as given, in NFC, so the same characters typed on any system compare equal. */
export function normalizedExtractionCode(text: string | null): string {
  return (text ?? '').normalize('NFC');
}

function validDownpwd(raw: string | null): string {
  const code = normalizedExtractionCode(raw);
  if (code === '') return '';
  const length = [...code].length;
  if (length < DOWNPWD_MIN_LENGTH || length > DOWNPWD_MAX_LENGTH) {
    throw invalidArgument('downpwd-invalid', `downpwd must be empty (an open share) or ${DOWNPWD_MIN_LENGTH}-${DOWNPWD_MAX_LENGTH} characters`);
  }
  if (/[\p{Cc}]/u.test(code)) throw invalidArgument('downpwd-invalid', 'downpwd may not contain control characters');
  return code;
}

/** What a cover's URL is made from: the share, its image and its extraction code (a new one of either, a new URL). */
type CoveredShare = Pick<ShareRecord, 'id' | 'imageKey' | 'downpwdSealed'>;

/**
 * A cover's public URL, `{base}/s/image/{share id}/{HMAC tag}`: no share code, since a token alone may
 * upload one, yet unforgeable, so a protected share's cover shows only to those who gave its code; a
 * new image or code gives a new URL.
 */
export function shareImageUrl(baseUrl: string, secret: Buffer, share: CoveredShare): string {
  if (share.imageKey === null) return '';
  return `${baseUrl}/s/image/${share.id}/${shareImageTag(secret, share)}`;
}

export function shareImageTag(secret: Buffer, share: CoveredShare): string {
  return createHmac('sha256', Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), IMAGE_URL_PURPOSE, 32)))
    .update(`${share.id}\n${share.imageKey ?? ''}\n${share.downpwdSealed ?? ''}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

// ---- What the owner sees -----------------------------------------------------------------------

/** The attributes of a shared item for its owner (FileShare, FolderShare, GetShareFiles); visitors never see the extraction code. */
export function shareAttributes(secret: Buffer, baseUrl: string, share: ShareRecord, seenBy: 'owner' | 'visitor' = 'owner'): ShareAttributes {
  return {
    code: share.code,
    url: shareUrl(baseUrl, share.code),
    downpwd: seenBy === 'owner' ? downpwdOf(secret, share) : '',
    downValue: share.downloadLimit,
    downloads: share.downloads,
    description: share.description,
    image: shareImageUrl(baseUrl, secret, share),
  };
}

/** What GetShareFiles (listings-repository shareAttributes) needs from this layer: the code unsealed, the cover's URL. */
export function shareRendering(ctx: CallContext): Pick<PublicUrls, 'shareDownpwd' | 'shareImage'> {
  const { secret } = ctx.services;
  return {
    shareDownpwd: (share) => downpwdOf(secret, share),
    shareImage: (share) => shareImageUrl(ctx.baseUrl, secret, share),
  };
}

function toShare(secret: Buffer, share: ShareRecord): Share {
  return {
    id: share.id,
    itemType: share.itemType,
    itemId: share.itemId,
    code: share.code,
    downpwd: downpwdOf(secret, share),
    downValue: share.downloadLimit,
    downloads: share.downloads,
    description: share.description,
    hasImage: share.imageKey !== null,
  };
}

/** 423 when any of the items is encrypted or lies beneath an encrypted folder; one query for all. */
export async function refuseLockedItems(
  db: Kysely<Database>,
  accountId: number,
  items: { readonly folderIds: readonly number[]; readonly fileIds: readonly number[] },
): Promise<void> {
  const lock = await findLockAmong(db, accountId, items.folderIds, items.fileIds);
  if (lock) throw lockedRefusal(lock, `${lock.type} ${lock.id} is encrypted, or lies in an encrypted folder: decrypt it to share it`, 'owner');
}

interface ShareInput {
  readonly downpwd: string | null;
  readonly downValue: number;
  readonly description: string | null;
}

interface ValidSettings {
  readonly downpwd: string;
  readonly downValue: number;
  readonly description: string;
}

function validSettings(services: Services, input: ShareInput): ValidSettings {
  const downpwd = validDownpwd(input.downpwd);
  if (!Number.isSafeInteger(input.downValue) || input.downValue < 0) throw invalidArgument('parameter-invalid', 'downValue must be 0 (no limit) or more');
  const description = input.description ?? '';
  const max = services.config.limits.maxDescriptionLength;
  if ([...description].length > max) throw invalidArgument('description-too-long', `description is longer than ${max} characters`);
  return { downpwd, downValue: input.downValue, description };
}

/** The sealed form of `downpwd` for a share: the one it has when the code is unchanged, else a new seal. */
function sealFor(secret: Buffer, existing: ShareRecord | undefined, downpwd: string): string | null {
  if (downpwd === '') return null;
  const sealed = existing?.downpwdSealed ?? null;
  const current = sealed === null ? null : openExtractionCode(secret, sealed);
  if (current !== null && sameSecret(downpwd, current)) return sealed;
  return sealExtractionCode(secret, downpwd);
}

/**
 * Creates or updates the shares of these items of one type, all or nothing, in time slices (1,000 folders
 * 256 deep took some 50 ms in one turn); answers them with their share attributes.
 */
async function shareItems(ctx: AuthenticatedContext, type: ShareItemType, ids: readonly number[], input: ShareInput): Promise<Listing> {
  const accountId = ctx.caller.uid;
  const { services } = ctx;
  const settings = validSettings(services, input);
  const slices = new TimeSlices();
  return inTreeTransaction(services.db, async (tx) => {
    // The account's row lock: a concurrent move to the bin cannot slip between the checks and the writes.
    await lockAccountTree(tx, accountId);
    const folders = type === 'folder' ? await requireFolders(tx, accountId, ids) : new Map();
    const files = type === 'file' ? await requireFiles(tx, accountId, ids) : new Map();
    await slices.pauseIfDue();
    await refuseLockedItems(tx, accountId, type === 'folder' ? { folderIds: ids, fileIds: [] } : { folderIds: [], fileIds: ids });
    await slices.pauseIfDue();

    const existing = new Map((await findSharesOf(tx, accountId, type, ids)).map((share) => [share.itemId, share]));
    const rows = ids.map((itemId) => ({
      itemId,
      code: newShareCode(),
      downpwdSealed: sealFor(services.secret, existing.get(itemId), settings.downpwd),
      downloadLimit: settings.downValue,
      description: settings.description,
    }));
    await slices.pauseIfDue();
    const at = services.now();
    const written: ShareRecord[] = [];
    await inBatches(rows, slices, async (batch) => written.push(...(await upsertShares(tx, accountId, type, batch, at))));
    await setSharedFlags(tx, accountId, type === 'folder' ? 'folders' : 'files', ids, true);

    const shareOf = new Map(written.map((share) => [share.itemId, share]));
    const share = (id: number) => shareAttributes(services.secret, ctx.baseUrl, shareOf.get(id)!);
    const sharedFolders: FolderItem[] = type === 'folder' ? ids.map((id) => ({ ...folders.get(id), shared: true, share: share(id) })) : [];
    const sharedFiles: FileItem[] = type === 'file' ? ids.map((id) => ({ ...files.get(id), shared: true, share: share(id) })) : [];
    return { kind: 'listing', count: ids.length, folders: sharedFolders, files: sharedFiles };
  });
}

export async function fileShare(ctx: AuthenticatedContext, params: ParamsOf<'FileShare'>): Promise<Listing> {
  return shareItems(ctx, 'file', parseNonEmptyIdList(params.fids, 'fids', ctx.services.config.limits.maxIdsPerList), params);
}

export async function folderShare(ctx: AuthenticatedContext, params: ParamsOf<'FolderShare'>): Promise<Listing> {
  return shareItems(ctx, 'folder', parseNonEmptyIdList(params.dirids, 'dirids', ctx.services.config.limits.maxIdsPerList), params);
}

export async function unshare(ctx: AuthenticatedContext, params: ParamsOf<'Unshare'>): Promise<Empty> {
  const accountId = ctx.caller.uid;
  const { db, config, now } = ctx.services;
  const { folderIds, fileIds } = parseIdLists(params.dirids, params.fids, config.limits.maxIdsPerList);
  await inTreeTransaction(db, async (tx) => {
    await lockAccountTree(tx, accountId);
    await requireFolders(tx, accountId, folderIds);
    await requireFiles(tx, accountId, fileIds);
    const covers = await deleteSharesOf(tx, accountId, folderIds, fileIds);
    await setSharedFlags(tx, accountId, 'folders', folderIds, false);
    await setSharedFlags(tx, accountId, 'files', fileIds, false);
    // The covers leave storage after this commit (content removal), and the quota now.
    const at = now();
    for (const key of covers.keys) await queueRemoval(tx, key, at, at);
    await releaseUsedBytes(tx, accountId, covers.bytes);
  });
  return { kind: 'empty' };
}

/** The item's share (a new open one when it has none), in the caller's transaction; 404 not live, 423 locked. */
export async function ensureShare(
  tx: Kysely<Database>,
  services: Services,
  accountId: number,
  item: { readonly type: ShareItemType; readonly id: number },
): Promise<Share> {
  await lockAccountTree(tx, accountId);
  if (item.type === 'folder') await requireFolder(tx, accountId, item.id);
  else await requireFile(tx, accountId, item.id);
  await refuseLockedItems(tx, accountId, item.type === 'folder' ? { folderIds: [item.id], fileIds: [] } : { folderIds: [], fileIds: [item.id] });
  const share = await insertShareIfMissing(tx, { accountId, itemType: item.type, itemId: item.id, code: newShareCode(), at: services.now() });
  await setSharedFlags(tx, accountId, item.type === 'folder' ? 'folders' : 'files', [item.id], true);
  return toShare(services.secret, share);
}

// ---- Download URLs issued by a share -----------------------------------------------------------

/** What a download URL issued by a share (ShareDownload) names: the share and its extraction code's stamp. */
export interface ShareGrant {
  readonly id: number;
  readonly stamp: string;
}

export type ShareGrantState = 'granted' | 'gone' | 'locked';

/** Whether a share's download URL still gives the file: same share and code, item live, file in it, nothing encrypted. */
export async function shareGrantState(services: Services, grant: ShareGrant, accountId: number, fileId: number): Promise<ShareGrantState> {
  return shareGrantStateFor(services, grant, accountId, { type: 'file', id: fileId });
}

/** shareGrantState for any item: the shared item itself or a live item beneath it. */
export async function shareGrantStateFor(services: Services, grant: ShareGrant, accountId: number, item: { type: ShareItemType; id: number }): Promise<ShareGrantState> {
  const { db } = services;
  const share = await findShareById(db, grant.id);
  if (!share || share.accountId !== accountId || extractionCodeStamp(share.downpwdSealed) !== grant.stamp) return 'gone';
  const shared = await findSharedTarget(db, accountId, { type: share.itemType, id: share.itemId });
  if (!shared) return 'gone';
  if (shared.lock) return 'locked';
  if (share.itemType === item.type && share.itemId === item.id) return 'granted';
  if (share.itemType === 'file') return 'gone';
  const found = await findSharedTarget(db, accountId, item, share.itemId);
  if (!found || !found.inside) return 'gone';
  return found.lock ? 'locked' : 'granted';
}
