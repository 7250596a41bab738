import type { Sort } from '../../api/files';
import { useI18n } from '../../i18n';
import type { TrailSegment } from '../../lib/share-code-store';
import { withSort } from '../../hooks/use-sort-param';
import { Breadcrumbs } from '../ui/breadcrumbs';

/** The address of a folder of the share, in an order: `?dir=12&order=name&desc=0`; the shared folder itself has no dir. */
export function shareFolderSearch(dir: number, sort: Sort): string {
  const params = withSort(new URLSearchParams(dir > 0 ? { dir: String(dir) } : {}), sort);
  return `?${params.toString()}`;
}

/** The folder of the address: ?dir=12; the shared folder (0) when there is none, or it is not a folder id. */
export function dirFromParams(params: URLSearchParams, rootId: number): number {
  const dir = params.get('dir');
  if (!dir || !/^\d{1,15}$/.test(dir)) return 0;
  const id = Number(dir);
  return id === rootId ? 0 : id;
}

/** ShareList gives no path, so the trail is what this tab walked (share-code-store.ts); folders it never saw are one "…". */
export function ShareBreadcrumbs({ trail, sort }: { readonly trail: readonly TrailSegment[]; readonly sort: Sort }) {
  const { t } = useI18n();
  const crumbs = trail.map((segment, index) => ({
    key: `${segment.id}-${index}`,
    name: segment.name || t.sharePageFolderUnknown,
    to: segment.id < 0 ? null : { search: shareFolderSearch(segment.id, sort) },
  }));
  return <Breadcrumbs crumbs={crumbs} unknownLabel={t.sharePageTrailUnknown} />;
}
