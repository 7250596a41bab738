/** Shares (docs/sharing.md); every mutation invalidates the shares and the listings, whose `shared` flags change. */
import { queryOptions, useQuery, type QueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { api } from './client';
import { DEFAULT_SORT, eachBatch, invalidateFiles, listKeys, sortParams, useSettledMutation, type Sort } from './files';
import type { FileItem, FolderItem, Item, Items, Listing } from './results';
import { itemKey } from '../lib/items';

/** The shares page starts with names A to Z, as the folders do. */
export const SHARES_SORT: Sort = DEFAULT_SORT;

export const shareKeys = listKeys('shares');

export const shareQueries = {
  /** GetShareFiles: the shared folders, then files, with their paths and share attributes. */
  list: (sort: Sort = SHARES_SORT) =>
    queryOptions({
      queryKey: shareKeys.list(sort),
      queryFn: ({ signal }) => api.getShareFiles(sortParams(sort), { signal }),
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

/** Folder listings carry only `shared`, so the attributes come from GetShareFiles; an item it does not list was unshared meanwhile. */
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

/** E-mail histories are not invalidated here: email-shares.ts imports this module, so that would be a cycle. */
export function invalidateShares(client: QueryClient) {
  return Promise.all([client.invalidateQueries({ queryKey: shareKeys.all }), invalidateFiles(client)]);
}

/** Shares the items or updates their shares' settings (links, download counts and covers stay). */
export const useShareItems = () =>
  useSettledMutation(async ({ items, settings }: { readonly items: readonly Item[]; readonly settings: ShareSettings }): Promise<Items> => {
    const folders: FolderItem[] = [];
    const files: FileItem[] = [];
    await eachBatch(items, async ({ dirids, fids }) => {
      if (dirids) folders.push(...(await api.folderShare({ dirids, ...settings })).folders);
      if (fids) files.push(...(await api.fileShare({ fids, ...settings })).files);
    });
    return { folders, files };
  }, invalidateShares);

/** Unshare: the links stop working at once; sharing again later gives new ones. */
export const useUnshareItems = () => useSettledMutation((items: readonly Item[]) => eachBatch(items, (batch) => api.unshare(batch)), invalidateShares);

/** The cover image of a file's share (409 until the file is shared), sent as one base64 value; answers its URL. */
export const useUploadShareImage = () =>
  useSettledMutation(async ({ fid, image }: { readonly fid: number; readonly image: File }): Promise<string> => {
    const bytes = new Uint8Array(await image.arrayBuffer());
    return api.shareImageUpload({ fid, ImagefileName: image.name, byteFileStream: bytes });
  }, invalidateShares);
