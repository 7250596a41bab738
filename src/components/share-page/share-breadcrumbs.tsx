import { Link } from 'react-router';
import type { Sort } from '../../api/files';
import { useI18n } from '../../i18n';
import type { TrailSegment } from '../../lib/share-code-store';
import { withSort } from '../../hooks/use-sort-param';
import { Icon } from '../ui/icons';

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

/**
 * From the shared folder down to the folder shown, each a link but the last. ShareList gives no
 * path, so the trail is what this tab walked (lib/share-code-store.ts): folders it never saw,
 * after a link from elsewhere, are one "…".
 */
export function ShareBreadcrumbs({ trail, sort }: { readonly trail: readonly TrailSegment[]; readonly sort: Sort }) {
  const { t } = useI18n();
  return (
    <nav aria-label={t.breadcrumb} className="min-w-0 text-sm">
      <ol className="flex flex-wrap items-center gap-x-1 gap-y-0.5">
        {trail.map((segment, index) => {
          const last = index === trail.length - 1;
          const name = segment.name || t.sharePageFolderUnknown;
          return (
            <li key={`${segment.id}-${index}`} className="flex min-w-0 items-center gap-1">
              {index > 0 && <Icon name="chevronRight" className="size-3.5 text-gray-500" />}
              {segment.id < 0 ? (
                <span className="text-gray-700 dark:text-gray-300">
                  <span aria-hidden="true">…</span>
                  <span className="sr-only">{t.sharePageTrailUnknown}</span>
                </span>
              ) : last ? (
                <span aria-current="page" className="max-w-48 truncate text-gray-700 dark:text-gray-300" title={name}>
                  {name}
                </span>
              ) : (
                <Link
                  to={{ search: shareFolderSearch(segment.id, sort) }}
                  title={name}
                  className="max-w-40 truncate rounded text-blue-700 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-blue-300"
                >
                  {name}
                </Link>
              )}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}
