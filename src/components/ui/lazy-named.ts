import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

/** A named export loaded as its own chunk on first render: `lazyNamed(() => import('./share-dialog'), 'ShareDialog')`, inside <Suspense>. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any props, as React.lazy itself declares
export function lazyNamed<Module extends Record<Name, ComponentType<any>>, Name extends keyof Module>(
  load: () => Promise<Module>,
  name: Name,
): LazyExoticComponent<Module[Name]> {
  return lazy(() => load().then((module) => ({ default: module[name] })));
}
