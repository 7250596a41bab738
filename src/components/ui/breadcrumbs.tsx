import { Link, type To } from 'react-router';
import { useI18n } from '../../i18n';
import { Icon } from './icons';

export interface Crumb {
  readonly key: string;
  readonly name: string;
  /** Where its link goes; null for folders in between that are not known (shown as one "…"). */
  readonly to: To | null;
  readonly state?: unknown;
}

/** A trail of folders down to the one shown: each a link, but the last (the current page). */
export function Breadcrumbs({ crumbs, unknownLabel }: { readonly crumbs: readonly Crumb[]; readonly unknownLabel?: string }) {
  const { t } = useI18n();
  return (
    <nav aria-label={t.breadcrumb} className="min-w-0 text-sm">
      <ol className="flex flex-wrap items-center gap-x-1 gap-y-0.5">
        {crumbs.map((crumb, index) => (
          <li key={crumb.key} className="flex min-w-0 items-center gap-1">
            {index > 0 && <Icon name="chevronRight" className="size-3.5 text-gray-500" />}
            {crumb.to === null ? (
              <span className="text-gray-700 dark:text-gray-300">
                <span aria-hidden="true">…</span>
                <span className="sr-only">{unknownLabel}</span>
              </span>
            ) : index === crumbs.length - 1 ? (
              <span aria-current="page" className="max-w-48 truncate text-gray-700 dark:text-gray-300" title={crumb.name}>
                {crumb.name}
              </span>
            ) : (
              <Link
                to={crumb.to}
                state={crumb.state}
                title={crumb.name}
                className="max-w-40 truncate rounded text-blue-700 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-blue-300"
              >
                {crumb.name}
              </Link>
            )}
          </li>
        ))}
      </ol>
    </nav>
  );
}
