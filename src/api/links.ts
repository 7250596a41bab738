/** Direct links (docs/protocol.md §17). Both mutations invalidate the links and every listing, where `linked` shows. */
import { queryOptions, useMutation, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { api } from './client';
import { DEFAULT_SORT, invalidateFiles, type Sort, type SortKey } from './files';
import type { FileItem, Item } from './results';

/** The keys the links view sorts by: `share` and `link` say nothing here (every file is linked). */
export const LINK_SORT_KEYS: readonly SortKey[] = ['name', 'time', 'size'];
export const LINKS_SORT: Sort = DEFAULT_SORT;

export const linkKeys = {
  all: ['links'] as const,
  lists: () => [...linkKeys.all, 'list'] as const,
  list: (sort: Sort) => [...linkKeys.lists(), { order: sort.order, desc: sort.desc }] as const,
};

export const linkQueries = {
  /** Hits change with anyone's download, so the view asks again whenever it is shown. */
  list: (sort: Sort = LINKS_SORT) =>
    queryOptions({
      queryKey: linkKeys.list(sort),
      queryFn: ({ signal }) => api.getLinkFiles({ order: sort.order, desc: sort.desc ? '1' : '0' }, { signal }),
      staleTime: 0,
    }),
};

/** Links changed: the links view and the `linked` flags of every listing are stale. */
export function invalidateLinks(client: QueryClient) {
  return Promise.all([client.invalidateQueries({ queryKey: linkKeys.all }), invalidateFiles(client)]);
}

/** What a selection holds, for the menu: files, of which linked, and folders (which cannot be linked). */
export interface LinkSummary {
  readonly files: number;
  readonly linked: number;
  readonly folders: number;
}

export function linkSummary(items: readonly Item[]): LinkSummary {
  let files = 0;
  let linked = 0;
  for (const item of items) {
    if (item.type !== 'file') continue;
    files++;
    if (item.linked) linked++;
  }
  return { files, linked, folders: items.length - files };
}

/** Linked files' URLs, read (never FileLink): a link removed in another tab must not come back unasked. */
export async function currentLinkUrls(client: QueryClient, fileIds: readonly number[]): Promise<Map<number, string>> {
  const listing = await client.fetchQuery({ ...linkQueries.list(), staleTime: 10_000 });
  const wanted = new Set(fileIds);
  const urls = new Map<number, string>();
  for (const file of listing.files) if (wanted.has(file.id) && file.url) urls.set(file.id, file.url);
  return urls;
}

export type LinkOutcome =
  | { readonly file: FileItem; readonly url: string }
  | { readonly file: FileItem; readonly error: unknown };

/** Calls in flight at once when many files are linked together. */
const LINK_CONCURRENCY = 4;

/** Each file succeeds or fails on its own (one encrypted file does not stop the others). */
export function useCreateLinks() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({
      files,
      onOutcome,
    }: {
      readonly files: readonly FileItem[];
      readonly onOutcome?: (outcome: LinkOutcome, index: number) => void;
    }): Promise<LinkOutcome[]> => {
      const outcomes: LinkOutcome[] = new Array(files.length);
      let next = 0;
      const worker = async () => {
        while (next < files.length) {
          const index = next++;
          const file = files[index];
          let outcome: LinkOutcome;
          try {
            outcome = { file, url: (await api.fileLink({ fid: file.id })).url };
          } catch (error) {
            outcome = { file, error };
          }
          outcomes[index] = outcome;
          onOutcome?.(outcome, index);
        }
      };
      await Promise.all(Array.from({ length: Math.min(LINK_CONCURRENCY, files.length) }, worker));
      return outcomes;
    },
    onSettled: () => invalidateLinks(client),
  });
}

/** One after another, stopping at the first refusal; unlinking twice succeeds, so trying again is safe. */
export function useRemoveLinks() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (files: readonly Pick<FileItem, 'id'>[]) => {
      for (const file of files) await api.fileUnlink({ fid: file.id });
    },
    onSettled: () => invalidateLinks(client),
  });
}
