import { useCallback } from 'react';
import { useSearchParams } from 'react-router';
import type { Sort, SortKey } from '../api/files';
import { nextSort, sortFromParams, withSort } from '../lib/sort';

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
