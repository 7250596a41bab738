import { useCallback, useState } from 'react';

export type ViewMode = 'list' | 'grid';
const STORAGE_KEY = 'fss.view';

function stored(): ViewMode {
  try {
    return globalThis.localStorage?.getItem(STORAGE_KEY) === 'grid' ? 'grid' : 'list';
  } catch {
    return 'list';
  }
}

/** List or grid, remembered on this device. */
export function useViewMode(): [ViewMode, (mode: ViewMode) => void] {
  const [mode, setMode] = useState<ViewMode>(stored);
  const change = useCallback((next: ViewMode) => {
    setMode(next);
    try {
      globalThis.localStorage?.setItem(STORAGE_KEY, next);
    } catch {
      // storage unavailable: the choice lasts for this page
    }
  }, []);
  return [mode, change];
}
