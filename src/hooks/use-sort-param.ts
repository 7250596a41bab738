import { useCallback } from 'react';
import { useSearchParams } from 'react-router';
import { isSortKey, type Sort, type SortKey } from '../api/files';

/**
 * Sort orders in the address (?order=size&desc=1), so that a reload, a bookmark and back/forward
 * keep them. The service sorts (docs/protocol.md §11.1); the client only says how.
 */
export function sortFromParams(params: URLSearchParams, fallback: Sort): Sort {
  const order = params.get('order');
  if (!isSortKey(order)) return fallback;
  const desc = params.get('desc');
  return { order, desc: desc === null ? fallback.desc : desc === '1' };
}

/** The address parameters with the sort order written in; other parameters are kept. */
export function withSort(params: URLSearchParams, sort: Sort): URLSearchParams {
  const next = new URLSearchParams(params);
  next.set('order', sort.order);
  next.set('desc', sort.desc ? '1' : '0');
  return next;
}

/**
 * Choosing a sort key: the key that is already in use turns around; a new key starts in the
 * direction people want first: names A to Z, the newest, the largest, the shared or linked first.
 */
export function nextSort(current: Sort, order: SortKey): Sort {
  if (current.order === order) return { order, desc: !current.desc };
  return { order, desc: order !== 'name' };
}

/**
 * The page's sort order, kept in the address (?order=…&desc=…). Changing it replaces the history
 * entry: Back leaves the folder rather than stepping through sort orders.
 */
export function useSortParam(fallback: Sort): {
  readonly sort: Sort;
  readonly setSort: (sort: Sort) => void;
  readonly sortBy: (order: SortKey) => void;
} {
  const [params, setParams] = useSearchParams();
  const sort = sortFromParams(params, fallback);
  const setSort = useCallback(
    (next: Sort) => setParams((current) => withSort(current, next), { replace: true }),
    [setParams],
  );
  const sortBy = useCallback((order: SortKey) => setSort(nextSort(sort, order)), [setSort, sort]);
  return { sort, setSort, sortBy };
}
