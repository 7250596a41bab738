/**
 * Cover images of shares (docs/sharing.md §4). The call takes a token alone (no sign), so it may only change the cover
 * of a share made by a signed call, and its answer names the share by id, never by code.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { contentStoreFor } from '../../storage/content/stores';
import { expediteRemoval, queueRemoval, withdrawWriteIntent } from '../../storage/db/repositories/content-repository';
import { lockAccountTree, reserveQuota } from '../../storage/db/repositories/items-repository';
import { releaseUsedBytes } from '../../storage/db/repositories/recycle-bin-repository';
import type { Database } from '../../storage/db/schema';
import { countCoverImages, findShareById, findSharedTarget, findSharesOf, replaceShareImage, type ShareRecord, type StoredCover } from '../../storage/db/repositories/shares-repository';
import type { AuthenticatedContext, ParamsOf, PlainString, Services } from '../context';
import { WRITE_INTENT_GRACE_MS } from '../content/content-removal';
import { sameSecret } from '../crypto/constant-time';
import { reencodeCover } from './cover-images';
import { conflict, invalidArgument, tooLarge } from '../errors';
import { inTreeTransaction } from '../tree/file-records';
import { requireFile } from '../tree/id-lists';
import { refuseLockedItems, shareImageTag, shareImageUrl } from './shares';

export const MAX_SHARE_IMAGE_BYTES = 5 * 1024 * 1024;

export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** An image's type by its first bytes, as its format defines them. */
export function imageTypeOf(bytes: Uint8Array): ImageType | null {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 12));
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 6 && (head.subarray(0, 6).toString('latin1') === 'GIF87a' || head.subarray(0, 6).toString('latin1') === 'GIF89a')) return 'image/gif';
  if (head.length >= 12 && head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return null;
}

function checkedImage(bytes: Buffer | null): Buffer {
  if (bytes === null || bytes.length === 0) throw invalidArgument('image-empty', 'byteFileStream is empty: send the image bytes');
  if (bytes.length > MAX_SHARE_IMAGE_BYTES) throw tooLarge('image-too-large', `the image is larger than ${MAX_SHARE_IMAGE_BYTES / (1024 * 1024)} MiB`);
  if (!imageTypeOf(bytes)) throw invalidArgument('image-unreadable', 'the image must be a PNG, JPEG, GIF or WebP image (recognized by its content)');
  return bytes;
}

/** Puts the bytes into the content store under a new key, its write intent queued first. */
async function storeImage(services: Services, bytes: Buffer): Promise<string> {
  const store = contentStoreFor(services.config);
  const key = store.newKey(createHash('sha256').update(bytes).digest('hex'));
  const now = services.now();
  await queueRemoval(services.db, key, now, new Date(now.getTime() + WRITE_INTENT_GRACE_MS));
  // Beside the data, so the store can move it rather than copy it.
  const staging = path.join(services.config.dataDir, 'tmp');
  await mkdir(staging, { recursive: true, mode: 0o700 });
  const file = path.join(staging, `share-image-${randomBytes(8).toString('hex')}`);
  try {
    await writeFile(file, bytes, { mode: 0o600 });
    await store.putFile(key, file);
  } finally {
    await rm(file, { force: true });
  }
  return key;
}

/** The share of the caller's live, unlocked file; 409 when it has none: sharing takes a signed call. */
async function existingShareOf(db: Kysely<Database>, accountId: number, fileId: bigint | number): Promise<ShareRecord> {
  const file = await requireFile(db, accountId, fileId);
  await refuseLockedItems(db, accountId, { folderIds: [], fileIds: [file.id] });
  const [share] = await findSharesOf(db, accountId, 'file', [file.id]);
  if (!share) throw conflict('not-shared', 'the file is not shared: share it first (FileShare), then give its share a cover image');
  return share;
}

/**
 * Makes `cover` the share's cover in the caller's transaction (holding the account's row lock): 413 past
 * the account's cover count or its quota (less the replaced cover, which is queued for removal).
 */
async function giveShareCover(tx: Kysely<Database>, services: Services, accountId: number, shareId: number, cover: StoredCover): Promise<void> {
  const at = services.now();
  const replaced = await replaceShareImage(tx, shareId, cover, at);
  const cap = services.config.limits.maxCoverImagesPerAccount;
  if (replaced === null && (await countCoverImages(tx, accountId)) > cap) {
    throw tooLarge('too-many-covers', `this account already has ${cap} cover images, the most it may have: unshare a file that has one first`);
  }
  const added = cover.bytes - (replaced?.bytes ?? 0);
  if (added > 0 && !(await reserveQuota(tx, accountId, added))) {
    throw tooLarge('quota-exceeded', 'storage quota exceeded: the cover image does not fit in the space left');
  }
  if (added < 0) await releaseUsedBytes(tx, accountId, -added);
  if (replaced !== null) await queueRemoval(tx, replaced.key, at, at);
}

export async function shareImageUpload(ctx: AuthenticatedContext, params: ParamsOf<'ShareImageUpload'>): Promise<PlainString> {
  const accountId = ctx.caller.uid;
  const { services } = ctx;
  const { db } = services;
  const bytes = checkedImage(params.byteFileStream);
  // Checked before anything is stored; checked again below, where it counts.
  const { itemId: fileId } = await existingShareOf(db, accountId, params.fid);

  const cover = await reencodeCover(bytes);
  const key = await storeImage(services, cover.bytes);
  try {
    const share = await inTreeTransaction(db, async (tx) => {
      await lockAccountTree(tx, accountId);
      const share = await existingShareOf(tx, accountId, fileId);
      if (!(await withdrawWriteIntent(tx, key))) throw new Error(`the write intent of ${key} was taken for removal`);
      await giveShareCover(tx, services, accountId, share.id, { key, bytes: cover.bytes.length });
      return { ...share, imageKey: key };
    });
    return { kind: 'string', value: shareImageUrl(ctx.baseUrl, services.secret, share) };
  } catch (error) {
    // The image will not be used: its bytes go at the next content removal rather than in a day.
    await expediteRemoval(db, key, services.now()).catch(() => {});
    throw error;
  }
}

// ---- Serving ----------------------------------------------------------------------------------

export interface ShareImage {
  readonly contentType: ImageType;
  readonly size: number;
  /** Strong: the URL's tag, which changes with the image. */
  readonly etag: string;
  open(): Promise<Readable>;
}

async function headOf(stream: Readable, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= bytes) break;
  }
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, bytes);
}

/** A share id as the image URL carries it: decimal, no leading zero, exact as a number. */
const SHARE_ID_FORMAT = /^[1-9][0-9]{0,14}$/;

/** The cover `{base}/s/image/{share id}/{tag}` names, while its share answers; null for every refusal alike. */
export async function openShareImage(services: Services, shareId: string, tag: string): Promise<ShareImage | null> {
  if (!SHARE_ID_FORMAT.test(shareId)) return null;
  const { db } = services;
  const share = await findShareById(db, Number(shareId));
  if (!share || share.imageKey === null || !sameSecret(tag, shareImageTag(services.secret, share))) return null;
  const item = await findSharedTarget(db, share.accountId, { type: share.itemType, id: share.itemId });
  if (!item || item.lock) return null;
  const key = share.imageKey;
  const store = contentStoreFor(services.config);
  const stat = await store.stat(key);
  if (!stat || stat.size === 0) return null;
  const contentType = imageTypeOf(await headOf(await store.read(key, { start: 0, end: Math.min(stat.size, 12) - 1 }), 12));
  if (!contentType) return null;
  return { contentType, size: stat.size, etag: `"${tag}"`, open: () => store.read(key) };
}
