/**
 * The listing cache: the items of recently answered folder listings (GetFiles, GetFilesWhitPath),
 * kept in memory so that a client polling a folder costs a few indexed lookups instead of reading
 * and mapping every row again (docs/design.md §6).
 *
 * Only the items come from here. Every check of the call runs as before, on every call, before the
 * cache is asked: the token, the sign, that the folder exists, is live and is the caller's, that it
 * is not locked for the caller.
 *
 * Correctness rests on the account's listing version (migration 0008_listing_versions): a counter
 * in the database that triggers move on with every change to what a listing shows (folders, files,
 * encryption keys' tips, encryption jobs' progress), whoever writes it: this process, another
 * instance on the same PostgreSQL, the CLI. An entry is served only while the account's version is
 * the one it was filled at, so a change committed anywhere is seen by the next call.
 *
 * Bounds: listings of at most MAX_CACHED_ITEMS items, in the app's caches (caches.ts), which weigh
 * each by an estimate of its memory and of its rendered answers; FSS_CACHE_MB=0 turns it off.
 */
import { accountVersion } from '../../storage/db/engine/hot-queries';
import { countChildren, streamChildFiles, streamChildFolders, type ListingOrder } from '../../storage/db/repositories/listings-repository';
import { pauseIfDue } from '../../time-slices';
import type { CallCaches } from '../caches';
import type { FileItem, FolderItem, Listing, Services } from '../context';

/** A listing with more items than this is streamed from the database as before, never cached. */
export const MAX_CACHED_ITEMS = 2_000;

/** Which listing: a folder of an account, in one order, with or without paths (GetFilesWhitPath). */
export interface ListingKey {
  readonly accountId: number;
  readonly folderId: number;
  readonly order: ListingOrder;
  /** The folder's own path when items carry theirs; undefined for GetFiles. */
  readonly folderPath?: string;
}

/**
 * A kept listing: arrays that are never changed and stand for one listing at one version (account,
 * folder, order, path), so that they always answer the same document, which the protocol layer
 * keeps rendered with them (keepRendered).
 */
export interface KeptListing {
  readonly folders: readonly FolderItem[];
  readonly files: readonly FileItem[];
  /** Its answers as rendered, by form of answer (protocol/asmx/rendered-answers.ts). */
  readonly rendered: Map<string, Buffer>;
  readonly key: string;
  readonly version: number;
  /** Its memory, as estimated (itemBytes), with its rendered answers. */
  bytes: number;
}

/** Kept listings by their folders array: what a listing result is recognised by (keptListingOf). */
const keptByItems = new WeakMap<readonly FolderItem[], KeptListing>();

/** The kept listing whose items a listing result carries; undefined for one read from the database. */
export function keptListingOf(listing: Pick<Listing, 'folders'>): KeptListing | undefined {
  return keptByItems.get(listing.folders as readonly FolderItem[]);
}

/** Keeps an answer of a kept listing, rendered, while the listing is kept at its version. */
export function keepRendered(caches: CallCaches, kept: KeptListing, variant: string, body: Buffer): void {
  const listings = caches.listings;
  if (listings.peek(kept.key)?.value !== kept) return;
  kept.rendered.set(variant, body);
  kept.bytes += body.length;
  listings.put(kept.key, kept.version, kept, kept.bytes);
}

const keyOf = (key: ListingKey): string =>
  `${key.accountId}/${key.folderId}/${key.order.key}/${key.order.descending ? 1 : 0}${key.folderPath === undefined ? '' : `/${key.folderPath}`}`;

/**
 * An estimate of the memory one item takes: the object and its Date (about 400 bytes in V8), and
 * two bytes per character of its strings (an upper bound: V8 keeps Latin-1 text in one). Measured
 * with Node 20's heap: about 600 bytes for a file item of a 35-character name, as estimated.
 */
function itemBytes(item: FolderItem | FileItem): number {
  const text = item.name.length + (item.path?.length ?? 0) + (item.tip?.length ?? 0) + (item.type === 'file' ? item.ext.length + item.hash.length : 0);
  return 400 + 2 * text;
}

function listingBytes(folders: readonly FolderItem[], files: readonly FileItem[]): number {
  let bytes = 100;
  for (const item of folders) bytes += itemBytes(item);
  for (const item of files) bytes += itemBytes(item);
  return bytes;
}

/**
 * A folder's children in `key.order` (the folder checked by the caller): from the cache when it
 * holds them at the account's current version; otherwise read, and kept when small enough.
 * Without a cache, or for a listing too big to keep, the items are streamed as before.
 */
export async function folderChildren(
  services: Services,
  key: ListingKey,
  callVersion?: number,
): Promise<Pick<Listing, 'count' | 'folders' | 'files'>> {
  const { db } = services;
  const cache = services.caches.listings.enabled ? services.caches.listings : null;
  // The version is read BEFORE the rows (`callVersion`: the account's version the call read when its
  // token was checked, account-reads.ts). A change committed after this read moves the version on,
  // so an entry may hold rows newer than its version (the next call then reads a later version and
  // reads the rows again), but never rows older than it: with the read the other way round, a change
  // committed between reading the rows and reading the version would be missing from an entry
  // that its version claims is up to date, and it would be served until the next change.
  const version = cache ? (callVersion ?? (await accountVersion(db, key.accountId, services.caches.accountVersions))) : 0;
  const id = keyOf(key);
  const cached = cache?.get(id, version);
  if (cached) return { count: cached.folders.length + cached.files.length, folders: cached.folders, files: cached.files };

  const count = await countChildren(db, key.accountId, key.folderId);
  const folders = streamChildFolders(db, key.accountId, key.folderId, key.order, key.folderPath);
  const files = streamChildFiles(db, key.accountId, key.folderId, key.order, key.folderPath);
  if (!cache || count.folders + count.files > MAX_CACHED_ITEMS) {
    // A big folder's count takes milliseconds (8–10 for 100,000 items): the rows are read in a turn of their own.
    await pauseIfDue();
    return { count: count.folders + count.files, folders, files };
  }

  const listing = { folders: Object.freeze(await readAll(folders)), files: Object.freeze(await readAll(files)) };
  const kept: KeptListing = { ...listing, rendered: new Map(), key: id, version, bytes: listingBytes(listing.folders, listing.files) };
  cache.put(id, version, kept, kept.bytes);
  // Not kept when too big for the budget, or when a later version is kept already (two calls filling at once).
  if (cache.peek(id)?.value === kept) keptByItems.set(listing.folders, kept);
  return { count: listing.folders.length + listing.files.length, ...listing };
}

async function readAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
