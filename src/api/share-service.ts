/** The anonymous ShareService (docs/sharing.md §5): no uid, token or sign even when someone is logged in here. */
import { queryOptions, type QueryClient } from '@tanstack/react-query';
import { startBrowserDownload } from '../lib/browser-download';
import { api } from './client';
import { isApiError } from './errors';
import type { FileItem, Item, Listing } from './results';
import { sortParams, useSettledMutation, type Sort } from './files';
import { idParams } from '../lib/items';

export const visitorShareKeys = {
  all: ['share-page'] as const,
  share: (code: string) => [...visitorShareKeys.all, code] as const,
  /** ShareOpen of one share, with any extraction code. */
  opens: (code: string) => [...visitorShareKeys.share(code), 'open'] as const,
  open: (code: string, downpwd: string) => [...visitorShareKeys.opens(code), downpwd] as const,
  lists: (code: string) => [...visitorShareKeys.share(code), 'list'] as const,
  /** ShareList of one folder of the share (0 = the shared folder) in one order. */
  list: (code: string, downpwd: string, dir: number, sort: Sort) =>
    [...visitorShareKeys.lists(code), downpwd, dir, { order: sort.order, desc: sort.desc }] as const,
};

/** Visitors do not see the owner's marks (shared, linked); encrypted stays, so the list says a folder cannot be opened. */
function forVisitors<T extends Item>(item: T): T {
  return item.shared || item.linked ? { ...item, shared: false, linked: false } : item;
}

export const visitorShareQueries = {
  /** ShareOpen: the shared file or folder and its share attributes (downloads, limit, description, cover). */
  open: (code: string, downpwd: string) =>
    queryOptions({
      queryKey: visitorShareKeys.open(code, downpwd),
      queryFn: async ({ signal }) => {
        const { item } = await api.shareOpen({ code, downpwd }, { signal });
        return forVisitors(item);
      },
    }),
  /** ShareList: a folder within the shared folder; 0 is the shared folder itself. */
  list: (code: string, downpwd: string, dir: number, sort: Sort) =>
    queryOptions({
      queryKey: visitorShareKeys.list(code, downpwd, dir, sort),
      queryFn: async ({ signal }): Promise<Listing> => {
        const listing = await api.shareList({ code, downpwd, dir: String(dir), ...sortParams(sort) }, { signal });
        return { ...listing, folders: listing.folders.map(forVisitors), files: listing.files.map(forVisitors) };
      },
    }),
};

/** Why a ShareService call did not give what was asked: the page has one state for each. */
export type ShareProblem =
  | { readonly kind: 'code-required' }
  | { readonly kind: 'code-wrong' }
  | { readonly kind: 'throttled'; readonly retryAfter: number }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'download-limit' }
  | { readonly kind: 'locked' }
  | { readonly kind: 'network' }
  | { readonly kind: 'other'; readonly error: unknown };

/** Decided on the result code and the 403's `reason`, never on the message. */
export function shareProblem(error: unknown): ShareProblem {
  if (!isApiError(error)) return { kind: 'other', error };
  switch (error.code) {
    case 'Forbidden':
      if (error.details.reason === 'downpwd-required') return { kind: 'code-required' };
      if (error.details.reason === 'downpwd-wrong') return { kind: 'code-wrong' };
      if (error.details.reason === 'download-limit') return { kind: 'download-limit' };
      return { kind: 'other', error };
    case 'TooManyAttempts':
      // Without retryAfter (an older service), a minute: the shortest block.
      return { kind: 'throttled', retryAfter: error.retryAfter ?? 60 };
    case 'NotFound':
      return { kind: 'not-found' };
    case 'Locked':
      return { kind: 'locked' };
    case 'Network':
      return { kind: 'network' };
    default:
      return { kind: 'other', error };
  }
}

/** ShareOpen is refetched either way: an issued URL uses one download, and a refusal may mean the limit was reached. */
const invalidateOpens = (code: string) => (client: QueryClient) => client.invalidateQueries({ queryKey: visitorShareKeys.opens(code) });

/** A folder of the share, or a selection in it, as one ZIP (ShareZipDownload): one download of the limit. */
export const useShareZipDownload = (code: string, downpwd: string) =>
  useSettledMutation(async ({ dir, items }: { dir: number; items: readonly Item[] }) => {
    startBrowserDownload((await api.shareZipDownload({ code, downpwd, dir: String(dir), ...idParams(items) })).url);
  }, invalidateOpens(code));

export const useShareDownload = (code: string, downpwd: string) =>
  useSettledMutation(async (file: FileItem) => startBrowserDownload((await api.shareDownload({ code, downpwd, fid: file.id })).url), invalidateOpens(code));
