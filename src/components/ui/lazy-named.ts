import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

/**
 * A component exported by name from a module that is fetched when it first renders (a chunk of its
 * own): `lazyNamed(() => import('./share-dialog'), 'ShareDialog')`. Render it inside <Suspense>.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any props, as React.lazy itself declares
export function lazyNamed<Module extends Record<Name, ComponentType<any>>, Name extends keyof Module>(
  load: () => Promise<Module>,
  name: Name,
): LazyExoticComponent<Module[Name]> {
  return lazy(() => load().then((module) => ({ default: module[name] })));
}
