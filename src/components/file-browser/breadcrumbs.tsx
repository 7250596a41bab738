import { Link } from 'react-router';
import type { Item, PathSegment } from '../../api/results';
import { useI18n } from '../../i18n';
import { itemKey, parentPath } from '../../lib/items';
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

/** The folder an item is in (its path, "All files (/)" at the root), a link that shows it selected there. */
export function ContainingFolderLink({ item, className, titled = false }: { readonly item: Item; readonly className: string; readonly titled?: boolean }) {
  const { t } = useI18n();
  const where = item.path ? parentPath(item.path) : '/';
  return (
    <Link to={folderPath(item.dir)} state={{ select: itemKey(item) }} title={titled ? `${t.openContainingFolder}: ${where}` : undefined} className={className}>
      {where === '/' ? `${t.allFiles} (/)` : where}
    </Link>
  );
}
