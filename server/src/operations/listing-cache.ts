/**
 * The listing cache: the items of recently answered folder listings (GetFiles, GetFilesWhitPath),
 * kept in memory so that a client polling a folder costs a few indexed lookups instead of reading
 * and mapping every row again (docs/design.md §8, "The call path").
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
 * Bounds: listings of at most MAX_CACHED_ITEMS items, and half of FSS_LISTING_CACHE_MB of memory
 * (an estimate per item; the other half is for the same listings rendered, in the protocol layer),
 * the least recently used entries going first; 0 turns the cache off.
 * One cache per database (a process serving two databases, as tests do, keeps them apart).
 */
import type { Kysely } from 'kysely';
import { accountVersion } from '../storage/db/hot-queries';
import { countChildren, streamChildFiles, streamChildFolders, type ListingOrder } from '../storage/db/listings-repository';
import type { Database } from '../storage/db/schema';
import { pauseIfDue } from '../time-slices';
import type { FileItem, FolderItem, Listing, Services } from './context';

/** A listing with more items than this is streamed from the database as before, never cached. */
export const MAX_CACHED_ITEMS = 2_000;

const MIB = 1024 * 1024;

/** Which listing: a folder of an account, in one order, with or without paths (GetFilesWhitPath). */
export interface ListingKey {
  readonly accountId: number;
  readonly folderId: number;
  readonly order: ListingOrder;
  /** The folder's own path when items carry theirs; undefined for GetFiles. */
  readonly folderPath?: string;
}

export interface CachedListing {
  readonly folders: readonly FolderItem[];
  readonly files: readonly FileItem[];
}

interface Entry extends CachedListing {
  readonly version: number;
  readonly bytes: number;
  /** When it was last put at the end of the order. */
  placedAt: number;
}

/**
 * Listings by key, each with the version it was read at; least recently used first (a Map keeps
 * insertion order). A hit moves its entry to the end only when at least half as many entries as
 * are kept have been placed after it since it last was (account-reads.ts KeptReads: the move is a
 * delete and an insert, for nothing while the entry is among the newer half).
 */
export class ListingCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  /** Placements at the end of the order so far. */
  #placements = 0;

  constructor(
    readonly maxBytes: number,
    readonly maxItems = MAX_CACHED_ITEMS,
  ) {}

  /** Memory held, as estimated (itemBytes). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The listing read at `version`; undefined when none is kept, or the one kept is of another version. */
  get(key: ListingKey, version: number): CachedListing | undefined {
    const id = keyOf(key);
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    if (entry.version !== version) {
      // Versions only grow: an entry older than the account's version can never be served again.
      if (entry.version < version) this.#remove(id, entry);
      return undefined;
    }
    if (this.#placements - entry.placedAt >= this.#entries.size / 2) {
      this.#entries.delete(id);
      this.#entries.set(id, entry);
      entry.placedAt = ++this.#placements;
    }
    return entry;
  }

  /**
   * Keeps `listing`, read at `version`, unless it is too big or an entry of a later version is kept
   * already (two calls filling at once: the one that read the older version finishes last).
   */
  put(key: ListingKey, version: number, listing: CachedListing): void {
    if (listing.folders.length + listing.files.length > this.maxItems) return;
    const bytes = listingBytes(listing);
    if (bytes > this.maxBytes) return;
    const id = keyOf(key);
    const kept = this.#entries.get(id);
    if (kept) {
      if (kept.version > version) return;
      this.#remove(id, kept);
    }
    while (this.#bytes + bytes > this.maxBytes) {
      const [oldestId, oldest] = this.#entries.entries().next().value as [string, Entry];
      this.#remove(oldestId, oldest);
    }
    const folders = Object.freeze([...listing.folders]);
    keptItems.add(folders);
    this.#entries.set(id, { version, bytes, folders, files: Object.freeze([...listing.files]), placedAt: ++this.#placements });
    this.#bytes += bytes;
  }

  #remove(id: string, entry: Entry): void {
    this.#entries.delete(id);
    this.#bytes -= entry.bytes;
  }
}

/** The folders arrays of kept listings (isKeptListing). */
const keptItems = new WeakSet<readonly FolderItem[]>();

/**
 * Whether a listing's items are the listing cache's: arrays that are never changed, and that stand
 * for one listing at one version (account, folder, order, path). The same arrays therefore always
 * answer the same document, which the protocol layer may keep rendered (protocol/rendered-answers.ts).
 */
export function isKeptListing(listing: Pick<Listing, 'folders'>): boolean {
  return keptItems.has(listing.folders as readonly FolderItem[]);
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

function listingBytes(listing: CachedListing): number {
  let bytes = 100;
  for (const item of listing.folders) bytes += itemBytes(item);
  for (const item of listing.files) bytes += itemBytes(item);
  return bytes;
}

const caches = new WeakMap<Kysely<Database>, ListingCache | null>();

/** The listing cache of the services' database; null when FSS_LISTING_CACHE_MB is 0. */
export function listingCacheOf(services: Services): ListingCache | null {
  let cache = caches.get(services.db);
  if (cache === undefined) {
    // Half of the budget for the items; the other half is the protocol layer's, for the same
    // listings rendered (protocol/rendered-answers.ts).
    cache = services.config.listingCacheMb > 0 ? new ListingCache((services.config.listingCacheMb * MIB) / 2) : null;
    caches.set(services.db, cache);
  }
  return cache;
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
  const cache = listingCacheOf(services);
  // The version is read BEFORE the rows (`callVersion`: the account's version the call read when its
  // token was checked, account-reads.ts). A change committed after this read moves the version on,
  // so an entry may hold rows newer than its version (the next call then reads a later version and
  // reads the rows again), but never rows older than it: with the read the other way round, a change
  // committed between reading the rows and reading the version would be missing from an entry
  // that its version claims is up to date, and it would be served until the next change.
  const version = cache ? (callVersion ?? (await accountVersion(db, key.accountId))) : 0;
  const cached = cache?.get(key, version);
  if (cached) return { count: cached.folders.length + cached.files.length, folders: cached.folders, files: cached.files };

  const count = await countChildren(db, key.accountId, key.folderId);
  const folders = streamChildFolders(db, key.accountId, key.folderId, key.order, key.folderPath);
  const files = streamChildFiles(db, key.accountId, key.folderId, key.order, key.folderPath);
  if (!cache || count.folders + count.files > cache.maxItems) {
    // A big folder's count takes milliseconds (8–10 for 100,000 items): the rows are read in a turn of their own.
    await pauseIfDue();
    return { count: count.folders + count.files, folders, files };
  }

  const listing = { folders: await readAll(folders), files: await readAll(files) };
  cache.put(key, version, listing);
  return { count: listing.folders.length + listing.files.length, ...listing };
}

async function readAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
