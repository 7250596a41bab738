/**
 * Sharing (DECISIONS.md §9): FileShare, FolderShare, Unshare (ext), ensureShare for e-mail sharing,
 * and the rules every share follows wherever it is read (the owner's listings, the anonymous
 * ShareService in share-service.ts, cover images in share-images.ts, download URLs in downloads.ts).
 *
 * - One share per item. FileShare/FolderShare create it, or update the settings of the one the
 *   item has: its code (the public URL), its download count and its cover image stay, so a link
 *   already handed out keeps working. Unshare and sharing again gives a new code: the way to
 *   revoke a leaked link.
 * - The code is 128 random bits, base64url (22 characters). The share page is `{base}/s/{code}`.
 * - Settings: `downpwd` "" = open, else 4–32 characters (NFC, no control characters), compared
 *   exactly; `downValue` ≥ 0, 0 = no limit; `description` at most maxDescriptionLength characters.
 *   Lowering the limit below the downloads already made closes the share to further downloads;
 *   the count is never reset.
 * - The extraction code is sealed (AES-256-GCM under HKDF-SHA256(server secret)), not hashed,
 *   because GetShareFiles shows it to the owner. Sharing again with the same code keeps the sealed
 *   value, so download URLs issued under it stay valid; a new code ends them (downloads.ts).
 * - Batches are all-or-nothing: any id that is not a live item of the caller is 404, an encrypted
 *   item (or one beneath an encrypted folder) is 423 with the id and tip of what locks it, and
 *   then nothing has changed. A folder may be shared while something beneath it is encrypted:
 *   that part answers 423 on the share page.
 * - Unshare on a live item of the caller that has no share is a success: "not shared" is the
 *   state asked for. Its cover image is removed from storage by housekeeping, and its bytes leave
 *   the owner's used bytes at once.
 * - An item in the bin keeps its share row: the share stops answering at once (every reader
 *   checks that the item is live) and answers again after a restore. A permanent deletion removes
 *   the row (recycle-bin-repository).
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
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
import type { Database, ShareItemType } from '../../storage/db/schema';
import type { AuthenticatedContext, CallContext, Empty, FileItem, FolderItem, Listing, ParamsOf, ShareAttributes, Services } from '../context';
import { sameSecret } from '../crypto/constant-time';
import { invalidArgument, lockedRefusal } from '../errors';
import { inTreeTransaction } from '../tree/file-records';
import { parseIdList, parseIdLists, requireFile, requireFiles, requireFolder, requireFolders } from '../tree/id-lists';

/** 128 random bits. */
const CODE_BYTES = 16;
/** What a share code looks like: base64url of CODE_BYTES bytes, unpadded. */
export const SHARE_CODE_FORMAT = /^[A-Za-z0-9_-]{22}$/;

export const DOWNPWD_MIN_LENGTH = 4;
export const DOWNPWD_MAX_LENGTH = 32;

const EXTRACTION_CODE_PURPOSE = 'fss/share-extraction-code/v1';
const IMAGE_URL_PURPOSE = 'fss/share-image-url/v1';
const SEAL_VERSION = 'v1';

/** A share as other features see it (e-mail sharing): the extraction code unsealed. */
export interface Share {
  readonly id: number;
  readonly itemType: ShareItemType;
  readonly itemId: number;
  /** The public code: the share page is shareUrl(baseUrl, code). */
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

// ---- The extraction code, sealed under the server secret ----------------------------------------

function secretKey(secret: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), purpose, 32));
}

/** Seals an extraction code: `v1.nonce.ciphertext.tag` (base64url parts), AES-256-GCM under HKDF-SHA256(secret). */
export function sealExtractionCode(secret: Buffer, code: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secretKey(secret, EXTRACTION_CODE_PURPOSE), nonce);
  const ciphertext = Buffer.concat([cipher.update(code, 'utf8'), cipher.final()]);
  return [SEAL_VERSION, ...[nonce, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url'))].join('.');
}

/** The extraction code sealed by sealExtractionCode; null when the secret or the data is wrong. */
export function openExtractionCode(secret: Buffer, sealed: string): string | null {
  const [version, nonce, ciphertext, tag, ...rest] = sealed.split('.');
  if (version !== SEAL_VERSION || rest.length > 0 || tag === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', secretKey(secret, EXTRACTION_CODE_PURPOSE), Buffer.from(nonce, 'base64url'), {
      authTagLength: 16,
    });
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** The share's extraction code for its owner ("" when open); a value that cannot be opened (another secret) throws. */
function downpwdOf(secret: Buffer, share: { readonly id: number; readonly downpwdSealed: string | null }): string {
  if (share.downpwdSealed === null) return '';
  const code = openExtractionCode(secret, share.downpwdSealed);
  if (code === null) throw new Error(`share ${share.id}: its extraction code cannot be opened with this server secret`);
  return code;
}

/**
 * What a download URL issued by a share carries of the extraction code it was issued under: a
 * digest of the sealed value, which changes when the owner sets another code (the sealed value is
 * kept while the code stays the same). Reveals nothing of the code: the sealed value is random.
 */
export function extractionCodeStamp(downpwdSealed: string | null): string {
  return createHash('sha256')
    .update(`${EXTRACTION_CODE_PURPOSE}\n${downpwdSealed ?? ''}`)
    .digest()
    .subarray(0, 12)
    .toString('base64url');
}

/** An extraction code as given: NFC, so that the same characters typed on any system compare equal. */
export function normalizedExtractionCode(text: string | null): string {
  return (text ?? '').normalize('NFC');
}

function validDownpwd(raw: string | null): string {
  const code = normalizedExtractionCode(raw);
  if (code === '') return '';
  const length = [...code].length;
  if (length < DOWNPWD_MIN_LENGTH || length > DOWNPWD_MAX_LENGTH) {
    throw invalidArgument(`downpwd must be empty (an open share) or ${DOWNPWD_MIN_LENGTH}-${DOWNPWD_MAX_LENGTH} characters`);
  }
  if (/[\p{Cc}]/u.test(code)) throw invalidArgument('downpwd may not contain control characters');
  return code;
}

// ---- Cover images ------------------------------------------------------------------------------

/**
 * The public URL of a share's cover image: `{base}/s/image/{share id}/{tag}`, where the tag is an
 * HMAC (server secret) over the share, its image and its extraction code. It carries no share code:
 * ShareImageUpload, which a token alone may call, answers it (docs/protocol.md §5.6), and the URL
 * of an image must not open the share. It cannot be made without the server secret, so a share with
 * an extraction code shows its cover only to those who gave it (ShareOpen) and to its owner; a new
 * image or a new code gives a new URL (nothing stale in a cache).
 */
export function shareImageUrl(
  baseUrl: string,
  secret: Buffer,
  share: { readonly id: number; readonly imageKey: string | null; readonly downpwdSealed: string | null },
): string {
  if (share.imageKey === null) return '';
  return `${baseUrl}/s/image/${share.id}/${shareImageTag(secret, share)}`;
}

export function shareImageTag(
  secret: Buffer,
  share: { readonly id: number; readonly imageKey: string | null; readonly downpwdSealed: string | null },
): string {
  return createHmac('sha256', secretKey(secret, IMAGE_URL_PURPOSE))
    .update(`${share.id}\n${share.imageKey ?? ''}\n${share.downpwdSealed ?? ''}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

// ---- What the owner sees -----------------------------------------------------------------------

/** The attributes of a shared item for its owner (FileShare, FolderShare, GetShareFiles). */
export function ownerShareAttributes(services: Services, baseUrl: string, share: ShareRecord): ShareAttributes {
  return {
    code: share.code,
    url: shareUrl(baseUrl, share.code),
    downpwd: downpwdOf(services.secret, share),
    downValue: share.downloadLimit,
    downloads: share.downloads,
    description: share.description,
    image: shareImageUrl(baseUrl, services.secret, share),
  };
}

/**
 * What GetShareFiles (listings-repository shareAttributes) needs from the operations layer: the
 * extraction code unsealed for the owner and the cover image's URL.
 */
export function shareRendering(ctx: CallContext): {
  shareDownpwd(share: { readonly id: number; readonly downpwdSealed: string | null }): string;
  shareImage(share: { readonly id: number; readonly imageKey: string | null; readonly downpwdSealed: string | null }): string;
} {
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

// ---- Locks -------------------------------------------------------------------------------------

/**
 * The one check that items may be shared: none of them is encrypted, and none lies beneath an
 * encrypted folder (423 with the id and tip of the encrypted item). One query for all of them.
 * Encryption extends what "locked" means in shares-repository findLockAmong.
 */
export async function refuseLockedItems(
  db: Kysely<Database>,
  accountId: number,
  items: { readonly folderIds: readonly number[]; readonly fileIds: readonly number[] },
): Promise<void> {
  const lock = await findLockAmong(db, accountId, items.folderIds, items.fileIds);
  if (lock) throw lockedRefusal(lock, `${lock.type} ${lock.id} is encrypted, or lies in an encrypted folder: decrypt it to share it`, 'owner');
}

// ---- FileShare, FolderShare --------------------------------------------------------------------

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
  if (!Number.isSafeInteger(input.downValue) || input.downValue < 0) throw invalidArgument('downValue must be 0 (no limit) or more');
  const description = input.description ?? '';
  const max = services.config.limits.maxDescriptionLength;
  if ([...description].length > max) throw invalidArgument(`description is longer than ${max} characters`);
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
 * Creates or updates the shares of the given items of one type, all or nothing; answers them with
 * their share attributes. In slices (time-slices.ts): 1,000 folders 256 deep took some 50 ms of
 * checks and writes in one step of the event loop; the transaction keeps it all or nothing.
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
    const share = (id: number) => ownerShareAttributes(services, ctx.baseUrl, shareOf.get(id)!);
    const sharedFolders: FolderItem[] = type === 'folder' ? ids.map((id) => ({ ...folders.get(id), shared: true, share: share(id) })) : [];
    const sharedFiles: FileItem[] = type === 'file' ? ids.map((id) => ({ ...files.get(id), shared: true, share: share(id) })) : [];
    return { kind: 'listing', count: ids.length, folders: sharedFolders, files: sharedFiles };
  });
}

function nonEmptyIds(text: string | null, what: 'dirids' | 'fids', services: Services): number[] {
  const ids = parseIdList(text, what, services.config.limits.maxIdsPerList);
  if (ids.length === 0) throw invalidArgument(`${what} is empty: name at least one ${what === 'dirids' ? 'folder' : 'file'}`);
  return ids;
}

export async function fileShare(ctx: AuthenticatedContext, params: ParamsOf<'FileShare'>): Promise<Listing> {
  return shareItems(ctx, 'file', nonEmptyIds(params.fids, 'fids', ctx.services), params);
}

export async function folderShare(ctx: AuthenticatedContext, params: ParamsOf<'FolderShare'>): Promise<Listing> {
  return shareItems(ctx, 'folder', nonEmptyIds(params.dirids, 'dirids', ctx.services), params);
}

// ---- Unshare -----------------------------------------------------------------------------------

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
    // The cover images go from storage after this commit (housekeeping's content removal), and
    // their bytes leave the quota now.
    const at = now();
    for (const key of covers.keys) await queueRemoval(tx, key, at, at);
    await releaseUsedBytes(tx, accountId, covers.bytes);
  });
  return { kind: 'empty' };
}

// ---- ensureShare (e-mail sharing) --------------------------------------------------------------

/**
 * Makes sure the caller's item has a share, inside the caller's transaction `tx`, and returns it:
 * the share it has, or a new open one (no extraction code, no limit, no description). 404 when the
 * id is not a live item of the account, 423 when it is locked. Sets the item's `shared` flag.
 */
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

/**
 * Whether the share `grant` names still gives the file `fileId` of `accountId`, as a download URL
 * is opened: the share exists with the same extraction code, its item is live, the file is that
 * item or a live file beneath it, and nothing on the way is encrypted.
 */
export async function shareGrantState(services: Services, grant: ShareGrant, accountId: number, fileId: number): Promise<ShareGrantState> {
  const { db } = services;
  const share = await findShareById(db, grant.id);
  if (!share || share.accountId !== accountId || extractionCodeStamp(share.downpwdSealed) !== grant.stamp) return 'gone';
  const item = await findSharedTarget(db, accountId, { type: share.itemType, id: share.itemId });
  if (!item) return 'gone';
  if (item.lock) return 'locked';
  if (share.itemType === 'file') return share.itemId === fileId ? 'granted' : 'gone';
  const file = await findSharedTarget(db, accountId, { type: 'file', id: fileId }, share.itemId);
  if (!file || !file.inside) return 'gone';
  return file.lock ? 'locked' : 'granted';
}
