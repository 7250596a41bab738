import { useCallback } from 'react';
import { useSearchParams } from 'react-router';

/** The filter is in the address (?filter=…), so coming Back finds the same rows; typing replaces the history entry. */
export function useFilterParam(): readonly [string, (filter: string) => void] {
  const [params, setParams] = useSearchParams();
  const filter = params.get('filter') ?? '';
  const setFilter = useCallback(
    (next: string) =>
      setParams(
        (current) => {
          const updated = new URLSearchParams(current);
          if (next === '') updated.delete('filter');
          else updated.set('filter', next);
          return updated;
        },
        { replace: true },
      ),
    [setParams],
  );
  return [filter, setFilter] as const;
}
