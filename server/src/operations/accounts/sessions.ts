/**
 * Login, APILogin, Logout and every authenticated call's token check (docs/security.md). The database
 * keeps the token's SHA-256 and the signing key sealed under the token, so a copy yields neither.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { findCredentials } from '../../storage/db/repositories/accounts-repository';
import { findApiKeyByHash, markApiKeyUsed } from '../../storage/db/repositories/api-keys-repository';
import type { Database } from '../../storage/db/schema';
import { accountVersion } from '../../storage/db/engine/hot-queries';
import { deleteExpiredTokens, deleteToken, findTokenByHash, insertToken, touchToken } from '../../storage/db/repositories/tokens-repository';
import { parseAccountRef } from './accounts';
import type { AuthenticatedContext, CallContext, Caller, Empty, ParamsOf, Services, TokenIssued, TokenRefused } from '../context';
import { OpError, ResultCode, unauthorized } from '../errors';
import { DUMMY_PASSWORD_HASH, hashSecret, verifyPassword } from './passwords';
import { seal, unseal } from '../crypto/sealing';
import { SigningKey } from './signing';
import {
  addressCounter,
  clearFailures,
  loginCounters,
  purgeStaleCounters,
  recordFailure,
  secondsBlocked,
  successfulLoginsCounter,
  type Counter,
} from './throttle';

const MAX_TOUCH_INTERVAL_MS = 60_000;

/**
 * How often a token's use is written (sliding its idle expiry): a minute, or half the idle time when
 * shorter, so a token in steady use always has a written use before it lapses.
 */
export function touchIntervalMs(tokenIdleSeconds: number): number {
  return Math.min(MAX_TOUCH_INTERVAL_MS, (tokenIdleSeconds * 1000) / 2);
}
const SIGNING_KEY_PURPOSE = 'fss/token-signing-key/v1';

const refused: TokenRefused = { kind: 'tokenRefused', reason: 'invalid' };

export async function login(ctx: CallContext, params: ParamsOf<'Login'>): Promise<TokenIssued | TokenRefused> {
  const { db, config } = ctx.services;
  const uid = params.uid ?? '';
  const ref = parseAccountRef(uid);
  const credentials = ref ? await findCredentials(db, ref) : undefined;
  const [pair, accountCounter, address] = loginCounters(credentials ? String(credentials.id) : `?${uid.toLowerCase().slice(0, 64)}`, ctx.clientAddress);
  const successes = successfulLoginsCounter(ctx.clientAddress, config.limits.loginsPerAddress);

  const throttled = await refuseIfBlocked(db, [pair, accountCounter, address, successes], ctx.services.now());
  if (throttled) return throttled;

  // An unknown account costs one scrypt too, so timing does not tell which accounts exist; it
  // waits for a slot of the hash queue like any other (or is refused when the queue is full).
  const passwordHash = credentials?.passwordHash ?? DUMMY_PASSWORD_HASH;
  let passwordMatches: boolean;
  try {
    passwordMatches = await verifyPassword(ctx.services.passwordHashes, params.pwd ?? '', passwordHash);
  } catch (error) {
    if (error instanceof OpError && error.code === ResultCode.TooManyAttempts) return queueFull(error);
    throw error;
  }
  if (!credentials || !passwordMatches) {
    await recordFailure(db, [pair, accountCounter, address], ctx.services.now());
    return refused;
  }
  await clearFailures(db, pair);
  await clearFailures(db, accountCounter);
  // Counted as failures are: right passwords from one address cost as many hashes as wrong ones.
  await recordFailure(db, [successes], ctx.services.now());
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
export async function logout(ctx: AuthenticatedContext, _params: ParamsOf<'Logout'>): Promise<Empty> {
  await deleteToken(ctx.services.db, ctx.caller.tokenId);
  return { kind: 'empty' };
}

/** An authenticated call's session: the caller, and the key its sign is checked with. */
export interface Session {
  readonly caller: Caller;
  /** The `key` Login returned, ready for verifySign. Never log it. */
  readonly signingKey: SigningKey;
}

/** The session of a call carrying uid and token; 401 when the token is missing, unknown, expired or not `uid`'s. */
export async function authenticate(services: Services, uid: bigint, token: string | null): Promise<Session> {
  const session = await liveSession(services, token, uid);
  if (!session || BigInt(session.accountId) !== uid) throw unauthorized();
  const signingKey = signingKeyOf(session);
  // Unreadable only if the row was tampered with: then the token is no good either.
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

const callerOf = (session: LiveSession): Caller => ({
  uid: session.kept.accountId,
  tokenId: session.kept.id,
  token: session.token,
  accountVersion: session.accountVersion,
});

/** The hash queue's refusal (429, nothing checked, nothing counted) as Login answers any throttling. */
const queueFull = (error: OpError): TokenRefused => ({ kind: 'tokenRefused', reason: 'throttled', retryAfter: Number(error.details.retryAfter) });

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
  // Expired sessions of this account go now, so the table stays bounded even without housekeeping.
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

// ---- Tokens in use: a token's row is kept with its account's version (caches.ts), which every change
// that decides a token moves (migration 0011), so a revoked token is refused on its next call anywhere.
// Re-read after KEPT_SESSION_MS at most, which bounds how long an unsealed signing key stays in memory.

const KEPT_SESSION_MS = 5 * 60_000;

/** A token's row as read, and its signing key once unsealed. */
export interface KeptSession {
  readonly id: number;
  readonly accountId: number;
  readonly sealedSigningKey: string;
  readonly expiresAt: number;
  /** Moved on by this process's own touches (the version does not move for those). */
  lastSeenAt: number;
  idleExpiresAt: number;
  readonly readAgainAt: number;
  /** Unsealed on first use. */
  signingKey: SigningKey | null;
}

/** What a kept session takes in memory, its signing key's HMAC pads included (an estimate). */
const KEPT_SESSION_BYTES = 1_000;

interface LiveSession {
  readonly kept: KeptSession;
  readonly tokenHash: string;
  readonly token: string;
  readonly accountId: number;
  readonly accountVersion: number;
}

/** The session of an unexpired token, else null; a kept token of an account other than `claimedUid` is read again. */
async function liveSession(services: Services, token: string | null, claimedUid?: bigint): Promise<LiveSession | null> {
  if (!token) return null;
  const tokenHash = hashSecret(token);
  const now = services.now().getTime();
  const store = services.caches.sessions;
  const kept = store.peek(tokenHash);
  if (kept) {
    const session = kept.value;
    const fresh = now < session.readAgainAt && now < session.idleExpiresAt && now < session.expiresAt;
    if (fresh && (claimedUid === undefined || BigInt(session.accountId) === claimedUid)) {
      const version = await accountVersion(services.db, session.accountId, services.caches.accountVersions);
      if (version === kept.version) return { kept: session, tokenHash, token, accountId: session.accountId, accountVersion: version };
    }
    store.delete(tokenHash);
  }
  const stored = await findTokenByHash(services.db, tokenHash);
  if (!stored || now >= stored.idleExpiresAt.getTime() || now >= stored.expiresAt.getTime()) return null;
  const session: KeptSession = {
    id: stored.id,
    accountId: stored.accountId,
    sealedSigningKey: stored.sealedSigningKey,
    expiresAt: stored.expiresAt.getTime(),
    lastSeenAt: stored.lastSeenAt.getTime(),
    idleExpiresAt: stored.idleExpiresAt.getTime(),
    readAgainAt: now + KEPT_SESSION_MS,
    signingKey: null,
  };
  store.put(tokenHash, stored.accountVersion, session, KEPT_SESSION_BYTES);
  return { kept: session, tokenHash, token, accountId: stored.accountId, accountVersion: stored.accountVersion };
}

async function slideExpiry(services: Services, session: LiveSession): Promise<void> {
  const now = services.now().getTime();
  const kept = session.kept;
  const interval = touchIntervalMs(services.config.tokenIdleSeconds);
  if (now - kept.lastSeenAt < interval) return;
  const idleExpiresAt = Math.min(now + services.config.tokenIdleSeconds * 1000, kept.expiresAt);
  const touched = await touchToken(services.db, kept.id, {
    seenAt: new Date(now),
    idleExpiresAt: new Date(idleExpiresAt),
    ifLastSeenBy: new Date(now - interval),
  });
  if (touched) {
    kept.lastSeenAt = now;
    kept.idleExpiresAt = idleExpiresAt;
  } else {
    // Another call (maybe on another instance) wrote a use meanwhile: the kept times are behind.
    services.caches.sessions.delete(session.tokenHash);
  }
}

/** The session's signing key, unsealed now or on an earlier call; null when the sealed value does not open. */
function signingKeyOf(session: LiveSession): SigningKey | null {
  const kept = session.kept;
  if (kept.signingKey === null) {
    const key = openWithToken(session.token, SIGNING_KEY_PURPOSE, kept.sealedSigningKey);
    kept.signingKey = key === null ? null : new SigningKey(key.toString('utf8'));
  }
  return kept.signingKey;
}

// ---- Keys derived from a token: what a session holds is sealed under HKDF(token, purpose) (crypto/sealing.ts),
// so only the token can open it, and a value sealed for one purpose cannot stand in for another.

export function sealWithToken(token: string, purpose: string, plaintext: Buffer): string {
  return seal(Buffer.from(token, 'utf8'), purpose, plaintext);
}

/** The plaintext sealed by sealWithToken; null when the token, the purpose or the data is wrong. */
export function openWithToken(token: string, purpose: string, sealed: string): Buffer | null {
  return unseal(Buffer.from(token, 'utf8'), purpose, sealed);
}
