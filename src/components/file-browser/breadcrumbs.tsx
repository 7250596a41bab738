import { Link } from 'react-router';
import type { PathSegment } from '../../api/results';
import { useI18n } from '../../i18n';
import { Icon } from '../ui/icons';

export const folderPath = (id: number) => (id === 0 ? '/' : `/folder/${id}`);

/** The folders from the root down to this one (GetFilesWhitPath's <path>), each a link. */
export function Breadcrumbs({ dirs }: { readonly dirs: readonly PathSegment[] }) {
  const { t } = useI18n();
  return (
    <nav aria-label={t.breadcrumb} className="min-w-0 text-sm">
      <ol className="flex flex-wrap items-center gap-x-1 gap-y-0.5">
        {dirs.map((segment, index) => {
          const last = index === dirs.length - 1;
          const name = segment.id === 0 ? t.allFiles : segment.name;
          return (
            <li key={segment.id} className="flex min-w-0 items-center gap-1">
              {index > 0 && <Icon name="chevronRight" className="size-3.5 text-gray-500" />}
              {last ? (
                <span aria-current="page" className="max-w-48 truncate text-gray-700 dark:text-gray-300" title={name}>
                  {name}
                </span>
              ) : (
                <Link
                  to={folderPath(segment.id)}
                  state={{ name: segment.name }}
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
