import { Suspense, useCallback, useEffect, useState, type ReactNode } from 'react';
import type { FileItem, Item } from '../../api/results';
import { lazyNamed } from '../ui/lazy-named';
import type { PreviewSource } from './viewer';

// The viewer is a chunk of its own, fetched once the list is idle so that the first open waits for no code.
const loadViewer = () => import('./viewer');
const Viewer = lazyNamed(loadViewer, 'Viewer');

const isFile = (item: Item): item is FileItem => item.type === 'file';

/**
 * The viewer of a list's files: `open(file)` shows it, with the list's other files (as they were
 * when it opened) a swipe or an arrow key away. `source` should be memoized.
 */
export function useViewer(items: readonly Item[], source: PreviewSource): { readonly open: (file: FileItem) => void; readonly element: ReactNode } {
  const [shown, setShown] = useState<{ readonly files: readonly FileItem[]; readonly start: number } | null>(null);
  useEffect(() => {
    const idle = window.requestIdleCallback ?? ((run: () => void) => window.setTimeout(run, 1000));
    idle(() => void loadViewer());
  }, []);
  const open = useCallback(
    (file: FileItem) => {
      const files = items.filter(isFile);
      const start = files.findIndex((other) => other.id === file.id);
      setShown(start < 0 ? { files: [file], start: 0 } : { files, start });
    },
    [items],
  );
  const element = shown && (
    <Suspense fallback={null}>
      <Viewer files={shown.files} start={shown.start} source={source} onClose={() => {
          setShown(null);
          source.closed?.();
        }} />
    </Suspense>
  );
  return { open, element };
}
