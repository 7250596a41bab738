/**
 * FileDownload and its download URLs (docs/uploads-and-downloads.md §4): signed under the server secret, no session
 * token; opened only while the file, and the share or the unlock that issued it, still give it.
 * FilePreview hands out the same grant for `/v/` (operations/previews/previews.ts), under a key of its own.
 */
import type { Readable } from 'node:stream';
import { findLiveFileContent, type LiveFileContent } from '../../storage/db/repositories/content-repository';
import { contentStoreFor } from '../../storage/content/stores';
import type { ByteRange } from '../../storage/content/content-store';
import type { AuthenticatedContext, ParamsOf, Services, UrlResult } from '../context';
import { openUnlockedDownload, refuseIfLocked, sealedFileKeyForDownload } from '../encryption/encryption';
import { openToken, signToken, type TokenCheck } from '../crypto/signed-tokens';
import { locked, notFound } from '../errors';
import { shareGrantState, type ShareGrant } from '../sharing/shares';

/** How long a download URL may be opened (a download under way continues past it). */
export const DOWNLOAD_URL_LIFETIME_MS = 10 * 60_000;
/** A preview URL is opened again for every seek of a video: it lives as long as a long film is watched. */
export const PREVIEW_URL_LIFETIME_MS = 4 * 60 * 60_000;

/**
 * The route a grant's URL opens: /d/ downloads, /v/ previews (protocol/files/previews.ts). Each has
 * a MAC key of its own, so that a token of one route is not genuine on the other.
 */
export type GrantRoute = 'd' | 'v';
export const urlLifetime = (route: GrantRoute) => (route === 'v' ? PREVIEW_URL_LIFETIME_MS : DOWNLOAD_URL_LIFETIME_MS);
const KEY_PURPOSES: Readonly<Record<GrantRoute, string>> = { d: 'fss/download-url/v1', v: 'fss/preview-url/v1' };

/** What a download URL grants: one file of one account, with the content it had, until `expires`. */
export interface DownloadGrant {
  readonly fileId: number;
  readonly accountId: number;
  readonly contentId: number;
  readonly expires: Date;
  /** Set when a share issued the URL: the share must still give the file when it is opened. */
  readonly share?: ShareGrant;
  /** Set for an encrypted file its owner had unlocked: the session, key and sealed data key (`t`, `k`, `u`). */
  readonly unlocked?: UnlockedGrant;
  /** A preview that may show only the scaled image rendition, never the original (`r`): share visitors' images. */
  readonly renditionOnly?: boolean;
}

export interface UnlockedGrant {
  readonly tokenId: number;
  readonly keyId: number;
  readonly sealedKey: string;
}

/** What the sealed data key of a grant is bound to: the rest of the grant. */
function unlockedContext(grant: { fileId: number; accountId: number; contentId: number; expires: Date }, tokenId: number, keyId: number): string {
  return `download:${grant.fileId}.${grant.accountId}.${grant.contentId}.${grant.expires.getTime()}.${tokenId}.${keyId}`;
}

export async function fileDownload(ctx: AuthenticatedContext, params: ParamsOf<'FileDownload'>): Promise<UrlResult> {
  return ownFileUrl(ctx, params.fid, 'd');
}

/** FilePreview: FileDownload's grant, for the preview route /v/. */
export async function filePreview(ctx: AuthenticatedContext, params: ParamsOf<'FilePreview'>): Promise<UrlResult> {
  return ownFileUrl(ctx, params.fid, 'v');
}

async function ownFileUrl(ctx: AuthenticatedContext, fid: bigint, route: GrantRoute): Promise<UrlResult> {
  const { services } = ctx;
  const fileId = idOf(fid);
  const file = fileId === null ? undefined : await findLiveFileContent(services.db, fileId, ctx.caller.uid);
  if (!file) throw notFound('file-not-found', 'file not found');
  await refuseIfLocked(services.db, ctx.caller, { type: 'file', id: file.fileId });
  const expires = new Date(services.now().getTime() + urlLifetime(route));
  const grant = { fileId: file.fileId, accountId: file.accountId, contentId: file.contentId, expires };
  let unlocked: UnlockedGrant | undefined;
  if (file.encrypted) {
    const tokenId = ctx.caller.tokenId;
    const key = await sealedFileKeyForDownload(services, ctx.caller, file.fileId, (keyId) => unlockedContext(grant, tokenId, keyId));
    if (!key) throw locked('encrypted-locked', 'the file is encrypted: unlock it to download', { id: file.fileId });
    unlocked = { tokenId, keyId: key.keyId, sealedKey: key.sealedKey };
  }
  return grantUrl(ctx.baseUrl, services.secret, { ...grant, ...(unlocked ? { unlocked } : {}) }, file.name, route);
}

/** The URL `{base}/{route}/{token}/{name}` of a grant. */
export function grantUrl(baseUrl: string, secret: Buffer, grant: DownloadGrant, name: string, route: GrantRoute): UrlResult {
  const token = signDownloadToken(secret, grant, route);
  return { kind: 'url', url: `${baseUrl}/${route}/${token}/${encodeURIComponent(name)}`, expires: grant.expires };
}

export function signDownloadToken(secret: Buffer, grant: DownloadGrant, route: GrantRoute = 'd'): string {
  return signToken(secret, KEY_PURPOSES[route], {
    f: grant.fileId,
    a: grant.accountId,
    c: grant.contentId,
    e: grant.expires.getTime(),
    ...(grant.share ? { s: grant.share.id, p: grant.share.stamp } : {}),
    ...(grant.unlocked ? { t: grant.unlocked.tokenId, k: grant.unlocked.keyId, u: grant.unlocked.sealedKey } : {}),
    ...(grant.renditionOnly ? { r: 1 } : {}),
  });
}

export function verifyDownloadToken(secret: Buffer, token: string, now: Date, route: GrantRoute = 'd'): TokenCheck<DownloadGrant> {
  return openToken(secret, KEY_PURPOSES[route], token, { maxLength: 512, now }, ({ f, a, c, e, s, p, t, k, u, r }): DownloadGrant | null => {
    if (![f, a, c].every((value) => Number.isSafeInteger(value))) return null;
    if ((s !== undefined || p !== undefined) && !(Number.isSafeInteger(s) && typeof p === 'string')) return null;
    if ((t !== undefined || k !== undefined || u !== undefined) && !(Number.isSafeInteger(t) && Number.isSafeInteger(k) && typeof u === 'string')) return null;
    return {
      fileId: f as number,
      accountId: a as number,
      contentId: c as number,
      expires: new Date(e as number),
      ...(s !== undefined ? { share: { id: s as number, stamp: p as string } } : {}),
      ...(t !== undefined ? { unlocked: { tokenId: t as number, keyId: k as number, sealedKey: u as string } } : {}),
      ...(r === 1 ? { renditionOnly: true } : {}),
    };
  });
}

/** A file a download URL may serve: its name, type, size, strong validator, and its bytes. */
export interface Downloadable {
  readonly name: string;
  readonly ext: string;
  readonly size: number;
  readonly sha256: string;
  /** All the bytes, or one range (inclusive offsets), as a stream read as it is consumed. */
  open(range?: ByteRange): Promise<Readable>;
}

export type DownloadLookup =
  /** `content`: the stored content row the file points to (the previews derive images from it). */
  | { readonly kind: 'found'; readonly file: Downloadable; readonly content: LiveFileContent }
  | { readonly kind: 'notFound' }
  | { readonly kind: 'locked' };

/** What a valid grant serves now: the file if it is still live with the granted content. */
export async function openGrantedFile(services: Services, grant: DownloadGrant): Promise<DownloadLookup> {
  const file = await findLiveFileContent(services.db, grant.fileId, grant.accountId);
  if (!file || file.contentId !== grant.contentId) return { kind: 'notFound' };
  if (file.encrypted) return openEncryptedGrant(services, grant, file);
  if (grant.share) {
    const state = await shareGrantState(services, grant.share, grant.accountId, grant.fileId);
    if (state !== 'granted') return { kind: state === 'locked' ? 'locked' : 'notFound' };
  }
  return { kind: 'found', file: storedPlaintext(services, file), content: file };
}

/** A plaintext file served straight from the content store (downloads and direct links). */
export function storedPlaintext(
  services: Services,
  file: { readonly name: string; readonly ext: string; readonly size: number; readonly sha256: string; readonly storageKey: string },
): Downloadable {
  const store = contentStoreFor(services.config);
  return {
    name: file.name,
    ext: file.ext,
    size: file.size,
    sha256: file.sha256,
    open: (range) => store.read(file.storageKey, range),
  };
}

/** An encrypted file, decrypted on the fly, while the session that unlocked it still has it unlocked; shares never serve one. */
async function openEncryptedGrant(
  services: Services,
  grant: DownloadGrant,
  file: LiveFileContent,
): Promise<DownloadLookup> {
  if (!grant.unlocked || grant.share) return { kind: 'locked' };
  const { tokenId, keyId, sealedKey } = grant.unlocked;
  const source = await openUnlockedDownload(services, { tokenId, keyId, sealedKey, context: unlockedContext(grant, tokenId, keyId) }, file.contentId);
  if (!source) return { kind: 'locked' };
  return { kind: 'found', file: { name: file.name, ext: file.ext, size: source.size, sha256: file.sha256, open: source.open }, content: file };
}

function idOf(value: bigint): number | null {
  return value > 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : null;
}
