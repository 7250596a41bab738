/**
 * Folders and files for tests of the tree: accounts without the cost of a password hash, folders
 * through FolderAdd, files through addFileRecord over a content row inserted directly.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, KyselyPlugin } from 'kysely';
import type { AuthenticatedContext, FileItem, FolderItem, Services } from '../../src/operations/context';
import { addFileRecord, type NewFileRecord } from '../../src/operations/tree/file-records';
import { folderAdd } from '../../src/operations/tree/folders';
import { insertAccount } from '../../src/storage/db/repositories/accounts-repository';
import type { Database } from '../../src/storage/db/schema';
import { callContext } from './database';

const GiB = 1024 ** 3;

/** An account with a placeholder password hash (these tests never log in). */
export async function testAccount(services: Services, name = 'alice', quotaBytes = 10 * GiB): Promise<number> {
  const account = await insertAccount(services.db, {
    name,
    nameKey: name.toLowerCase(),
    passwordHash: 'not-a-password-hash',
    quotaBytes,
    createdAt: services.now(),
  });
  return account.id;
}

/** The context of a signed call by this account. */
export function as(services: Services, accountId: number): AuthenticatedContext {
  return callContext(services, { uid: accountId, tokenId: 0, token: 'test-token' });
}

export async function addFolder(services: Services, accountId: number, parentId: number, name: string): Promise<FolderItem> {
  const result = await folderAdd(as(services, accountId), { uid: BigInt(accountId), token: 'test-token', dirid: BigInt(parentId), name, sign: '' });
  return result.item as FolderItem;
}

/** A folder chain A1/A2/…/An under the root; returns the folders, outermost first. */
export async function addFolderChain(services: Services, accountId: number, depth: number): Promise<FolderItem[]> {
  const chain: FolderItem[] = [];
  for (let level = 1; level <= depth; level++) chain.push(await addFolder(services, accountId, chain.at(-1)?.id ?? 0, `A${level}`));
  return chain;
}

/** A content row as an upload would leave it, with random bytes' hash. */
export async function addContent(services: Services, size: number): Promise<{ id: number; sha256: string }> {
  const sha256 = createHash('sha256').update(randomBytes(16)).digest('hex');
  const row = await services.db
    .insertInto('content')
    .values({ sha256, size, storage_key: `test/${sha256}`, created_at: services.now().getTime() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, sha256 };
}

/** addFileRecord in its own transaction, as FileAdd will call it. `ext` defaults to the name's. */
export async function addFile(
  services: Services,
  accountId: number,
  folderId: number,
  name: string,
  size: number | bigint,
  overrides: Partial<NewFileRecord> = {},
): Promise<FileItem> {
  const content = await addContent(services, Math.max(0, Number(size) || 0));
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  return services.db
    .transaction()
    .execute((tx) =>
      addFileRecord(tx, services, accountId, { name, ext, size, folderId, sha256: content.sha256, claimContent: async () => ({ contentId: content.id, keyId: null }), ...overrides }),
    );
}

/** Counts the statements run through the returned database (a plugin sees every query, transactions included). */
export function countingStatements(db: Kysely<Database>): { db: Kysely<Database>; count: () => number } {
  let statements = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      statements++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { db: db.withPlugin(plugin), count: () => statements };
}

/** Every folder and file of the account, for "nothing changed" comparisons. */
export async function snapshot(db: Kysely<Database>, accountId: number) {
  const folders = await db
    .selectFrom('folders')
    .select(['id', 'parent_id', 'name', 'name_key', 'sort_key', 'size', 'updated_at'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
  const files = await db
    .selectFrom('files')
    .select(['id', 'folder_id', 'name', 'name_key', 'sort_key', 'ext', 'size', 'updated_at'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
  const account = await db.selectFrom('accounts').select(['used_bytes']).where('id', '=', accountId).executeTakeFirstOrThrow();
  return { folders, files, usedBytes: account.used_bytes };
}

/** Sizes of the given folders, read from the table. */
export async function folderSizes(db: Kysely<Database>, ids: readonly number[]): Promise<number[]> {
  const rows = await db.selectFrom('folders').select(['id', 'size']).where('id', 'in', ids).execute();
  const byId = new Map(rows.map((row) => [row.id, row.size]));
  return ids.map((id) => byId.get(id)!);
}

/** Recomputes a folder's size from its live files, the slow way, to check the kept one. */
export async function recomputedSize(db: Kysely<Database>, accountId: number, folderId: number): Promise<number> {
  const folders = await db.selectFrom('folders').select(['id', 'parent_id']).where('account_id', '=', accountId).where('deleted_at', 'is', null).where('binned_under', 'is', null).execute();
  const files = await db.selectFrom('files').select(['folder_id', 'size']).where('account_id', '=', accountId).where('deleted_at', 'is', null).where('binned_under', 'is', null).execute();
  const parent = new Map(folders.map((f) => [f.id, f.parent_id]));
  const isBeneath = (id: number): boolean => {
    for (let at = id; at !== 0; at = parent.get(at) ?? 0) if (at === folderId) return true;
    return false;
  };
  return files.filter((f) => isBeneath(f.folder_id)).reduce((sum, f) => sum + f.size, 0);
}
