import { sql } from 'kysely';
import { describe, expect, test } from 'vitest';
import { defaultLimits } from '../../src/config';
import {
  createAccount,
  createApiKey,
  ensureDemoAccount,
  listAccounts,
  parseAccountRef,
  setPassword,
  setQuota,
} from '../../src/operations/accounts/accounts';
import { OpError, ResultCode } from '../../src/operations/errors';
import { login } from '../../src/operations/accounts/sessions';
import { callContext, openTestServices } from '../helpers/database';

async function refusal(promise: Promise<unknown>): Promise<OpError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpError);
  return error as OpError;
}

describe('accounts', () => {
  test('account ids start at 1001 and count up', async () => {
    const services = await openTestServices();
    expect((await createAccount(services, { name: 'alice', password: 'secret123' })).id).toBe(1001);
    expect((await createAccount(services, { name: 'bob', password: 'secret123' })).id).toBe(1002);
  });

  test('a new account gets the configured default quota and uses nothing', async () => {
    const services = await openTestServices({ config: { limits: { ...defaultLimits, defaultQuotaBytes: 12345 } } });
    const account = await createAccount(services, { name: 'alice', password: 'secret123' });
    expect(account).toMatchObject({ name: 'alice', quotaBytes: 12345, usedBytes: 0 });
    expect(account.createdAt).toEqual(services.now());
  });

  test('names are unique case-insensitively', async () => {
    const services = await openTestServices();
    await createAccount(services, { name: 'Alice', password: 'secret123' });
    const error = await refusal(createAccount(services, { name: 'aLICE', password: 'secret123' }));
    expect(error.code).toBe(ResultCode.Conflict);
    expect(error.message).toContain('already exists');
  });

  test.each(['', 'a b', 'é', 'x'.repeat(65), '1234', 'a/b'])('the name %j is refused, with the rule', async (name) => {
    const services = await openTestServices();
    const error = await refusal(createAccount(services, { name, password: 'secret123' }));
    expect(error.code).toBe(ResultCode.InvalidArgument);
    expect(error.message).toContain('letters, digits');
  });

  test('names of letters, digits, ".", "_" and "-" up to 64 characters are accepted', async () => {
    const services = await openTestServices();
    await createAccount(services, { name: 'j.doe_2-x', password: 'secret123' });
    await createAccount(services, { name: 'x'.repeat(64), password: 'secret123' });
    expect((await listAccounts(services)).map((a) => a.name)).toEqual(['j.doe_2-x', 'x'.repeat(64)]);
  });

  test('a password shorter than 8 characters is refused', async () => {
    const services = await openTestServices();
    expect((await refusal(createAccount(services, { name: 'alice', password: 'short' }))).code).toBe(ResultCode.InvalidArgument);
  });

  test('the password is stored as a scrypt hash, never as itself', async () => {
    const services = await openTestServices();
    await createAccount(services, { name: 'alice', password: 'secret123' });
    const row = await services.db.selectFrom('accounts').selectAll().executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(row)).not.toContain('secret123');
  });

  test('the quota can be changed; a negative or fractional quota is refused', async () => {
    const services = await openTestServices();
    await createAccount(services, { name: 'alice', password: 'secret123' });
    expect((await setQuota(services, 'alice', 5 * 1024 ** 3)).quotaBytes).toBe(5 * 1024 ** 3);
    expect((await refusal(setQuota(services, 'alice', -1))).code).toBe(ResultCode.InvalidArgument);
    expect((await refusal(setQuota(services, 'alice', 1.5))).code).toBe(ResultCode.InvalidArgument);
  });

  test('an unknown account is 404, by name or by id', async () => {
    const services = await openTestServices();
    expect((await refusal(setQuota(services, 'nobody', 1))).code).toBe(ResultCode.NotFound);
    expect((await refusal(setPassword(services, '1001', 'secret123'))).code).toBe(ResultCode.NotFound);
    expect((await refusal(createApiKey(services, 'nobody'))).code).toBe(ResultCode.NotFound);
  });

  test('accounts can be named by numeric id', async () => {
    const services = await openTestServices();
    await createAccount(services, { name: 'alice', password: 'secret123' });
    expect((await setQuota(services, '1001', 7)).name).toBe('alice');
    expect(parseAccountRef('1001')).toEqual({ id: 1001 });
    expect(parseAccountRef('Alice')).toEqual({ nameKey: 'alice' });
    expect(parseAccountRef('no such/name')).toBeNull();
  });

  test('a first start with no accounts creates "demo" with a random password that logs in', async () => {
    const services = await openTestServices();
    const demo = await ensureDemoAccount(services);
    expect(demo?.name).toBe('demo');
    expect(demo!.password.length).toBeGreaterThanOrEqual(16);
    const result = await login(callContext(services), { uid: 'demo', pwd: demo!.password });
    expect(result.kind).toBe('token');
  });

  test('no demo account once any account exists', async () => {
    const services = await openTestServices();
    await createAccount(services, { name: 'alice', password: 'secret123' });
    expect(await ensureDemoAccount(services)).toBeNull();
    const { rows } = await sql<{ n: number }>`select count(*) as n from accounts`.execute(services.db);
    expect(rows[0].n).toBe(1);
  });
});

