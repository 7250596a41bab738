/** Direct links (docs/protocol.md §17). Both mutations invalidate the links and every listing, where `linked` shows. */
import { queryOptions, type QueryClient } from '@tanstack/react-query';
import { api } from './client';
import { DEFAULT_SORT, invalidateFiles, listKeys, sortParams, useSettledMutation, type Sort, type SortKey } from './files';
import type { FileItem, Item } from './results';

/** The keys the links view sorts by: `share` and `link` say nothing here (every file is linked). */
export const LINK_SORT_KEYS: readonly SortKey[] = ['name', 'time', 'size'];
export const LINKS_SORT: Sort = DEFAULT_SORT;

export const linkKeys = listKeys('links');

export const linkQueries = {
  /** Hits change with anyone's download, so the view asks again whenever it is shown. */
  list: (sort: Sort = LINKS_SORT) =>
    queryOptions({
      queryKey: linkKeys.list(sort),
      queryFn: ({ signal }) => api.getLinkFiles(sortParams(sort), { signal }),
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
export const useCreateLinks = () =>
  useSettledMutation(async ({ files, onOutcome }: { readonly files: readonly FileItem[]; readonly onOutcome?: (outcome: LinkOutcome) => void }) => {
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const file = files[next++];
        const outcome: LinkOutcome = await api.fileLink({ fid: file.id }).then(({ url }) => ({ file, url }), (error: unknown) => ({ file, error }));
        onOutcome?.(outcome);
      }
    };
    await Promise.all(Array.from({ length: Math.min(LINK_CONCURRENCY, files.length) }, worker));
  }, invalidateLinks);

/** One after another, stopping at the first refusal; unlinking twice succeeds, so trying again is safe. */
export const useRemoveLinks = () =>
  useSettledMutation(async (files: readonly Pick<FileItem, 'id'>[]) => {
    for (const file of files) await api.fileUnlink({ fid: file.id });
  }, invalidateLinks);
