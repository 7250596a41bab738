/**
 * FileDownload (ext, DECISIONS.md §6) and the rules of the download URLs it hands out.
 *
 * A download URL is `{base}/d/{token}/{name}`. The token is `{payload}.{mac}`: the payload is
 * base64url JSON of {file id, account id, content id, expiry}, the mac base64url HMAC-SHA256 over
 * the payload text with a key derived from the server secret for this purpose alone. It carries
 * no session token, is valid for a few minutes, and works on any instance that shares the secret.
 * The name segment is for the browser; the answer takes the file's current name from the database.
 *
 * When the URL is used, the file must still be a live file of that account pointing to that same
 * content: a file moved to the bin, deleted, or encrypted since stops answering.
 *
 * An encrypted file can be downloaded once its owner has unlocked it (Unlock): FileDownload, called
 * with the session's token, puts the file's data key into the URL's payload sealed under a key
 * derived from the server secret and the session's unlock (encryption.ts sealedFileKeyForDownload),
 * so the /d/ route, which carries no session, decrypts on the fly; the URL still expires with its
 * short lifetime, and stops answering (423) as soon as the session that unlocked the file ends
 * (Logout) or no longer has it unlocked: from then on nobody can open the key it carries.
 *
 * A URL issued by a share (ShareDownload, share-service.ts) also names the share and a stamp of
 * its extraction code (`s`, `p` in the payload): when it is opened the share must still give the
 * file (operations/sharing/shares.ts shareGrantState), so unsharing, binning the shared item, moving the
 * file out of the shared folder or changing the extraction code ends it at once.
 *
 * FilePreview hands out the same grant for the preview route `/v/` (operations/previews/previews.ts),
 * signed with a key of its own so that neither route opens the other's tokens.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import { findLiveFileContent, type LiveFileContent } from '../../storage/db/repositories/content-repository';
import { contentStoreFor } from '../../storage/content/stores';
import type { ByteRange } from '../../storage/content/content-store';
import type { AuthenticatedContext, ParamsOf, Services, UrlResult } from '../context';
import { openUnlockedDownload, refuseIfLocked, sealedFileKeyForDownload } from '../encryption/encryption';
import { locked, notFound } from '../errors';
import { shareGrantState, type ShareGrant } from '../sharing/shares';

/** How long a download URL may be opened (a download under way continues past it). */
export const DOWNLOAD_URL_LIFETIME_MS = 10 * 60_000;

/**
 * The route a grant's URL opens: /d/ downloads, /v/ previews (protocol/files/previews.ts). Each has
 * a MAC key of its own, so that a token of one route is not genuine on the other.
 */
export type GrantRoute = 'd' | 'v';
const KEY_PURPOSES: Readonly<Record<GrantRoute, string>> = { d: 'fss/download-url/v1', v: 'fss/preview-url/v1' };

/** What a download URL grants: one file of one account, with the content it had, until `expires`. */
export interface DownloadGrant {
  readonly fileId: number;
  readonly accountId: number;
  readonly contentId: number;
  readonly expires: Date;
  /** Set when a share issued the URL: the share must still give the file when it is opened. */
  readonly share?: ShareGrant;
  /**
   * Set for an encrypted file its owner had unlocked (encryption.ts): the session (token id) and
   * key that unlocked it, and the data key sealed under the server secret (`t`, `k`, `u` in the
   * payload). The /d/ route decrypts with it while that session still has the key unlocked.
   */
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
  if (!file) throw notFound('file not found');
  // Locked (the file, or a folder above it, encrypted and not unlocked by this session): 423.
  await refuseIfLocked(services.db, ctx.caller, { type: 'file', id: file.fileId });
  const expires = new Date(services.now().getTime() + DOWNLOAD_URL_LIFETIME_MS);
  const grant = { fileId: file.fileId, accountId: file.accountId, contentId: file.contentId, expires };
  let unlocked: UnlockedGrant | undefined;
  if (file.encrypted) {
    const tokenId = ctx.caller.tokenId;
    const key = await sealedFileKeyForDownload(services, ctx.caller, file.fileId, (keyId) => unlockedContext(grant, tokenId, keyId));
    if (!key) throw locked('the file is encrypted: unlock it to download', { id: file.fileId });
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
  const payload = Buffer.from(
    JSON.stringify({
      f: grant.fileId,
      a: grant.accountId,
      c: grant.contentId,
      e: grant.expires.getTime(),
      ...(grant.share ? { s: grant.share.id, p: grant.share.stamp } : {}),
      ...(grant.unlocked ? { t: grant.unlocked.tokenId, k: grant.unlocked.keyId, u: grant.unlocked.sealedKey } : {}),
      ...(grant.renditionOnly ? { r: 1 } : {}),
    }),
    'utf8',
  ).toString('base64url');
  return `${payload}.${mac(secret, payload, route).toString('base64url')}`;
}

export type TokenCheck =
  | { readonly kind: 'valid'; readonly grant: DownloadGrant }
  /** Malformed, or not signed with this server's secret. */
  | { readonly kind: 'invalid' }
  /** Genuine, but past its expiry. */
  | { readonly kind: 'expired' };

export function verifyDownloadToken(secret: Buffer, token: string, now: Date, route: GrantRoute = 'd'): TokenCheck {
  const match = /^([A-Za-z0-9_-]{1,512})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return { kind: 'invalid' };
  const [, payload, signature] = match;
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(secret, payload, route);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { kind: 'invalid' };
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { kind: 'invalid' };
  }
  const { f, a, c, e, s, p, t, k, u, r } = (fields ?? {}) as Record<string, unknown>;
  if (![f, a, c, e].every((value) => Number.isSafeInteger(value))) return { kind: 'invalid' };
  if ((s !== undefined || p !== undefined) && !(Number.isSafeInteger(s) && typeof p === 'string')) return { kind: 'invalid' };
  if ((t !== undefined || k !== undefined || u !== undefined) && !(Number.isSafeInteger(t) && Number.isSafeInteger(k) && typeof u === 'string')) {
    return { kind: 'invalid' };
  }
  const grant: DownloadGrant = {
    fileId: f as number,
    accountId: a as number,
    contentId: c as number,
    expires: new Date(e as number),
    ...(s !== undefined ? { share: { id: s as number, stamp: p as string } } : {}),
    ...(t !== undefined ? { unlocked: { tokenId: t as number, keyId: k as number, sealedKey: u as string } } : {}),
    ...(r === 1 ? { renditionOnly: true } : {}),
  };
  if (now.getTime() >= grant.expires.getTime()) return { kind: 'expired' };
  return { kind: 'valid', grant };
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

/**
 * An encrypted file: served decrypted on the fly (any range, decrypting only the chunks it covers)
 * when the grant carries its key and the session that unlocked it still has it unlocked; else 423.
 * Shares never serve encrypted files.
 */
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

function mac(secret: Buffer, payload: string, route: GrantRoute): Buffer {
  const key = createHmac('sha256', secret).update(KEY_PURPOSES[route]).digest();
  return createHmac('sha256', key).update(payload, 'utf8').digest();
}

function idOf(value: bigint): number | null {
  return value > 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : null;
}
