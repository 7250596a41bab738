/** Account administration, for the `fss` command-line tool: accounts are never created over the wire. */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  findAccount,
  hasAnyAccount,
  insertAccount,
  listAccounts as selectAccounts,
  updatePasswordHash,
  updateQuota,
  type Account,
  type AccountRef,
} from '../../storage/db/repositories/accounts-repository';
import { deleteApiKey, insertApiKey, listApiKeys as selectApiKeys, type ApiKey } from '../../storage/db/repositories/api-keys-repository';
import { isUniqueViolation } from '../../storage/db/engine/dialect';
import type { Database } from '../../storage/db/schema';
import { deleteTokensOfAccount } from '../../storage/db/repositories/tokens-repository';
import type { Services } from '../context';
import { conflict, invalidArgument, notFound, OpError, ResultCode } from '../errors';
import { hashPassword, hashSecret } from './passwords';

export type { Account } from '../../storage/db/repositories/accounts-repository';
export type { ApiKey } from '../../storage/db/repositories/api-keys-repository';

export const ACCOUNT_NAME_RULE =
  'an account name is 1-64 characters of letters, digits, ".", "_" and "-", and not only digits';
export const PASSWORD_RULE = 'a password is 8-256 characters';
const MAX_LABEL_LENGTH = 100;

// Digits-only names are refused so that Login's uid is never ambiguous between a name and an id.
const NAME_PATTERN = /^(?!\d+$)[A-Za-z0-9._-]{1,64}$/;
const ID_PATTERN = /^[1-9]\d{0,15}$/;

/** The unique, case-insensitive form of a valid account name. */
export function accountNameKey(name: string): string {
  return name.toLowerCase();
}

/** What a Login uid or a command-line argument names: digits are an id, else a name; null when neither. */
export function parseAccountRef(nameOrId: string): AccountRef | null {
  if (ID_PATTERN.test(nameOrId)) {
    const id = Number(nameOrId);
    return Number.isSafeInteger(id) ? { id } : null;
  }
  return NAME_PATTERN.test(nameOrId) ? { nameKey: accountNameKey(nameOrId) } : null;
}

function checkName(name: string): void {
  if (!NAME_PATTERN.test(name)) throw invalidArgument('account-name-invalid', `invalid account name "${name}": ${ACCOUNT_NAME_RULE}`);
}

function checkPassword(password: string): void {
  const length = [...password].length;
  if (length < 8 || length > 256) throw invalidArgument('password-length', `invalid password: ${PASSWORD_RULE}`);
}

function checkQuota(quotaBytes: number): void {
  if (!Number.isSafeInteger(quotaBytes) || quotaBytes < 0) {
    throw invalidArgument('quota-invalid', `invalid quota ${quotaBytes}: a quota is a whole number of bytes, 0 or more`);
  }
}

/** The account named by a name or a numeric id; 404 when there is none. */
export async function getAccount(db: Kysely<Database>, nameOrId: string): Promise<Account> {
  const ref = parseAccountRef(nameOrId);
  const account = ref && (await findAccount(db, ref));
  if (!account) throw notFound('account-not-found', `no account "${nameOrId}"`);
  return account;
}

export interface NewAccountInput {
  readonly name: string;
  readonly password: string;
  /** Defaults to the configured default quota. */
  readonly quotaBytes?: number;
}

export async function createAccount(services: Services, input: NewAccountInput): Promise<Account> {
  checkName(input.name);
  checkPassword(input.password);
  const quotaBytes = input.quotaBytes ?? services.config.limits.defaultQuotaBytes;
  checkQuota(quotaBytes);
  const passwordHash = await hashPassword(services.passwordHashes, input.password);
  try {
    return await insertAccount(services.db, {
      name: input.name,
      nameKey: accountNameKey(input.name),
      passwordHash,
      quotaBytes,
      createdAt: services.now(),
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('name-taken', `an account named "${input.name}" already exists`);
    throw error;
  }
}

/** Sets a new password and ends every session of the account: whoever knew the old one is out. */
export async function setPassword(services: Services, nameOrId: string, password: string): Promise<Account> {
  checkPassword(password);
  const account = await getAccount(services.db, nameOrId);
  const passwordHash = await hashPassword(services.passwordHashes, password);
  await services.db.transaction().execute(async (trx) => {
    await updatePasswordHash(trx, account.id, passwordHash);
    await deleteTokensOfAccount(trx, account.id);
  });
  return account;
}

export async function setQuota(services: Services, nameOrId: string, quotaBytes: number): Promise<Account> {
  checkQuota(quotaBytes);
  const account = await getAccount(services.db, nameOrId);
  const updated = await updateQuota(services.db, account.id, quotaBytes);
  if (!updated) throw notFound('account-not-found', `no account "${nameOrId}"`);
  return updated;
}

export function listAccounts(services: Services): Promise<Account[]> {
  return selectAccounts(services.db);
}

/** A new API key for APILogin. The key is returned here once; only its hash is stored. */
export async function createApiKey(
  services: Services,
  nameOrId: string,
  label = '',
): Promise<{ readonly key: string; readonly apiKey: ApiKey }> {
  if ([...label].length > MAX_LABEL_LENGTH) throw invalidArgument('label-too-long', `a label is at most ${MAX_LABEL_LENGTH} characters`);
  const account = await getAccount(services.db, nameOrId);
  // The prefix lets secret scanners recognize a leaked key.
  const key = `fss_${randomBytes(32).toString('base64url')}`;
  const apiKey = await insertApiKey(services.db, {
    accountId: account.id,
    keyHash: hashSecret(key),
    label,
    createdAt: services.now(),
  });
  return { key, apiKey };
}

export async function listApiKeys(services: Services, nameOrId: string): Promise<ApiKey[]> {
  const account = await getAccount(services.db, nameOrId);
  return selectApiKeys(services.db, account.id);
}

/** Deletes an API key and ends the sessions opened with it. */
export async function revokeApiKey(services: Services, nameOrId: string, apiKeyId: number): Promise<void> {
  const account = await getAccount(services.db, nameOrId);
  if (!(await deleteApiKey(services.db, account.id, apiKeyId))) {
    throw notFound('api-key-not-found', `account "${nameOrId}" has no API key ${apiKeyId}`);
  }
}

export const DEMO_ACCOUNT_NAME = 'demo';

/** First start with no account: creates `demo` with a random password, returned to be shown once; else null. */
export async function ensureDemoAccount(services: Services): Promise<{ name: string; password: string } | null> {
  if (await hasAnyAccount(services.db)) return null;
  const password = randomBytes(12).toString('base64url');
  try {
    await createAccount(services, { name: DEMO_ACCOUNT_NAME, password });
  } catch (error) {
    // Another instance starting at the same moment made it first.
    if (error instanceof OpError && error.code === ResultCode.Conflict) return null;
    throw error;
  }
  return { name: DEMO_ACCOUNT_NAME, password };
}
