/**
 * Login, APILogin, Logout and the token check of every authenticated call (DECISIONS.md §4–5).
 *
 * A session is a random token (256 bits, base64url) and a separate random signing key. The
 * database keeps the token's SHA-256 and the signing key sealed under a key derived from the token,
 * so a copy of the database yields neither. Tokens expire after an idle time (sliding) and at an
 * absolute time; use is recorded at most once a minute, so most calls only read.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { findCredentials } from '../storage/db/accounts-repository';
import { findApiKeyByHash, markApiKeyUsed } from '../storage/db/api-keys-repository';
import type { Database } from '../storage/db/schema';
import { deleteExpiredTokens, deleteToken, findTokenByHash, insertToken, touchToken } from '../storage/db/tokens-repository';
import { parseAccountRef } from './accounts';
import type { CallContext, Caller, Empty, ParamsOf, Services, TokenIssued, TokenRefused } from './context';
import { unauthorized } from './errors';
import { DUMMY_PASSWORD_HASH, hashSecret, verifyPassword } from './passwords';
import {
  addressCounter,
  clearFailures,
  loginCounters,
  purgeStaleCounters,
  recordFailure,
  secondsBlocked,
  type Counter,
} from './throttle';

/** Use of a token is written at most this often; its idle expiry slides with each write. */
const TOUCH_INTERVAL_MS = 60_000;
const SIGNING_KEY_PURPOSE = 'fss/token-signing-key/v1';

const refused: TokenRefused = { kind: 'tokenRefused', reason: 'invalid' };

export async function login(ctx: CallContext, params: ParamsOf<'Login'>): Promise<TokenIssued | TokenRefused> {
  const { db } = ctx.services;
  const uid = params.uid ?? '';
  const ref = parseAccountRef(uid);
  const credentials = ref ? await findCredentials(db, ref) : undefined;
  const [pair, accountCounter, address] = loginCounters(credentials ? String(credentials.id) : `?${uid.toLowerCase().slice(0, 64)}`, ctx.clientAddress);

  const throttled = await refuseIfBlocked(db, [pair, accountCounter, address], ctx.services.now());
  if (throttled) return throttled;

  // An unknown account costs one scrypt too, so timing does not tell which accounts exist.
  const passwordHash = credentials?.passwordHash ?? DUMMY_PASSWORD_HASH;
  const passwordMatches = await verifyPassword(params.pwd ?? '', passwordHash);
  if (!credentials || !passwordMatches) {
    await recordFailure(db, [pair, accountCounter, address], ctx.services.now());
    return refused;
  }
  await clearFailures(db, pair);
  await clearFailures(db, accountCounter);
  return issueToken(ctx.services, credentials.id, null);
}

export async function apiLogin(ctx: CallContext, params: ParamsOf<'APILogin'>): Promise<TokenIssued | TokenRefused> {
  const { db } = ctx.services;
  const address = addressCounter(ctx.clientAddress);
  const throttled = await refuseIfBlocked(db, [address], ctx.services.now());
  if (throttled) return throttled;

  const apiKey = params.sid ? await findApiKeyByHash(db, hashSecret(params.sid)) : undefined;
  if (!apiKey) {
    await recordFailure(db, [address], ctx.services.now());
    return refused;
  }
  await markApiKeyUsed(db, apiKey.id, ctx.services.now());
  return issueToken(ctx.services, apiKey.accountId, apiKey.id);
}

/** Revokes the caller's token. The pipeline has authenticated the call (Logout is signed). */
export async function logout(ctx: CallContext, _params: ParamsOf<'Logout'>): Promise<Empty> {
  if (!ctx.caller) throw unauthorized();
  await deleteToken(ctx.services.db, ctx.caller.tokenId);
  return { kind: 'empty' };
}

/** An authenticated call's session: the caller, and the signing key its sign must be made with. */
export interface Session {
  readonly caller: Caller;
  /** The `key` Login returned: verifySign's key for the call's sign. Never log it. */
  readonly signingKey: string;
}

/**
 * The session of a call that carries uid and token: 401 (OpError) when the token is missing,
 * unknown, expired or not `uid`'s. The caller checks the sign of a signed call with
 * `verifySign(session.signingKey, …)`. Slides the idle expiry, at most once a minute.
 */
export async function authenticate(services: Services, uid: bigint, token: string | null): Promise<Session> {
  const session = await liveSession(services, token);
  if (!session || BigInt(session.accountId) !== uid) throw unauthorized();
  // Unreadable only if the row was tampered with: then the token is no good either.
  const signingKey = signingKeyOf(session, services.now().getTime());
  if (signingKey === null) throw unauthorized();
  await slideExpiry(services, session);
  return { caller: callerOf(session), signingKey };
}

/** The caller behind `Authorization: Bearer <token>` (the upload endpoint): the token names the account. */
export async function authenticateBearer(services: Services, token: string | null): Promise<Caller> {
  const session = await liveSession(services, token);
  if (!session) throw unauthorized();
  await slideExpiry(services, session);
  return callerOf(session);
}

/** Deletes expired tokens and forgotten throttle counters; for periodic housekeeping. */
export async function purgeExpiredSessions(services: Services): Promise<void> {
  const now = services.now();
  await deleteExpiredTokens(services.db, now);
  await purgeStaleCounters(services.db, now);
}

const callerOf = (session: LiveSession): Caller => ({ uid: session.accountId, tokenId: session.id, token: session.token });

async function refuseIfBlocked(db: Kysely<Database>, counters: readonly Counter[], now: Date): Promise<TokenRefused | null> {
  const retryAfter = await secondsBlocked(db, counters, now);
  return retryAfter > 0 ? { kind: 'tokenRefused', reason: 'throttled', retryAfter } : null;
}

async function issueToken(services: Services, accountId: number, apiKeyId: number | null): Promise<TokenIssued> {
  const now = services.now();
  const token = randomBytes(32).toString('base64url');
  const key = randomBytes(32).toString('hex');
  const expiresAt = new Date(now.getTime() + services.config.tokenMaxSeconds * 1000);
  const idleExpiresAt = new Date(Math.min(now.getTime() + services.config.tokenIdleSeconds * 1000, expiresAt.getTime()));
  // Expired sessions of this account go now: bounded work, and the table does not grow forever
  // even when no housekeeping runs.
  await deleteExpiredTokens(services.db, now, accountId);
  await insertToken(services.db, {
    accountId,
    apiKeyId,
    tokenHash: hashSecret(token),
    sealedSigningKey: sealWithToken(token, SIGNING_KEY_PURPOSE, Buffer.from(key, 'utf8')),
    createdAt: now,
    idleExpiresAt,
    expiresAt,
  });
  return { kind: 'token', token, uid: accountId, key, expires: idleExpiresAt };
}

interface LiveSession {
  readonly id: number;
  /** hashSecret(token): what the row was found by. */
  readonly tokenHash: string;
  readonly accountId: number;
  readonly token: string;
  readonly sealedSigningKey: string;
  readonly lastSeenAt: Date;
  readonly expiresAt: Date;
}

/** The session of a token that exists and has not expired; null otherwise. One indexed query. */
async function liveSession(services: Services, token: string | null): Promise<LiveSession | null> {
  if (!token) return null;
  const tokenHash = hashSecret(token);
  const stored = await findTokenByHash(services.db, tokenHash);
  const now = services.now().getTime();
  if (!stored || now >= stored.idleExpiresAt.getTime() || now >= stored.expiresAt.getTime()) return null;
  return { ...stored, token, tokenHash };
}

async function slideExpiry(services: Services, session: LiveSession): Promise<void> {
  const now = services.now();
  if (now.getTime() - session.lastSeenAt.getTime() < TOUCH_INTERVAL_MS) return;
  await touchToken(services.db, session.id, {
    seenAt: now,
    idleExpiresAt: new Date(Math.min(now.getTime() + services.config.tokenIdleSeconds * 1000, session.expiresAt.getTime())),
    ifLastSeenBy: new Date(now.getTime() - TOUCH_INTERVAL_MS),
  });
}

// ---- The signing keys of recent sessions ----------------------------------------------------------
// Unsealing a token's signing key (HKDF, then AES-GCM) is a fixed cost on every signed call; a
// client polling a folder makes the same session's calls again and again. So the unsealed key is
// kept in memory for a short while, keyed by the token's hash AND the sealed value the row holds
// right now: the row is still read (and its expiry checked) on every call, so a deleted token is
// refused at once, and a row whose sealed key changed can never be answered with the key of before.
// Only a caller who holds the token reaches a cached key (the hash is of the token it presented).
// Bounded in number and time; what it holds is as secret as the sealed column and is never logged.

/** How many sessions' keys are kept, and for how long after they were unsealed. */
const SIGNING_KEY_CACHE_ENTRIES = 10_000;
const SIGNING_KEY_CACHE_MS = 5 * 60_000;

interface CachedSigningKey {
  readonly sealed: string;
  readonly key: string;
  readonly until: number;
}

/** Least recently used first (a Map keeps insertion order; a hit moves its entry to the end). */
const signingKeys = new Map<string, CachedSigningKey>();

/** The session's signing key, unsealed now or a moment ago; null when the sealed value does not open. */
function signingKeyOf(session: LiveSession, now: number): string | null {
  const cached = signingKeys.get(session.tokenHash);
  if (cached) {
    signingKeys.delete(session.tokenHash);
    if (cached.sealed === session.sealedSigningKey && now < cached.until) {
      signingKeys.set(session.tokenHash, cached);
      return cached.key;
    }
  }
  const opened = openWithToken(session.token, SIGNING_KEY_PURPOSE, session.sealedSigningKey);
  if (opened === null) return null;
  const key = opened.toString('utf8');
  if (signingKeys.size >= SIGNING_KEY_CACHE_ENTRIES) signingKeys.delete(signingKeys.keys().next().value as string);
  signingKeys.set(session.tokenHash, { sealed: session.sealedSigningKey, key, until: now + SIGNING_KEY_CACHE_MS });
  return key;
}

// ---- Keys derived from a token -------------------------------------------------------------
// What a session holds (its signing key; later the data keys of unlocked items) is sealed under a
// key only the token can rebuild: HKDF-SHA256(token, info = purpose) → AES-256-GCM. A different
// purpose gives an unrelated key, so one sealed value cannot stand in for another.

const SEAL_VERSION = 'v1';

function tokenKey(token: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(token, 'utf8'), Buffer.alloc(0), purpose, 32));
}

/** Seals `plaintext` under a key derived from `token`: `v1.nonce.ciphertext.tag` (base64url). */
export function sealWithToken(token: string, purpose: string, plaintext: Buffer): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', tokenKey(token, purpose), nonce);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const parts = [nonce, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url'));
  return [SEAL_VERSION, ...parts].join('.');
}

/** The plaintext sealed by sealWithToken; null when the token, the purpose or the data is wrong. */
export function openWithToken(token: string, purpose: string, sealed: string): Buffer | null {
  const [version, nonce, ciphertext, tag, ...rest] = sealed.split('.');
  if (version !== SEAL_VERSION || rest.length > 0 || tag === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', tokenKey(token, purpose), Buffer.from(nonce, 'base64url'), {
      authTagLength: 16,
    });
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  } catch {
    return null;
  }
}
