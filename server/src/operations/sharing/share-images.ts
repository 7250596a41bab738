/**
 * Cover images of shares (DECISIONS.md §9): ShareImageUpload, and what the image URL serves
 * (protocol/files/share-images.ts).
 *
 * ShareImageUpload(uid, token, fid, ImagefileName, byteFileStream), token only (no sign):
 * - `fid` must be a live file of the caller (404), not locked (423), and shared already (409).
 *   The call carries no sign, so a token alone can make it: it may only change the cover of a
 *   share the owner made with a signed call, never create one (docs/protocol.md §5.6).
 * - The bytes must be a PNG, JPEG, GIF or WebP image, recognized by their first bytes (never by
 *   ImagefileName, which is not used), else 400; empty → 400; over 5 MiB → 413. After the file's
 *   checks they are decoded (cover-images.ts): what is stored is the image encoded anew, at most
 *   1600 px a side, without metadata; an image that does not decode is 400, one of more than 50
 *   million pixels 413.
 * - The stored cover's bytes count against the owner's quota (less the cover it replaces), and an
 *   account has at most maxCoverImagesPerAccount shares with a cover: 413 beyond either.
 * - The answer is the image's URL (shares.ts shareImageUrl), which names the share by its id, not
 *   its code: the answer of a call a token alone can make must not open the share. A refusal is
 *   the string `ERROR <code> <message>` (written by the protocol layer).
 * - Storage: the bytes go into the content store under a new key, with a write intent queued first
 *   (as uploads do), and the transaction that gives the share the key withdraws the intent; a crash
 *   in between leaves a queued key that content removal deletes. The image it replaces is queued
 *   for removal in that same transaction, so nothing is left behind.
 *
 * The image URL answers while the share answers: its item live, nothing encrypted. It serves the
 * bytes with the type read from them again (never from a name), `nosniff` and a CSP that allows
 * nothing, cacheable by the browser (private) for an hour: a new image has a new URL. Covers
 * stored before they were decoded (older installations) are served as they are.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
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
import { reencodeCover } from './cover-images';
import { conflict, invalidArgument, tooLarge } from '../errors';
import { inTreeTransaction } from '../tree/file-records';
import { requireFile } from '../tree/id-lists';
import { refuseLockedItems, shareImageTag, shareImageUrl } from './shares';

export const MAX_SHARE_IMAGE_BYTES = 5 * 1024 * 1024;

/** A write intent falls due this long after it was made: far beyond any write into the store. */
const WRITE_INTENT_GRACE_MS = 24 * 3600_000;

export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** The bytes an image of each type starts with, as its format defines them. */
export function imageTypeOf(bytes: Uint8Array): ImageType | null {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 12));
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 6 && (head.subarray(0, 6).toString('latin1') === 'GIF87a' || head.subarray(0, 6).toString('latin1') === 'GIF89a')) return 'image/gif';
  if (head.length >= 12 && head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return null;
}

function checkedImage(bytes: Buffer | null): Buffer {
  if (bytes === null || bytes.length === 0) throw invalidArgument('byteFileStream is empty: send the image bytes');
  if (bytes.length > MAX_SHARE_IMAGE_BYTES) throw tooLarge(`the image is larger than ${MAX_SHARE_IMAGE_BYTES / (1024 * 1024)} MiB`);
  if (!imageTypeOf(bytes)) throw invalidArgument('the image must be a PNG, JPEG, GIF or WebP image (recognized by its content)');
  return bytes;
}

/** Puts the bytes into the content store under a new key whose write intent is queued first; returns the key. */
async function storeImage(services: Services, bytes: Buffer): Promise<string> {
  const store = contentStoreFor(services.config);
  const key = store.newKey(createHash('sha256').update(bytes).digest('hex'));
  const now = services.now();
  await queueRemoval(services.db, key, now, new Date(now.getTime() + WRITE_INTENT_GRACE_MS));
  // A file beside the data (so that the store can move it rather than copy it); gone either way.
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

/**
 * The share of the caller's live, unlocked file `fileId`: 404, 423 as everywhere, and 409 when the
 * file has no share. Never makes one: sharing takes a signed call (FileShare).
 */
async function existingShareOf(db: Kysely<Database>, accountId: number, fileId: bigint | number): Promise<ShareRecord> {
  const file = await requireFile(db, accountId, fileId);
  await refuseLockedItems(db, accountId, { folderIds: [], fileIds: [file.id] });
  const [share] = await findSharesOf(db, accountId, 'file', [file.id]);
  if (!share) throw conflict('the file is not shared: share it first (FileShare), then give its share a cover image');
  return share;
}

/**
 * Makes `cover` the cover image of the share `shareId`, in the caller's transaction (which holds
 * the account's row lock): 413 when it would be one cover more than the account may have, or when
 * its bytes, less those of the cover it replaces, do not fit in the quota. The cover it replaces
 * is queued for removal and its bytes leave the used bytes.
 */
async function giveShareCover(tx: Kysely<Database>, services: Services, accountId: number, shareId: number, cover: StoredCover): Promise<void> {
  const at = services.now();
  const replaced = await replaceShareImage(tx, shareId, cover, at);
  const cap = services.config.limits.maxCoverImagesPerAccount;
  if (replaced === null && (await countCoverImages(tx, accountId)) > cap) {
    throw tooLarge(`this account already has ${cap} cover images, the most it may have: unshare a file that has one first`);
  }
  const added = cover.bytes - (replaced?.bytes ?? 0);
  if (added > 0 && !(await reserveQuota(tx, accountId, added))) {
    throw tooLarge('storage quota exceeded: the cover image does not fit in the space left');
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

/** A cover image as its URL serves it. */
export interface ShareImage {
  readonly contentType: ImageType;
  readonly size: number;
  /** A strong validator: the URL's tag, which changes with the image. */
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

function sameTag(expected: string, given: string): boolean {
  const [a, b] = [Buffer.from(expected), Buffer.from(given)];
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A share id as the image URL carries it: decimal, no leading zero, small enough to be exact. */
const SHARE_ID_FORMAT = /^[1-9][0-9]{0,14}$/;

/**
 * The cover image `{base}/s/image/{share id}/{tag}` names, if the share still answers: the share
 * exists, the tag is right (so the share has that image and that extraction code), its item is live
 * and nothing is encrypted. Null otherwise (one answer for every reason).
 */
export async function openShareImage(services: Services, shareId: string, tag: string): Promise<ShareImage | null> {
  if (!SHARE_ID_FORMAT.test(shareId)) return null;
  const { db } = services;
  const share = await findShareById(db, Number(shareId));
  if (!share || share.imageKey === null || !sameTag(shareImageTag(services.secret, share), tag)) return null;
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
