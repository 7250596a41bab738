/** The recycle bin: listing, restore, delete for good and empty; restores also invalidate the file listings. */
import { queryOptions, useQuery, type QueryClient } from '@tanstack/react-query';
import { api } from './client';
import { eachBatch, invalidateFiles, listKeys, sortParams, useSettledMutation, type Sort } from './files';
import type { Item, Items } from './results';

export const BIN_SORT: Sort = { order: 'time', desc: true };

/** How long the bin keeps items when the service's data does not say (FSS_RECYCLE_RETENTION_DAYS). */
export const DEFAULT_RETENTION_DAYS = 30;

export const binKeys = listKeys('recycle-bin');
const invalidateBin = (client: QueryClient) => client.invalidateQueries({ queryKey: binKeys.all });
const invalidateBinAndFiles = (client: QueryClient) => Promise.all([invalidateBin(client), invalidateFiles(client)]);

export const binQueries = {
  /** GetRecycleFiles: the entries of the bin, with `deleted`, `from` and `purge`. */
  list: (sort: Sort = BIN_SORT) =>
    queryOptions({
      queryKey: binKeys.list(sort),
      queryFn: ({ signal }) => api.getRecycleFiles(sortParams(sort), { signal }),
    }),
};

/** FolderAndFileDelete of live items: to the bin (is_real 0) or for good (is_real 1). */
export const useDeleteItems = () =>
  useSettledMutation(
    ({ items, permanent }: { readonly items: readonly Item[]; readonly permanent: boolean }) =>
      eachBatch(items, (batch) => api.folderAndFileDelete({ ...batch, is_real: permanent ? 1 : 0 })),
    invalidateBinAndFiles,
  );

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
export const useRestoreItems = () =>
  useSettledMutation(async (items: readonly Item[]): Promise<Items> => {
    const answers: Items[] = [];
    await eachBatch(items, async (batch) => answers.push(await api.folderAndFileRestore(batch)));
    return { folders: answers.flatMap((answer) => answer.folders), files: answers.flatMap((answer) => answer.files) };
  }, invalidateBinAndFiles);

/** FolderAndFileDelete with is_real 1 on entries of the bin. */
export const useDeleteForever = () =>
  useSettledMutation((items: readonly Item[]) => eachBatch(items, (batch) => api.folderAndFileDelete({ ...batch, is_real: 1 })), invalidateBin);

/** RecycleEmpty: every entry of the bin, for good. */
export const useEmptyBin = () => useSettledMutation(() => api.recycleEmpty(), invalidateBin);
