/**
 * Folders and files: the query-key factory and the query options shared by loaders and
 * components. Mutations (later) invalidate through `fileKeys`, e.g. `fileKeys.folder(12)` for every
 * sort order of folder 12.
 */
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './client';

/** The sort keys of every listing (DECISIONS.md §13). */
export const SORT_KEYS = ['name', 'time', 'size', 'share', 'link'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export interface Sort {
  readonly order: SortKey;
  readonly desc: boolean;
}

export const DEFAULT_SORT: Sort = { order: 'name', desc: false };

export const isSortKey = (value: unknown): value is SortKey => SORT_KEYS.includes(value as SortKey);

export const fileKeys = {
  all: ['files'] as const,
  listings: () => [...fileKeys.all, 'listing'] as const,
  /** Every sort order of one folder's listing; 0 is the root. */
  folder: (dir: number) => [...fileKeys.listings(), dir] as const,
  listing: (dir: number, sort: Sort) => [...fileKeys.folder(dir), { order: sort.order, desc: sort.desc }] as const,
};

export const fileQueries = {
  /** GetFiles: the folders, then the files, of one folder. */
  listing: (dir: number, sort: Sort = DEFAULT_SORT) =>
    queryOptions({
      queryKey: fileKeys.listing(dir, sort),
      queryFn: ({ signal }) => api.getFiles({ dir: String(dir), order: sort.order, desc: sort.desc ? '1' : '0' }, { signal }),
    }),
};

export function useFolderListing(dir: number, sort: Sort = DEFAULT_SORT) {
  return useQuery(fileQueries.listing(dir, sort));
}
