/**
 * Shares (docs/sharing.md): the query keys, GetShareFiles, and share, stop sharing and the cover
 * image. Every mutation invalidates the shares and every file listing, whose `shared` flags change.
 */
import { queryOptions, useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { api } from './client';
import { DEFAULT_SORT, idBatches, invalidateFiles, type Sort } from './files';
import type { FileItem, FolderItem, Item, Items, Listing } from './results';
import { itemKey } from '../lib/items';

/** The shares page starts with names A to Z, as the folders do. */
export const SHARES_SORT: Sort = DEFAULT_SORT;

export const shareKeys = {
  all: ['shares'] as const,
  lists: () => [...shareKeys.all, 'list'] as const,
  /** GetShareFiles in one order. */
  list: (sort: Sort) => [...shareKeys.lists(), { order: sort.order, desc: sort.desc }] as const,
};

export const shareQueries = {
  /** GetShareFiles: the shared folders, then files, with their paths and share attributes. */
  list: (sort: Sort = SHARES_SORT) =>
    queryOptions({
      queryKey: shareKeys.list(sort),
      queryFn: ({ signal }) => api.getShareFiles({ order: sort.order, desc: sort.desc ? '1' : '0' }, { signal }),
    }),
};

/** The settings FileShare and FolderShare take. */
export interface ShareSettings {
  /** "" = an open share. */
  readonly downpwd: string;
  /** 0 = no limit. */
  readonly downValue: number;
  readonly description: string;
}

/** An item that carries its share attributes (from FileShare/FolderShare or GetShareFiles). */
export const hasShareDetails = (item: Item): boolean => item.shared && typeof item.code === 'string' && typeof item.url === 'string';

/**
 * The items with their share attributes. Listings of folders carry only the `shared` flag: for
 * a shared item without its attributes, GetShareFiles is read (once, from the cache when fresh)
 * and the item found there. An item flagged shared that GetShareFiles does not list is taken as
 * not shared (it was unshared meanwhile).
 */
export function useShareDetails(items: readonly Item[]): {
  readonly items: readonly Item[] | undefined;
  readonly error: unknown;
  readonly refetch: () => void;
} {
  const lookup = items.some((item) => item.shared && !hasShareDetails(item));
  const select = useCallback(
    (listing: Listing): readonly Item[] => {
      const byKey = new Map<string, Item>();
      for (const item of [...listing.folders, ...listing.files]) byKey.set(itemKey(item), item);
      return items.map((item) => (hasShareDetails(item) ? item : (byKey.get(itemKey(item)) ?? { ...item, shared: false })));
    },
    [items],
  );
  const query = useQuery({ ...shareQueries.list(), enabled: lookup, select });
  if (!lookup) return { items, error: null, refetch: () => {} };
  return { items: query.data, error: query.error, refetch: () => void query.refetch() };
}

/**
 * Everything that shows shares or `shared` flags is stale. (api/email-shares.ts depends on this
 * module for its keys, so the e-mail histories are not invalidated from here: that would be a cycle.)
 */
export function invalidateShares(client: QueryClient) {
  return Promise.all([client.invalidateQueries({ queryKey: shareKeys.all }), invalidateFiles(client)]);
}

/**
 * FolderShare and FileShare: shares the items, or updates the settings of their shares (their
 * links, download counts and cover images stay). Answers the items with their share attributes.
 */
export function useShareItems() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({ items, settings }: { readonly items: readonly Item[]; readonly settings: ShareSettings }): Promise<Items> => {
      const folders: FolderItem[] = [];
      const files: FileItem[] = [];
      for (const batch of idBatches(items)) {
        if (batch.dirids) folders.push(...(await api.folderShare({ dirids: batch.dirids, ...settings })).folders);
        if (batch.fids) files.push(...(await api.fileShare({ fids: batch.fids, ...settings })).files);
      }
      return { folders, files };
    },
    onSettled: () => invalidateShares(client),
  });
}

/** Unshare: the links stop working at once; sharing again later gives new ones. */
export function useUnshareItems() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (items: readonly Item[]) => {
      for (const batch of idBatches(items)) await api.unshare(batch);
    },
    onSettled: () => invalidateShares(client),
  });
}

/**
 * ShareImageUpload: the cover image of a file's share (the file must be shared first: 409 otherwise).
 * The bytes go as one base64 value (the transport encodes Uint8Array parameters so). Answers the
 * image's URL.
 */
export function useUploadShareImage() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({ fid, image }: { readonly fid: number; readonly image: File }): Promise<string> => {
      const bytes = new Uint8Array(await image.arrayBuffer());
      return api.shareImageUpload({ fid, ImagefileName: image.name, byteFileStream: bytes });
    },
    onSettled: () => invalidateShares(client),
  });
}
