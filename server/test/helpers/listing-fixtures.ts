/**
 * Trees of folders and files for listing and search tests, inserted as rows (the folder and file
 * operations are not needed to read them), with keys computed as the operations compute them:
 * name_key = nameKey(name), sort_key = naturalSortKey(name).
 */
import type { Kysely } from 'kysely';
import { createAccount } from '../../src/operations/accounts/accounts';
import type { AuthenticatedContext, Item, Listing, Services } from '../../src/operations/context';
import { extensionOf, nameKey, naturalSortKey } from '../../src/operations/tree/names';
import type { Database } from '../../src/storage/db/schema';
import { callContext } from './database';

export interface ItemOptions {
  /** Parent folder id; 0 (the default) is the root. */
  readonly parent?: number;
  readonly created?: Date;
  /** updated_at: the `time` attribute and the "time" order. Defaults to `created`. */
  readonly updated?: Date;
  readonly size?: number;
  readonly shared?: boolean;
  readonly linked?: boolean;
  /** In the bin, deleted directly, from this original parent path. */
  readonly deleted?: { readonly at: Date; readonly from: string };
  /** Beneath a folder in the bin: that folder's id. */
  readonly binnedUnder?: number;
}

const EPOCH = new Date('2026-01-01T00:00:00.000Z');
const HASH = 'ab'.repeat(32);

export interface TestAccount {
  readonly id: number;
  readonly db: Kysely<Database>;
  /** What a signed call of this account gives its operation. */
  readonly ctx: AuthenticatedContext;
  folder(name: string, options?: ItemOptions): Promise<number>;
  file(name: string, options?: ItemOptions): Promise<number>;
  /** Many files in one transaction (100,000 in a few seconds). Returns their ids in `names` order. */
  files(names: readonly string[], options?: ItemOptions): Promise<number[]>;
}

const contentIds = new WeakMap<Kysely<Database>, number>();

async function contentId(db: Kysely<Database>): Promise<number> {
  const known = contentIds.get(db);
  if (known !== undefined) return known;
  const row = await db
    .insertInto('content')
    .values({ sha256: HASH, size: 1, storage_key: `test/${HASH}`, created_at: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  contentIds.set(db, row.id);
  return row.id;
}

function itemColumns(accountId: number, name: string, options: ItemOptions) {
  const created = (options.created ?? EPOCH).getTime();
  return {
    account_id: accountId,
    name,
    name_key: nameKey(name),
    sort_key: naturalSortKey(name),
    size: options.size ?? 0,
    created_at: created,
    updated_at: options.updated?.getTime() ?? created,
    shared: options.shared ? 1 : 0,
    linked: options.linked ? 1 : 0,
    deleted_at: options.deleted?.at.getTime() ?? null,
    deleted_from: options.deleted?.from ?? null,
    binned_under: options.binnedUnder ?? null,
  } as const;
}

/** A new account (through the accounts operation) and helpers to fill it. */
export async function testAccount(services: Services, name: string): Promise<TestAccount> {
  const account = await createAccount(services, { name, password: `${name}-password-1` });
  const { db } = services;
  const fileRow = (fileName: string, options: ItemOptions, content: number) => ({
    ...itemColumns(account.id, fileName, options),
    folder_id: options.parent ?? 0,
    ext: extensionOf(fileName),
    sha256: HASH,
    content_id: content,
  });
  return {
    id: account.id,
    db,
    ctx: callContext(services, { uid: account.id, tokenId: 0, token: 'test-token' }),
    async folder(folderName, options = {}) {
      const row = await db
        .insertInto('folders')
        .values({ ...itemColumns(account.id, folderName, options), parent_id: options.parent ?? 0 })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },
    async file(fileName, options = {}) {
      const row = await db
        .insertInto('files')
        .values(fileRow(fileName, options, await contentId(db)))
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },
    async files(names, options = {}) {
      const content = await contentId(db);
      const ids: number[] = [];
      await db.transaction().execute(async (trx) => {
        for (let start = 0; start < names.length; start += 1_000) {
          const rows = await trx
            .insertInto('files')
            .values(names.slice(start, start + 1_000).map((fileName) => fileRow(fileName, options, content)))
            .returning('id')
            .execute();
          ids.push(...rows.map((row) => row.id));
        }
      });
      return ids;
    },
  };
}

export interface ReadListing {
  readonly count: number;
  readonly truncated: boolean;
  readonly path: Listing['path'];
  readonly folders: Item[];
  readonly files: Item[];
  /** Names, folders first: what most order tests compare. */
  readonly names: string[];
}

async function readAll<T>(items: Iterable<T> | AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Reads a listing result whole, as the protocol layer would write it. */
export async function readListing(result: Promise<unknown>): Promise<ReadListing> {
  const listing = (await result) as Listing;
  if (listing.kind !== 'listing') throw new Error(`not a listing: ${JSON.stringify(listing)}`);
  const folders = await readAll(listing.folders);
  const files = await readAll(listing.files);
  return {
    count: listing.count,
    truncated: listing.truncated ?? false,
    path: listing.path,
    folders,
    files,
    names: [...folders, ...files].map((item) => item.name),
  };
}
