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
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import { findLiveFileContent } from '../storage/db/content-repository';
import { contentStoreFor } from '../storage/content/stores';
import type { ByteRange } from '../storage/content/content-store';
import type { CallContext, ParamsOf, Services, UrlResult } from './context';
import { locked, notFound, unauthorized } from './errors';

/** How long a download URL may be opened (a download under way continues past it). */
export const DOWNLOAD_URL_LIFETIME_MS = 10 * 60_000;
const KEY_PURPOSE = 'fss/download-url/v1';

/** What a download URL grants: one file of one account, with the content it had, until `expires`. */
export interface DownloadGrant {
  readonly fileId: number;
  readonly accountId: number;
  readonly contentId: number;
  readonly expires: Date;
}

export async function fileDownload(ctx: CallContext, params: ParamsOf<'FileDownload'>): Promise<UrlResult> {
  if (!ctx.caller) throw unauthorized();
  const { services } = ctx;
  const fileId = idOf(params.fid);
  const file = fileId === null ? undefined : await findLiveFileContent(services.db, fileId, ctx.caller.uid);
  if (!file) throw notFound('file not found');
  if (file.encrypted) throw locked('the file is encrypted: unlock it to download', { id: file.fileId });
  const expires = new Date(services.now().getTime() + DOWNLOAD_URL_LIFETIME_MS);
  const token = signDownloadToken(services.secret, { fileId: file.fileId, accountId: file.accountId, contentId: file.contentId, expires });
  return { kind: 'url', url: `${ctx.baseUrl}/d/${token}/${encodeURIComponent(file.name)}`, expires };
}

export function signDownloadToken(secret: Buffer, grant: DownloadGrant): string {
  const payload = Buffer.from(
    JSON.stringify({ f: grant.fileId, a: grant.accountId, c: grant.contentId, e: grant.expires.getTime() }),
    'utf8',
  ).toString('base64url');
  return `${payload}.${mac(secret, payload).toString('base64url')}`;
}

export type TokenCheck =
  | { readonly kind: 'valid'; readonly grant: DownloadGrant }
  /** Malformed, or not signed with this server's secret. */
  | { readonly kind: 'invalid' }
  /** Genuine, but past its expiry. */
  | { readonly kind: 'expired' };

export function verifyDownloadToken(secret: Buffer, token: string, now: Date): TokenCheck {
  const match = /^([A-Za-z0-9_-]{1,512})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return { kind: 'invalid' };
  const [, payload, signature] = match;
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(secret, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { kind: 'invalid' };
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { kind: 'invalid' };
  }
  const { f, a, c, e } = (fields ?? {}) as Record<string, unknown>;
  if (![f, a, c, e].every((value) => Number.isSafeInteger(value))) return { kind: 'invalid' };
  const grant: DownloadGrant = { fileId: f as number, accountId: a as number, contentId: c as number, expires: new Date(e as number) };
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
  | { readonly kind: 'found'; readonly file: Downloadable }
  | { readonly kind: 'notFound' }
  | { readonly kind: 'locked' };

/** What a valid grant serves now: the file if it is still live with the granted content. */
export async function openGrantedFile(services: Services, grant: DownloadGrant): Promise<DownloadLookup> {
  const file = await findLiveFileContent(services.db, grant.fileId, grant.accountId);
  if (!file || file.contentId !== grant.contentId) return { kind: 'notFound' };
  if (file.encrypted) return { kind: 'locked' };
  const store = contentStoreFor(services.config);
  return {
    kind: 'found',
    file: {
      name: file.name,
      ext: file.ext,
      size: file.size,
      sha256: file.sha256,
      open: (range) => store.read(file.storageKey, range),
    },
  };
}

function mac(secret: Buffer, payload: string): Buffer {
  const key = createHmac('sha256', secret).update(KEY_PURPOSE).digest();
  return createHmac('sha256', key).update(payload, 'utf8').digest();
}

function idOf(value: bigint): number | null {
  return value > 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : null;
}
