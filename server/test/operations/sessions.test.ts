import { describe, expect, test } from 'vitest';
import { defaultLimits, loadConfig } from '../../src/config';
import { createAccount, createApiKey, revokeApiKey, setPassword } from '../../src/operations/accounts/accounts';
import type { TokenIssued } from '../../src/operations/context';
import { HashQueue } from '../../src/operations/crypto/hash-queue';
import { OpError, ResultCode } from '../../src/operations/errors';
import { hashPassword, hashSecret } from '../../src/operations/accounts/passwords';
import { apiLogin, authenticate, login, logout, openWithToken } from '../../src/operations/accounts/sessions';
import { hmacSha256Hex } from '../../src/operations/accounts/signing';
import { insertAccount } from '../../src/storage/db/repositories/accounts-repository';
import { callContext, openTestServices, type TestServices } from '../helpers/database';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/**
 * alice, with a cheap scrypt setting so that the many logins here stay fast (the parameters are
 * read from each hash, so the code under test is the same).
 */
async function withAlice(config?: Parameters<typeof openTestServices>[0]): Promise<TestServices> {
  const services = await openTestServices(config);
  await insertAccount(services.db, {
    name: 'alice',
    nameKey: 'alice',
    passwordHash: await hashPassword(services.passwordHashes, 'secret123', { N: 1024, r: 8, p: 1 }),
    quotaBytes: 1024 ** 3,
    createdAt: services.now(),
  });
  return services;
}

async function loginAlice(services: TestServices, pwd = 'secret123', uid = 'alice', address?: string) {
  return login(callContext(services, null, address), { uid, pwd });
}

async function issued(services: TestServices): Promise<TokenIssued> {
  const result = await loginAlice(services);
  if (result.kind !== 'token') throw new Error(`login refused: ${JSON.stringify(result)}`);
  return result;
}

async function refusalCode(promise: Promise<unknown>): Promise<number> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpError);
  return (error as OpError).code;
}

describe('Login', () => {
  test('by account name: a token, the uid, a separate signing key and the idle expiry', async () => {
    const services = await withAlice();
    const result = await issued(services);
    expect(result.uid).toBe(1001);
    expect(result.token).toMatch(/^[\w-]{43}$/); // 256 bits, base64url
    expect(result.key).toMatch(/^[0-9a-f]{64}$/);
    expect(result.key).not.toBe(result.token);
    expect(result.expires).toEqual(new Date(services.now().getTime() + DAY));
  });

  test('by account name in any letter case', async () => {
    const services = await withAlice();
    expect((await loginAlice(services, 'secret123', 'ALICE')).kind).toBe('token');
  });

  test('by numeric account id', async () => {
    const services = await withAlice();
    const result = await loginAlice(services, 'secret123', '1001');
    expect(result).toMatchObject({ kind: 'token', uid: 1001 });
  });

  test('a wrong password is refused', async () => {
    const services = await withAlice();
    expect(await loginAlice(services, 'wrong-password')).toEqual({ kind: 'tokenRefused', reason: 'invalid' });
  });

  test('an unknown account is refused the same way', async () => {
    const services = await withAlice();
    expect(await loginAlice(services, 'secret123', 'bob')).toEqual({ kind: 'tokenRefused', reason: 'invalid' });
    expect(await loginAlice(services, 'secret123', '999999')).toEqual({ kind: 'tokenRefused', reason: 'invalid' });
    expect(await login(callContext(services), { uid: null, pwd: null })).toEqual({ kind: 'tokenRefused', reason: 'invalid' });
  });

  test('each login gets its own token and key', async () => {
    const services = await withAlice();
    const first = await issued(services);
    const second = await issued(services);
    expect(second.token).not.toBe(first.token);
    expect(second.key).not.toBe(first.key);
  });
});

describe('what the database keeps of a session', () => {
  test('the token only as its SHA-256', async () => {
    const services = await withAlice();
    const { token } = await issued(services);
    const rows = await services.db.selectFrom('tokens').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(hashSecret(token));
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  test('the signing key only sealed under the token: not readable without it', async () => {
    const services = await withAlice();
    const { token, key } = await issued(services);
    const row = await services.db.selectFrom('tokens').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(key);
    expect(openWithToken('some-other-token', 'fss/token-signing-key/v1', row.sealed_signing_key)).toBeNull();
    expect(openWithToken(token, 'fss/token-signing-key/v1', row.sealed_signing_key)?.toString('utf8')).toBe(key);
  });
});

describe('authenticate', () => {
  test('a live token of the uid gives the caller and the signing key', async () => {
    const services = await withAlice();
    const { token, key } = await issued(services);
    const session = await authenticate(services, 1001n, token);
    expect(session.caller).toMatchObject({ uid: 1001, token });
    expect(session.caller.tokenId).toBeGreaterThan(0);
    expect(session.signingKey.hmac('GetFiles\nuid=1').toString('hex')).toBe(hmacSha256Hex(key, 'GetFiles\nuid=1'));
  });

  test('a missing or unknown token is 401', async () => {
    const services = await withAlice();
    expect(await refusalCode(authenticate(services, 1001n, null))).toBe(ResultCode.Unauthorized);
    expect(await refusalCode(authenticate(services, 1001n, ''))).toBe(ResultCode.Unauthorized);
    expect(await refusalCode(authenticate(services, 1001n, 'no-such-token'))).toBe(ResultCode.Unauthorized);
  });

  test('the token of another uid is 401', async () => {
    const services = await withAlice();
    await createAccount(services, { name: 'bob', password: 'secret123' });
    const { token } = await issued(services);
    expect(await refusalCode(authenticate(services, 1002n, token))).toBe(ResultCode.Unauthorized);
  });

  test('idle expiry slides with use', async () => {
    const services = await withAlice();
    const { token } = await issued(services);
    for (let i = 0; i < 4; i++) {
      services.clock.advance(23 * HOUR);
      await authenticate(services, 1001n, token);
    }
    const row = await services.db.selectFrom('tokens').selectAll().executeTakeFirstOrThrow();
    expect(row.idle_expires_at).toBe(services.now().getTime() + DAY);
  });

  test('a token unused for the idle time has expired', async () => {
    const services = await withAlice();
    const { token } = await issued(services);
    services.clock.advance(DAY - 1);
    await authenticate(services, 1001n, token);
    services.clock.advance(DAY);
    expect(await refusalCode(authenticate(services, 1001n, token))).toBe(ResultCode.Unauthorized);
  });

  test('use is written at most once a minute', async () => {
    const services = await withAlice();
    const { token } = await issued(services);
    const lastSeen = async () => (await services.db.selectFrom('tokens').select('last_seen_at').executeTakeFirstOrThrow()).last_seen_at;
    const loggedInAt = services.now().getTime();
    services.clock.advance(59_000);
    await authenticate(services, 1001n, token);
    expect(await lastSeen()).toBe(loggedInAt);
    services.clock.advance(1_000);
    await authenticate(services, 1001n, token);
    expect(await lastSeen()).toBe(services.now().getTime());
  });

  test('however it is used, a token ends at its absolute expiry', async () => {
    const services = await withAlice({ config: { tokenIdleSeconds: 3600, tokenMaxSeconds: 3 * 3600 } });
    const { token } = await issued(services);
    for (let i = 0; i < 5; i++) {
      services.clock.advance(HOUR / 2);
      await authenticate(services, 1001n, token);
    }
    const row = await services.db.selectFrom('tokens').selectAll().executeTakeFirstOrThrow();
    expect(row.idle_expires_at).toBe(row.expires_at); // capped: the idle expiry never passes it
    services.clock.advance(HOUR / 2);
    expect(await refusalCode(authenticate(services, 1001n, token))).toBe(ResultCode.Unauthorized);
  });

  test('Login reports the idle expiry, capped by the absolute one', async () => {
    const services = await withAlice({ config: { tokenIdleSeconds: 7200, tokenMaxSeconds: 3600 } });
    expect((await issued(services)).expires).toEqual(new Date(services.now().getTime() + HOUR));
  });

  test('a new password ends every session of the account', async () => {
    const services = await withAlice();
    const { token } = await issued(services);
    await setPassword(services, 'alice', 'another-secret');
    expect(await refusalCode(authenticate(services, 1001n, token))).toBe(ResultCode.Unauthorized);
  });

  // The signing key unsealed by an earlier call is kept a while (sessions.ts): never past the row.
  test('a signing key unsealed before is not used once the sealed value in the row changed', async () => {
    const services = await withAlice();
    const { token } = await issued(services);
    await authenticate(services, 1001n, token);
    await services.db.updateTable('tokens').set({ sealed_signing_key: 'v1.AAAA.AAAA.AAAA' }).where('token_hash', '=', hashSecret(token)).execute();
    expect(await refusalCode(authenticate(services, 1001n, token))).toBe(ResultCode.Unauthorized);
  });

  test('a token deleted after a call is refused at the next one', async () => {
    const services = await withAlice();
    const { token } = await issued(services);
    await authenticate(services, 1001n, token);
    await services.db.deleteFrom('tokens').where('token_hash', '=', hashSecret(token)).execute();
    expect(await refusalCode(authenticate(services, 1001n, token))).toBe(ResultCode.Unauthorized);
  });
});

describe('Logout', () => {
  test('revokes the token', async () => {
    const services = await withAlice();
    const { token } = await issued(services);
    const { caller } = await authenticate(services, 1001n, token);
    expect(await logout(callContext(services, caller), { uid: 1001n, token, sign: 'signed' })).toEqual({ kind: 'empty' });
    expect(await refusalCode(authenticate(services, 1001n, token))).toBe(ResultCode.Unauthorized);
  });

  test('leaves the account\'s other sessions alone', async () => {
    const services = await withAlice();
    const first = await issued(services);
    const second = await issued(services);
    const { caller } = await authenticate(services, 1001n, first.token);
    await logout(callContext(services, caller), { uid: 1001n, token: first.token, sign: '' });
    expect((await authenticate(services, 1001n, second.token)).caller.uid).toBe(1001);
  });
});

describe('throttled logins', () => {
  async function failTimes(services: TestServices, times: number, uid = 'alice', address?: string) {
    for (let i = 0; i < times; i++) await loginAlice(services, 'wrong-password', uid, address);
  }

  test('after 5 failures from one address the right password is refused too, with retryAfter', async () => {
    const services = await withAlice();
    await failTimes(services, 5);
    expect(await loginAlice(services)).toEqual({ kind: 'tokenRefused', reason: 'throttled', retryAfter: 60 });
  });

  test('4 failures do not block', async () => {
    const services = await withAlice();
    await failTimes(services, 4);
    expect((await loginAlice(services)).kind).toBe('token');
  });

  test('the block ends, and the next failure blocks for twice as long', async () => {
    const services = await withAlice();
    await failTimes(services, 5);
    services.clock.advance(30_000);
    expect(await loginAlice(services)).toMatchObject({ reason: 'throttled', retryAfter: 30 });
    services.clock.advance(30_000);
    await failTimes(services, 1);
    expect(await loginAlice(services)).toMatchObject({ reason: 'throttled', retryAfter: 120 });
    services.clock.advance(120_000);
    expect((await loginAlice(services)).kind).toBe('token');
  });

  test('the same account from another address is not blocked', async () => {
    const services = await withAlice();
    await failTimes(services, 5, 'alice', '198.51.100.1');
    expect((await loginAlice(services, 'secret123', 'alice', '198.51.100.2')).kind).toBe('token');
  });

  test('by id or by name, it is the same account', async () => {
    const services = await withAlice();
    await failTimes(services, 5, '1001');
    expect(await loginAlice(services, 'secret123', 'Alice')).toMatchObject({ reason: 'throttled' });
  });

  test('a success clears the count', async () => {
    const services = await withAlice();
    await failTimes(services, 4);
    expect((await loginAlice(services)).kind).toBe('token');
    await failTimes(services, 4);
    expect((await loginAlice(services)).kind).toBe('token');
  });

  test('an unknown account is throttled like a known one', async () => {
    const services = await withAlice();
    await failTimes(services, 5, 'bob');
    expect(await loginAlice(services, 'whatever1', 'bob')).toMatchObject({ reason: 'throttled', retryAfter: 60 });
  });

  test('successful logins from one address are counted too: past the limit its logins are throttled, other addresses are not', async () => {
    const services = await withAlice({ config: { limits: { ...defaultLimits, loginsPerAddress: 3 } } });
    for (let i = 0; i < 3; i++) expect((await loginAlice(services, 'secret123', 'alice', '198.51.100.1')).kind).toBe('token');
    expect(await loginAlice(services, 'secret123', 'alice', '198.51.100.1')).toEqual({ kind: 'tokenRefused', reason: 'throttled', retryAfter: 60 });
    // Whatever the account: it is the address's hashes that are counted.
    expect(await loginAlice(services, 'whatever1', 'bob', '198.51.100.1')).toMatchObject({ reason: 'throttled' });
    expect((await loginAlice(services, 'secret123', 'alice', '198.51.100.2')).kind).toBe('token');
    services.clock.advance(60_000);
    expect((await loginAlice(services, 'secret123', 'alice', '198.51.100.1')).kind).toBe('token');
  });

  test('the limit of successful logins per address is 100 by default (FSS_LOGINS_PER_ADDRESS)', () => {
    expect(defaultLimits.loginsPerAddress).toBe(100);
    expect(loadConfig({ FSS_LOGINS_PER_ADDRESS: '500' }).limits.loginsPerAddress).toBe(500);
    expect(() => loadConfig({ FSS_LOGINS_PER_ADDRESS: '0' })).toThrow(/FSS_LOGINS_PER_ADDRESS/);
  });

  test('with every hash slot taken and the queue full, Login is throttled for a second, checking and counting nothing', async () => {
    const base = await withAlice();
    const services = { ...base, passwordHashes: new HashQueue(1, 0) };
    let releaseSlot!: () => void;
    const slotTaken = services.passwordHashes.run(() => new Promise<void>((resolve) => (releaseSlot = resolve)));
    expect(await loginAlice(services)).toEqual({ kind: 'tokenRefused', reason: 'throttled', retryAfter: 1 });
    // Wrong passwords refused this way are not failures: five of them block nothing.
    for (let i = 0; i < 5; i++) expect(await loginAlice(services, 'wrong-password')).toMatchObject({ reason: 'throttled', retryAfter: 1 });
    releaseSlot();
    await slotTaken;
    expect((await loginAlice(services)).kind).toBe('token');
  });

  test('APILogin costs no password hash: a full hash queue does not refuse it', async () => {
    const base = await withAlice();
    const services = { ...base, passwordHashes: new HashQueue(1, 0) };
    const { key } = await createApiKey(services, 'alice', 'backup script');
    let releaseSlot!: () => void;
    const slotTaken = services.passwordHashes.run(() => new Promise<void>((resolve) => (releaseSlot = resolve)));
    expect((await apiLogin(callContext(services), { sid: key })).kind).toBe('token');
    releaseSlot();
    await slotTaken;
  });
});

describe('APILogin', () => {
  test('an API key logs in as its account, with the same token document as Login', async () => {
    const services = await withAlice();
    const { key } = await createApiKey(services, 'alice', 'backup script');
    const result = await apiLogin(callContext(services), { sid: key });
    expect(result).toMatchObject({ kind: 'token', uid: 1001 });
    if (result.kind !== 'token') return;
    expect((await authenticate(services, 1001n, result.token)).signingKey.hmac('x').toString('hex')).toBe(hmacSha256Hex(result.key, 'x'));
  });

  test('an unknown or missing key is refused', async () => {
    const services = await withAlice();
    await createApiKey(services, 'alice');
    expect(await apiLogin(callContext(services), { sid: 'fss_not-a-key' })).toEqual({ kind: 'tokenRefused', reason: 'invalid' });
    expect(await apiLogin(callContext(services), { sid: null })).toEqual({ kind: 'tokenRefused', reason: 'invalid' });
  });

  test('the key is stored only as its SHA-256, and its last use is recorded', async () => {
    const services = await withAlice();
    const { key } = await createApiKey(services, 'alice');
    expect(key).toMatch(/^fss_[\w-]{43}$/);
    await apiLogin(callContext(services), { sid: key });
    const row = await services.db.selectFrom('api_keys').selectAll().executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(hashSecret(key));
    expect(JSON.stringify(row)).not.toContain(key);
    expect(row.last_used_at).toBe(services.now().getTime());
  });

  test('revoking a key ends the sessions opened with it', async () => {
    const services = await withAlice();
    const { key, apiKey } = await createApiKey(services, 'alice');
    const result = await apiLogin(callContext(services), { sid: key });
    if (result.kind !== 'token') throw new Error('refused');
    await revokeApiKey(services, 'alice', apiKey.id);
    expect(await refusalCode(authenticate(services, 1001n, result.token))).toBe(ResultCode.Unauthorized);
    expect((await apiLogin(callContext(services), { sid: key })).kind).toBe('tokenRefused');
  });
});
