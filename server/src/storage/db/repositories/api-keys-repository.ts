/** SQL for API keys. Only the hash of a key is stored; lookups go through its unique index. */
import type { Kysely, Selectable } from 'kysely';
import type { ApiKeysTable, Database } from '../schema';

export interface ApiKey {
  readonly id: number;
  readonly accountId: number;
  readonly label: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

export interface NewApiKey extends Omit<ApiKey, 'id' | 'lastUsedAt'> {
  readonly keyHash: string;
}

const apiKeyColumns = ['id', 'account_id', 'label', 'created_at', 'last_used_at'] as const;

const toApiKey = (row: Pick<Selectable<ApiKeysTable>, (typeof apiKeyColumns)[number]>): ApiKey => ({
  id: row.id,
  accountId: row.account_id,
  label: row.label,
  createdAt: new Date(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
});

export async function insertApiKey(db: Kysely<Database>, key: NewApiKey): Promise<ApiKey> {
  const row = await db
    .insertInto('api_keys')
    .values({
      account_id: key.accountId,
      key_hash: key.keyHash,
      label: key.label,
      created_at: key.createdAt.getTime(),
    })
    .returning(apiKeyColumns)
    .executeTakeFirstOrThrow();
  return toApiKey(row);
}

export async function findApiKeyByHash(db: Kysely<Database>, keyHash: string): Promise<ApiKey | undefined> {
  const row = await db.selectFrom('api_keys').select(apiKeyColumns).where('key_hash', '=', keyHash).executeTakeFirst();
  return row && toApiKey(row);
}

export async function markApiKeyUsed(db: Kysely<Database>, id: number, at: Date): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at.getTime() }).where('id', '=', id).execute();
}

export async function listApiKeys(db: Kysely<Database>, accountId: number): Promise<ApiKey[]> {
  const rows = await db.selectFrom('api_keys').select(apiKeyColumns).where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map(toApiKey);
}

/** Deletes a key of the account (its tokens go with it, by cascade); false when there was none. */
export async function deleteApiKey(db: Kysely<Database>, accountId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('api_keys').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
