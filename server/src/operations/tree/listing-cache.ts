/**
 * The listing cache (docs/design.md §6): a polled folder's items, kept at the account's version so a
 * change anywhere is seen next call. Only the items come from here; every check of the call still runs.
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

/** A kept listing: frozen arrays for one listing at one version, so they always render the same answers (keepRendered). */
export interface KeptListing {
  readonly folders: readonly FolderItem[];
  readonly files: readonly FileItem[];
  /** By form of answer (protocol/asmx/rendered-answers.ts). */
  readonly rendered: Map<string, Buffer>;
  readonly key: string;
  readonly version: number;
  /** Estimated (itemBytes), rendered answers included. */
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

/** Estimated memory of one item: the object and its Date (~400 bytes in V8) and 2 bytes a character (Node 20: ~600 for a 35-character name). */
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

/** A folder's children (already checked by the caller): kept at the account's version, else read and kept when small. */
export async function folderChildren(
  services: Services,
  key: ListingKey,
  callVersion?: number,
): Promise<Pick<Listing, 'count' | 'folders' | 'files'>> {
  const { db } = services;
  const cache = services.caches.listings.enabled ? services.caches.listings : null;
  // The version is read BEFORE the rows: an entry may then hold rows newer than its version, never older
  // (read after, a change committed in between would be missing yet served as current).
  const version = cache ? (callVersion ?? (await accountVersion(db, key.accountId, services.caches.accountVersions))) : 0;
  const id = keyOf(key);
  const cached = cache?.get(id, version);
  if (cached) return { count: cached.folders.length + cached.files.length, folders: cached.folders, files: cached.files };

  const count = await countChildren(db, key.accountId, key.folderId);
  const folders = streamChildFolders(db, key.accountId, key.folderId, key.order, key.folderPath, count.folders);
  const files = streamChildFiles(db, key.accountId, key.folderId, key.order, key.folderPath, count.files);
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
