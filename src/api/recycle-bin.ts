/** The recycle bin: listing, restore, delete for good and empty; restores also invalidate the file listings. */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './client';
import { idBatches, invalidateFiles, type Sort } from './files';
import type { Item, Items } from './results';

export const BIN_SORT: Sort = { order: 'time', desc: true };

/** How long the bin keeps items when the service's data does not say (FSS_RECYCLE_RETENTION_DAYS). */
export const DEFAULT_RETENTION_DAYS = 30;

export const binKeys = {
  all: ['recycle-bin'] as const,
  list: (sort: Sort) => [...binKeys.all, 'list', { order: sort.order, desc: sort.desc }] as const,
};

export const binQueries = {
  /** GetRecycleFiles: the entries of the bin, with `deleted`, `from` and `purge`. */
  list: (sort: Sort = BIN_SORT) =>
    queryOptions({
      queryKey: binKeys.list(sort),
      queryFn: ({ signal }) => api.getRecycleFiles({ order: sort.order, desc: sort.desc ? '1' : '0' }, { signal }),
    }),
};

/** FolderAndFileDelete of live items: to the bin (is_real 0) or for good (is_real 1). */
export function useDeleteItems() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({ items, permanent }: { readonly items: readonly Item[]; readonly permanent: boolean }) => {
      for (const batch of idBatches(items)) await api.folderAndFileDelete({ ...batch, is_real: permanent ? 1 : 0 });
    },
    onSettled: () => Promise.all([invalidateFiles(client), client.invalidateQueries({ queryKey: binKeys.all })]),
  });
}

/** Days the bin keeps items, from an entry's `deleted` and `purge` (the service's setting may differ); else the default. */
export function retentionDays(items: readonly Pick<Item, 'deleted' | 'purge'>[]): number | undefined {
  for (const item of items) {
    if (!item.deleted || !item.purge) continue;
    const deleted = Date.parse(item.deleted);
    const purge = Date.parse(item.purge);
    if (Number.isFinite(deleted) && Number.isFinite(purge) && purge >= deleted) return Math.round((purge - deleted) / 86_400_000);
  }
  return undefined;
}

/** The bin's retention for a dialog: fetched when the dialog opens, the default until then. */
export function useRetentionDays(enabled: boolean): number {
  const bin = useQuery({ ...binQueries.list(), enabled, staleTime: 5 * 60_000 });
  const items = bin.data ? [...bin.data.folders, ...bin.data.files] : [];
  return retentionDays(items) ?? DEFAULT_RETENTION_DAYS;
}

/** FolderAndFileRestore: entries back to where they were; answers where each one went. */
export function useRestoreItems() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (items: readonly Item[]): Promise<Items> => {
      const folders: Items['folders'][number][] = [];
      const files: Items['files'][number][] = [];
      for (const batch of idBatches(items)) {
        const restored = await api.folderAndFileRestore(batch);
        folders.push(...restored.folders);
        files.push(...restored.files);
      }
      return { folders, files };
    },
    onSettled: () => Promise.all([client.invalidateQueries({ queryKey: binKeys.all }), invalidateFiles(client)]),
  });
}

/** FolderAndFileDelete with is_real 1 on entries of the bin. */
export function useDeleteForever() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (items: readonly Item[]) => {
      for (const batch of idBatches(items)) await api.folderAndFileDelete({ ...batch, is_real: 1 });
    },
    onSettled: () => client.invalidateQueries({ queryKey: binKeys.all }),
  });
}

/** RecycleEmpty: every entry of the bin, for good. */
export function useEmptyBin() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => api.recycleEmpty(),
    onSettled: () => client.invalidateQueries({ queryKey: binKeys.all }),
  });
}
