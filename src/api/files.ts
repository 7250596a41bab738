/** Folders and files: query keys, shared query options and mutations. The service sorts, so each order is its own cache entry. */
import { queryOptions, useMutation, useQueryClient, type QueryClient, type QueryKey } from '@tanstack/react-query';
import { api } from './client';
import { SORT_KEYS, type SortKey } from './generated/results';
import type { FileItem, FolderItem, Item, Listing } from './results';
import { splitIds } from '../lib/items';

/** The sort keys of every listing (DECISIONS.md §13), from the catalog. */
export { SORT_KEYS, type SortKey };

export interface Sort {
  readonly order: SortKey;
  readonly desc: boolean;
}

export const DEFAULT_SORT: Sort = { order: 'name', desc: false };
export const RECENT_SORT: Sort = { order: 'time', desc: true };

export const isSortKey = (value: unknown): value is SortKey => SORT_KEYS.includes(value as SortKey);

export const sortParams = (sort: Sort) => ({ order: sort.order, desc: sort.desc ? '1' : '0' });
const sortKey = (sort: Sort) => ({ order: sort.order, desc: sort.desc });

/** The keys of a sorted list view (links, shares, the bin): `[name, 'list', { order, desc }]`. */
export function listKeys<N extends string>(name: N) {
  return { all: [name] as const, list: (sort: Sort) => [name, 'list', sortKey(sort)] as const };
}

export const fileKeys = {
  all: ['files'] as const,
  listings: () => [...fileKeys.all, 'listing'] as const,
  /** Every listing of one folder (with or without its path, every sort order); 0 is the root. */
  folder: (dir: number) => [...fileKeys.listings(), dir] as const,
  listing: (dir: number, sort: Sort) => [...fileKeys.folder(dir), sortKey(sort)] as const,
  /** GetFilesWhitPath of one folder in one order: the listing and the breadcrumbs. */
  withPath: (dir: number, sort: Sort) => [...fileKeys.folder(dir), 'path', sortKey(sort)] as const,
  searches: () => [...fileKeys.all, 'search'] as const,
  search: (keyword: string, sort: Sort) => [...fileKeys.searches(), keyword, sortKey(sort)] as const,
  recents: () => [...fileKeys.all, 'recent'] as const,
  recent: (sort: Sort) => [...fileKeys.recents(), sortKey(sort)] as const,
};

/** How often a listing is fetched again while a folder in it is being encrypted or decrypted. */
export const JOB_PROGRESS_INTERVAL_MS = 2_000;

/** Whether a folder of the listing shows a background encryption job's `progress` (docs/encryption.md §4). */
export const hasRunningJobs = (listing: Listing | undefined) =>
  listing !== undefined && listing.folders.some((folder) => folder.progress !== undefined && folder.progress < 100);

/** Listings poll while a job runs, so that its progress moves and its end shows; then they stop. */
const whileJobsRun = (query: { readonly state: { readonly data?: Listing } }) =>
  hasRunningJobs(query.state.data) ? JOB_PROGRESS_INTERVAL_MS : false;

/** How long a complete listing counts as fresh: the app's default (api/query-client.ts). */
const LISTING_FRESH_MS = 30_000;

// A first fetch streams items into the cache (`partial`) so the first screen shows early; a refetch keeps the old listing until the new one is whole.
// No structural sharing: comparing 100,000 items on every update would cost more than it saves.
const folderListing = {
  structuralSharing: false,
  staleTime: (query: { readonly state: { readonly data?: Listing } }) => (query.state.data?.partial ? 0 : LISTING_FRESH_MS),
  refetchInterval: whileJobsRun,
} as const;

/** Where a first fetch puts the items read so far; undefined when a complete listing is cached. */
function progressInto(client: QueryClient, queryKey: readonly unknown[]): ((listing: Listing) => void) | undefined {
  const cached = client.getQueryData<Listing>(queryKey);
  if (cached && !cached.partial) return undefined;
  return (listing) => client.setQueryData(queryKey, listing);
}

export const fileQueries = {
  listing: (dir: number, sort: Sort = DEFAULT_SORT) =>
    queryOptions({
      queryKey: fileKeys.listing(dir, sort),
      queryFn: ({ signal, client, queryKey }) =>
        api.getFiles({ dir: String(dir), ...sortParams(sort) }, { signal, onProgress: progressInto(client, queryKey) }),
      ...folderListing,
    }),
  /** GetFilesWhitPath: a folder's items and the folders from the root down to it. */
  withPath: (dir: number, sort: Sort = DEFAULT_SORT) =>
    queryOptions({
      queryKey: fileKeys.withPath(dir, sort),
      queryFn: ({ signal, client, queryKey }) =>
        api.getFilesWhitPath({ dir: String(dir), ...sortParams(sort) }, { signal, onProgress: progressInto(client, queryKey) }),
      ...folderListing,
    }),
  /**
   * FolderSearch and FileSearch as one listing, folders first: names containing the keyword (at most 1,000 of
   * each; `truncated` says when either had more).
   */
  search: (keyword: string, sort: Sort = DEFAULT_SORT) =>
    queryOptions({
      queryKey: fileKeys.search(keyword, sort),
      queryFn: async ({ signal }): Promise<Listing> => {
        const [folders, files] = await Promise.all([
          api.folderSearch({ keyword, ...sortParams(sort) }, { signal }),
          api.fileSearch({ keyword, ...sortParams(sort) }, { signal }),
        ]);
        return { ...files, count: folders.count + files.count, truncated: Boolean(folders.truncated || files.truncated), folders: folders.folders };
      },
      enabled: keyword.length > 0,
    }),
  /** GetNewUploadFiles: files added in the last 30 days, the newest 500. */
  recent: (sort: Sort = RECENT_SORT) =>
    queryOptions({
      queryKey: fileKeys.recent(sort),
      queryFn: ({ signal }) => api.getNewUploadFiles(sortParams(sort), { signal }),
    }),
};

/** A listing's items in display order: the folders, then the files. One array per listing. */
const itemLists = new WeakMap<Listing, readonly Item[]>();
const NO_ITEMS: readonly Item[] = [];
export function itemsOf(listing: Listing | undefined): readonly Item[] {
  if (!listing) return NO_ITEMS;
  let items = itemLists.get(listing);
  if (!items) {
    items = listing.folders.length === 0 ? listing.files : listing.files.length === 0 ? listing.folders : [...listing.folders, ...listing.files];
    itemLists.set(listing, items);
  }
  return items;
}

/** The service takes at most 1,000 ids per list (docs/protocol.md §10.3). */
const MAX_IDS_PER_CALL = 1000;

/** Ids in calls of at most 1,000 folders and 1,000 files, one after another; each call is all or nothing. */
function idBatches(items: readonly Item[]): { readonly dirids: string; readonly fids: string }[] {
  const { folders, files } = splitIds(items);
  const batches: { dirids: string; fids: string }[] = [];
  for (let i = 0; i < Math.max(folders.length, files.length); i += MAX_IDS_PER_CALL) {
    batches.push({
      dirids: folders.slice(i, i + MAX_IDS_PER_CALL).join(','),
      fids: files.slice(i, i + MAX_IDS_PER_CALL).join(','),
    });
  }
  return batches;
}

/** `call` for each batch of ids (idBatches), one after another. */
export async function eachBatch(items: readonly Item[], call: (batch: { readonly dirids: string; readonly fids: string }) => Promise<unknown>): Promise<void> {
  for (const batch of idBatches(items)) await call(batch);
}

/** A mutation after which `stale` marks what it may have changed, whether it succeeded or not. */
export function useSettledMutation<V, R>(mutationFn: (variables: V) => Promise<R>, stale: (client: QueryClient) => Promise<unknown>) {
  const client = useQueryClient();
  return useMutation({ mutationFn, onSettled: () => stale(client) });
}

/** The listings cached under `files` (not the other data kept there), with their keys. */
export const cachedListings = (client: QueryClient) =>
  client
    .getQueriesData<Listing>({ queryKey: fileKeys.all })
    .filter((entry): entry is [QueryKey, Listing] => typeof entry[1] === 'object' && entry[1] !== null && 'folders' in entry[1]);

/** Everything under `files` is stale: names, places and folder sizes may all have changed. */
export function invalidateFiles(client: QueryClient) {
  return client.invalidateQueries({ queryKey: fileKeys.all });
}

export function useCreateFolder() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ dir, name }: { readonly dir: number; readonly name: string }) => api.folderAdd({ dirid: dir, name }),
    onSuccess: (_folder, { dir }) => client.invalidateQueries({ queryKey: fileKeys.folder(dir) }),
  });
}

export const renameItem = (item: Item, newname: string): Promise<Item> =>
  item.type === 'folder' ? api.folderRename({ dirid: item.id, newname }) : api.fileRename({ fid: item.id, newname });

type Snapshot = readonly (readonly [readonly unknown[], unknown])[];

function renamedIn(listing: Listing, item: Item, name: string): Listing {
  const rename = <T extends FolderItem | FileItem>(items: readonly T[]) => {
    const index = items.findIndex((candidate) => candidate.id === item.id);
    if (index < 0) return items;
    const copy = items.slice();
    copy[index] = { ...items[index], name };
    return copy;
  };
  const folders = item.type === 'folder' ? rename(listing.folders) : listing.folders;
  const files = item.type === 'file' ? rename(listing.files) : listing.files;
  return folders === listing.folders && files === listing.files ? listing : { ...listing, folders, files };
}

/** Optimistic rename: cached listings show the new name at once, restored on error, then refetched (order and paths may change). */
export function useRenameItem(options: { readonly onError?: (error: Error, variables: { readonly item: Item; readonly name: string }) => void } = {}) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ item, name }: { readonly item: Item; readonly name: string }): Promise<Item> => renameItem(item, name),
    onMutate: async ({ item, name }) => {
      await client.cancelQueries({ queryKey: fileKeys.all });
      const snapshot: Snapshot = client.getQueriesData<Listing>({ queryKey: fileKeys.all });
      for (const [key, listing] of cachedListings(client)) client.setQueryData<Listing>(key, renamedIn(listing, item, name));
      return { snapshot };
    },
    // Here rather than in mutate()'s callbacks, so that it runs after the dialog has closed.
    onError: (error, variables, context) => {
      for (const [key, listing] of context?.snapshot ?? []) client.setQueryData(key, listing);
      options.onError?.(error, variables);
    },
    onSettled: () => invalidateFiles(client),
  });
}

type ItemsTo = { readonly items: readonly Item[]; readonly to: number };

/** Copy: the service copies folders with everything in them; a copy shares its content (docs/protocol.md §10.8). */
export const useCopyItems = () => useSettledMutation(({ items, to }: ItemsTo) => eachBatch(items, (batch) => api.copy({ ...batch, todir: to })), invalidateFiles);
export const useMoveItems = () => useSettledMutation(({ items, to }: ItemsTo) => eachBatch(items, (batch) => api.move({ ...batch, todir: to })), invalidateFiles);
