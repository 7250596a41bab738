/**
 * ThumbnailBase and ShareThumbnailBase (ext, docs/protocol.md) and the keys of the thumbnail URLs
 * `{base}/t/{key}/{fid}/{small|large}` they hand out (protocol/files/thumbnails.ts serves them).
 *
 * The key is `{payload}.{mac}`: the payload names the account (`u{uid}`) or the share and a stamp of
 * its extraction code (`s{share id}~{stamp}`), then the expiry (`~{ms}`, the end of the next UTC day,
 * so that one prefix holds for a day and browsers keep what they fetched); the mac is base64url
 * HMAC-SHA256 with a key derived from the server secret for this purpose alone. Every request checks
 * the file again: a live, unlocked file of that account, or one the share still gives.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { findLiveFileContent } from '../../storage/db/repositories/content-repository';
import { findShareById, findSharedTarget } from '../../storage/db/repositories/shares-repository';
import type { AuthenticatedContext, CallContext, ParamsOf, Services, UrlResult } from '../context';
import { extractionCodeStamp, shareGrantState } from '../sharing/shares';
import { openShare } from '../sharing/share-service';
import { openDerivedImage, type DerivedImage } from './derived-images';

const KEY_PURPOSE = 'fss/thumbnail-url/v1';
const DAY_MS = 24 * 3600_000;
const KEY = /^(?:u(\d{1,15})|s(\d{1,15})~([A-Za-z0-9_-]{1,64}))~(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

type Holder = { readonly accountId: number } | { readonly shareId: number; readonly stamp: string };

export async function thumbnailBase(ctx: AuthenticatedContext, _params: ParamsOf<'ThumbnailBase'>): Promise<UrlResult> {
  return thumbnailUrl(ctx, `u${ctx.caller.uid}`);
}

export async function shareThumbnailBase(ctx: CallContext, params: ParamsOf<'ShareThumbnailBase'>): Promise<UrlResult> {
  const { share } = await openShare(ctx, params.code, params.downpwd);
  return thumbnailUrl(ctx, `s${share.id}~${extractionCodeStamp(share.downpwdSealed)}`);
}

function thumbnailUrl(ctx: CallContext, holder: string): UrlResult {
  const now = ctx.services.now().getTime();
  const expires = new Date(Math.floor(now / DAY_MS) * DAY_MS + 2 * DAY_MS);
  const payload = `${holder}~${expires.getTime()}`;
  return { kind: 'url', url: `${ctx.baseUrl}/t/${payload}.${mac(ctx.services.secret, payload)}/`, expires };
}

function mac(secret: Buffer, payload: string): string {
  const key = createHmac('sha256', secret).update(KEY_PURPOSE).digest();
  return createHmac('sha256', key).update(payload, 'utf8').digest('base64url');
}

export type ThumbnailLookup =
  | { readonly kind: 'invalid' | 'expired' | 'notFound' }
  /** `etag` is known before the image is opened, so that a 304 never makes one. */
  | { readonly kind: 'found'; readonly etag: string; open(): Promise<DerivedImage | undefined> };

/** What `/t/{key}/{fid}/{variant}` serves: the checks of the header, in order. */
export async function findThumbnail(services: Services, key: string, fid: string, variant: string): Promise<ThumbnailLookup> {
  const match = KEY.exec(key);
  if (!match) return { kind: 'invalid' };
  const payload = key.slice(0, key.lastIndexOf('.'));
  const given = Buffer.from(match[5], 'base64url');
  const expected = Buffer.from(mac(services.secret, payload), 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { kind: 'invalid' };
  if (services.now().getTime() >= Number(match[4])) return { kind: 'expired' };
  if (!/^[1-9]\d{0,14}$/.test(fid) || (variant !== 'small' && variant !== 'large')) return { kind: 'notFound' };
  const holder: Holder = match[1] !== undefined ? { accountId: Number(match[1]) } : { shareId: Number(match[2]), stamp: match[3] };
  const fileId = Number(fid);
  const accountId = await accountGiving(services, holder, fileId);
  const file = accountId === undefined ? undefined : await findLiveFileContent(services.db, fileId, accountId);
  if (!file || file.encrypted) return { kind: 'notFound' };
  return { kind: 'found', etag: `"${file.sha256}-${variant}"`, open: () => openDerivedImage(services, file, variant) };
}

/** The account whose file `fileId` the holder may see a thumbnail of, if it may: live, unlocked, and inside the share. */
async function accountGiving(services: Services, holder: Holder, fileId: number): Promise<number | undefined> {
  if ('accountId' in holder) {
    const target = await findSharedTarget(services.db, holder.accountId, { type: 'file', id: fileId });
    return target && !target.lock ? holder.accountId : undefined;
  }
  const share = await findShareById(services.db, holder.shareId);
  if (!share) return undefined;
  const state = await shareGrantState(services, { id: share.id, stamp: holder.stamp }, share.accountId, fileId);
  return state === 'granted' ? share.accountId : undefined;
}
