/**
 * The capabilities in download URLs (/d/, /z/): `base64url(JSON fields).base64url(HMAC-SHA256)`, keyed by
 * the server secret through a purpose, so that a token of one kind never opens another. Field `e` is the
 * expiry (ms since the epoch).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a token grants, or why it grants nothing: `invalid` (malformed, or not signed by this server) or `expired` (genuine, but past `e`). */
export type TokenCheck<Grant> = { readonly kind: 'valid'; readonly grant: Grant } | { readonly kind: 'invalid' } | { readonly kind: 'expired' };

const TOKEN_FORMAT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

export function signToken(secret: Buffer, purpose: string, fields: { readonly e: number } & Record<string, unknown>): string {
  const payload = Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
  return `${payload}.${mac(secret, purpose, payload).toString('base64url')}`;
}

/** A token of `purpose` (payload at most `maxLength` characters) read by `grantOf`, which answers null for fields of the wrong shape. */
export function openToken<Grant>(
  secret: Buffer,
  purpose: string,
  token: string,
  { maxLength, now }: { readonly maxLength: number; readonly now: Date },
  grantOf: (fields: Record<string, unknown>) => Grant | null,
): TokenCheck<Grant> {
  const match = token.length <= maxLength + 44 ? TOKEN_FORMAT.exec(token) : null;
  if (!match || match[1].length > maxLength) return { kind: 'invalid' };
  const [, payload, signature] = match;
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(secret, purpose, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { kind: 'invalid' };
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { kind: 'invalid' };
  }
  if (typeof fields !== 'object' || fields === null) return { kind: 'invalid' };
  const grant = Number.isSafeInteger((fields as { e?: unknown }).e) ? grantOf(fields as Record<string, unknown>) : null;
  if (grant === null) return { kind: 'invalid' };
  return now.getTime() >= (fields as { e: number }).e ? { kind: 'expired' } : { kind: 'valid', grant };
}

function mac(secret: Buffer, purpose: string, payload: string): Buffer {
  const key = createHmac('sha256', secret).update(purpose).digest();
  return createHmac('sha256', key).update(payload, 'utf8').digest();
}
