import type { PathSegment } from '../../api/results';
import { useI18n } from '../../i18n';
import { Breadcrumbs } from '../ui/breadcrumbs';

export const folderPath = (id: number) => (id === 0 ? '/' : `/folder/${id}`);

/** The folders from the root down to this one (GetFilesWhitPath's <path>), each a link. */
export function FolderBreadcrumbs({ dirs }: { readonly dirs: readonly PathSegment[] }) {
  const { t } = useI18n();
  const crumbs = dirs.map((segment) => ({
    key: String(segment.id),
    name: segment.id === 0 ? t.allFiles : segment.name,
    to: folderPath(segment.id),
    state: { name: segment.name },
  }));
  return <Breadcrumbs crumbs={crumbs} />;
}
