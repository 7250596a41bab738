import { useCallback } from 'react';
import { useSearchParams } from 'react-router';
import { isSortKey, type Sort, type SortKey } from '../api/files';

/** The service sorts (docs/protocol.md §11.1); the client only says how. */
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

/** The key in use turns around; a new key starts the way people want first: A to Z, newest, largest, shared or linked first. */
export function nextSort(current: Sort, order: SortKey): Sort {
  if (current.order === order) return { order, desc: !current.desc };
  return { order, desc: order !== 'name' };
}

/**
 * In the address; changing it replaces the history entry, so Back leaves the folder rather than stepping through orders.
 * A key outside `keys` (valid elsewhere, as ?order=share on the bin) gives the fallback.
 */
export function useSortParam(fallback: Sort, keys?: readonly SortKey[]): {
  readonly sort: Sort;
  readonly setSort: (sort: Sort) => void;
  readonly sortBy: (order: SortKey) => void;
} {
  const [params, setParams] = useSearchParams();
  const parsed = sortFromParams(params, fallback);
  const sort = !keys || keys.includes(parsed.order) ? parsed : fallback;
  const setSort = useCallback(
    (next: Sort) => setParams((current) => withSort(current, next), { replace: true }),
    [setParams],
  );
  const sortBy = useCallback((order: SortKey) => setSort(nextSort(sort, order)), [setSort, sort]);
  return { sort, setSort, sortBy };
}
