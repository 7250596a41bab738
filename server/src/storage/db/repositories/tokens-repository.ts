/** SQL for login tokens, found by the SHA-256 of their value through a unique index (every authenticated call). */
import { sql, type Kysely } from 'kysely';
import { preparedQuery } from '../engine/prepared-query';
import type { Database } from '../schema';

export interface StoredToken {
  readonly id: number;
  readonly accountId: number;
  readonly apiKeyId: number | null;
  readonly sealedSigningKey: string;
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
  readonly idleExpiresAt: Date;
  readonly expiresAt: Date;
}

/** A token to store: found later by the hash of its value; last seen when created. */
export interface NewToken extends Omit<StoredToken, 'id' | 'lastSeenAt'> {
  readonly tokenHash: string;
}

export async function insertToken(db: Kysely<Database>, token: NewToken): Promise<number> {
  const row = await db
    .insertInto('tokens')
    .values({
      account_id: token.accountId,
      api_key_id: token.apiKeyId,
      token_hash: token.tokenHash,
      sealed_signing_key: token.sealedSigningKey,
      created_at: token.createdAt.getTime(),
      last_seen_at: token.createdAt.getTime(),
      idle_expires_at: token.idleExpiresAt.getTime(),
      expires_at: token.expiresAt.getTime(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * The token lookup of a call whose token is not kept yet, compiled once; it reads the account's version in the same
 * statement, so a later change to the token moves the version past the one read with the row.
 */
const tokenByHash = preparedQuery<[tokenHash: string], TokenRow>(1, (db: Kysely<Database>, tokenHash) =>
  sql<TokenRow>`
    select t.id, t.account_id, t.api_key_id, t.sealed_signing_key, t.created_at, t.last_seen_at, t.idle_expires_at, t.expires_at,
      (select cast(coalesce(sum(v.version), 0) as bigint) from listing_versions v where v.account_id = t.account_id) as account_version
    from tokens t where t.token_hash = ${tokenHash}`,
);

interface TokenRow {
  id: number;
  account_id: number;
  api_key_id: number | null;
  sealed_signing_key: string;
  created_at: number;
  last_seen_at: number;
  idle_expires_at: number;
  expires_at: number;
  account_version: number | string;
}

/** The token whose SHA-256 is `tokenHash`, with its account's version read at the same moment. */
export async function findTokenByHash(db: Kysely<Database>, tokenHash: string): Promise<(StoredToken & { readonly accountVersion: number }) | undefined> {
  const row = await tokenByHash.executeTakeFirst(db, tokenHash);
  return (
    row && {
      id: Number(row.id),
      accountId: Number(row.account_id),
      apiKeyId: row.api_key_id === null ? null : Number(row.api_key_id),
      sealedSigningKey: row.sealed_signing_key,
      createdAt: new Date(Number(row.created_at)),
      lastSeenAt: new Date(Number(row.last_seen_at)),
      idleExpiresAt: new Date(Number(row.idle_expires_at)),
      expiresAt: new Date(Number(row.expires_at)),
      accountVersion: Number(row.account_version),
    }
  );
}

/** Records use and slides the idle expiry if the last use is no later than `ifLastSeenBy`: one write per interval however many calls. */
export async function touchToken(
  db: Kysely<Database>,
  id: number,
  change: { readonly seenAt: Date; readonly idleExpiresAt: Date; readonly ifLastSeenBy: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('tokens')
    .set({ last_seen_at: change.seenAt.getTime(), idle_expires_at: change.idleExpiresAt.getTime() })
    .where('id', '=', id)
    .where('last_seen_at', '<=', change.ifLastSeenBy.getTime())
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteToken(db: Kysely<Database>, id: number): Promise<boolean> {
  const result = await db.deleteFrom('tokens').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function deleteTokensOfAccount(db: Kysely<Database>, accountId: number): Promise<number> {
  const result = await db.deleteFrom('tokens').where('account_id', '=', accountId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes the tokens that expired by `now` (idle expiry is never later than the absolute one). */
export async function deleteExpiredTokens(db: Kysely<Database>, now: Date, accountId?: number): Promise<number> {
  let query = db.deleteFrom('tokens').where('idle_expires_at', '<=', now.getTime());
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}
