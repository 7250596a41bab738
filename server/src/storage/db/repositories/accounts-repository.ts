/** SQL for accounts; the password hash leaves this module only through findCredentials (the login path). */
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { AccountsTable, Database } from '../schema';

export interface Account {
  readonly id: number;
  readonly name: string;
  readonly quotaBytes: number;
  readonly usedBytes: number;
  readonly createdAt: Date;
}

export interface AccountCredentials {
  readonly id: number;
  readonly passwordHash: string;
}

/** How an account is named: by its numeric id, or by its normalized name. */
export type AccountRef = { readonly id: number } | { readonly nameKey: string };

export interface NewAccount {
  readonly name: string;
  readonly nameKey: string;
  readonly passwordHash: string;
  readonly quotaBytes: number;
  readonly createdAt: Date;
}

const accountColumns = ['id', 'name', 'quota_bytes', 'used_bytes', 'created_at'] as const;

type AccountRow = Pick<Selectable<AccountsTable>, (typeof accountColumns)[number]>;

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  quotaBytes: row.quota_bytes,
  usedBytes: row.used_bytes,
  createdAt: new Date(row.created_at),
});

export async function insertAccount(db: Kysely<Database>, account: NewAccount): Promise<Account> {
  const row = await db
    .insertInto('accounts')
    .values({
      name: account.name,
      name_key: account.nameKey,
      password_hash: account.passwordHash,
      quota_bytes: account.quotaBytes,
      created_at: account.createdAt.getTime(),
    })
    .returning(accountColumns)
    .executeTakeFirstOrThrow();
  return toAccount(row);
}

const byRef = (ref: AccountRef) => (eb: ExpressionBuilder<Database, 'accounts'>) => ('id' in ref ? eb('id', '=', ref.id) : eb('name_key', '=', ref.nameKey));

export async function findAccount(db: Kysely<Database>, ref: AccountRef): Promise<Account | undefined> {
  const row = await db.selectFrom('accounts').select(accountColumns).where(byRef(ref)).executeTakeFirst();
  return row && toAccount(row);
}

export function findCredentials(db: Kysely<Database>, ref: AccountRef): Promise<AccountCredentials | undefined> {
  return db.selectFrom('accounts').select(['id', 'password_hash as passwordHash']).where(byRef(ref)).executeTakeFirst();
}

export async function updatePasswordHash(db: Kysely<Database>, id: number, passwordHash: string): Promise<boolean> {
  const result = await db.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function updateQuota(db: Kysely<Database>, id: number, quotaBytes: number): Promise<Account | undefined> {
  const row = await db
    .updateTable('accounts')
    .set({ quota_bytes: quotaBytes })
    .where('id', '=', id)
    .returning(accountColumns)
    .executeTakeFirst();
  return row && toAccount(row);
}

export async function listAccounts(db: Kysely<Database>): Promise<Account[]> {
  const rows = await db.selectFrom('accounts').select(accountColumns).orderBy('id').execute();
  return rows.map(toAccount);
}

export async function hasAnyAccount(db: Kysely<Database>): Promise<boolean> {
  const row = await db.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
  return row !== undefined;
}
