import { useCallback } from 'react';
import { useSearchParams } from 'react-router';

/** An address parameter and its setter, which replaces the history entry ('' takes the parameter out). */
export function useReplacedParam(name: string): readonly [string, (value: string) => void] {
  const [params, setParams] = useSearchParams();
  const set = useCallback(
    (value: string) =>
      setParams(
        (current) => {
          const updated = new URLSearchParams(current);
          if (value === '') updated.delete(name);
          else updated.set(name, value);
          return updated;
        },
        { replace: true },
      ),
    [name, setParams],
  );
  return [params.get(name) ?? '', set] as const;
}

/** The filter is in the address (?filter=…), so coming Back finds the same rows; typing replaces the history entry. */
export const useFilterParam = () => useReplacedParam('filter');
