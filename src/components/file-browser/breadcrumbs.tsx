import { useEffect, useRef, useState, type DragEvent } from 'react';
import { Link } from 'react-router';
import type { Item, PathSegment } from '../../api/results';
import { useI18n } from '../../i18n';
import { itemKey, parentPath } from '../../lib/items';
import { Breadcrumbs } from '../ui/breadcrumbs';
import { draggedRows, endRowDrag, onRowDragEnd } from '../file-list/row-drag';
import type { RowDrops } from './drop-move';

export const folderPath = (id: number) => (id === 0 ? '/' : `/folder/${id}`);

const crumbIndex = (event: DragEvent) => {
  const crumb = event.target instanceof Element ? event.target.closest('li') : null;
  return crumb?.parentElement ? [...crumb.parentElement.children].indexOf(crumb) : -1;
};

/** The folders from the root down to this one (GetFilesWhitPath's <path>), each a link; with `drops`, each takes dragged rows too. */
export function FolderBreadcrumbs({ dirs, drops }: { readonly dirs: readonly PathSegment[]; readonly drops?: RowDrops }) {
  const { t } = useI18n();
  const crumbs = dirs.map((segment) => ({
    key: String(segment.id),
    name: segment.id === 0 ? t.allFiles : segment.name,
    to: folderPath(segment.id),
    state: { name: segment.name },
  }));
  const box = useRef<HTMLDivElement>(null);
  const [target, setTarget] = useState<{ readonly index: number; readonly tone: 'accept' | 'refuse' } | null>(null);
  useEffect(() => onRowDragEnd(() => setTarget(null)), []);
  // The crumbs are ui/breadcrumbs' elements: the one under the drag is marked here, and styled by the wrapper's classes.
  useEffect(() => {
    box.current?.querySelectorAll('li').forEach((crumb, index) => {
      if (index === target?.index) crumb.dataset.drop = target.tone;
      else delete crumb.dataset.drop;
    });
  }, [target]);

  const targetOf = (event: DragEvent) => {
    const rows = drops && draggedRows(event);
    const index = rows ? crumbIndex(event) : -1;
    const refusal = rows && index >= 0 && index < drops.crumbs.length ? drops.refusal(drops.crumbs[index], rows) : 'alreadyThere';
    return refusal === 'alreadyThere' || !rows ? null : { index, rows, tone: refusal === 'intoItself' ? ('refuse' as const) : ('accept' as const) };
  };
  const onDragOver = (event: DragEvent) => {
    const over = targetOf(event);
    setTarget(over && { index: over.index, tone: over.tone });
    if (!over) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'move';
  };
  const onDrop = (event: DragEvent) => {
    const over = targetOf(event);
    setTarget(null);
    if (!over || !drops) return;
    event.preventDefault();
    endRowDrag();
    drops.drop(drops.crumbs[over.index], over.rows);
  };
  return (
    <div
      ref={box}
      onDragOver={onDragOver}
      onDragLeave={(event) => !event.currentTarget.contains(event.relatedTarget as Node | null) && setTarget(null)}
      onDrop={onDrop}
      className="min-w-0 [&_li[data-drop]_a]:ring-2 [&_li[data-drop=accept]_a]:bg-blue-100 [&_li[data-drop=accept]_a]:ring-blue-500 dark:[&_li[data-drop=accept]_a]:bg-blue-900 [&_li[data-drop=refuse]_a]:bg-red-50 [&_li[data-drop=refuse]_a]:ring-red-500 dark:[&_li[data-drop=refuse]_a]:bg-red-950"
    >
      <Breadcrumbs crumbs={crumbs} />
    </div>
  );
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
