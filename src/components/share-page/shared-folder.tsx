// A shared folder, read-only; folder and order are in the address (`?dir=12&order=name&desc=0`) so back/forward and reload work.
// Selecting is for downloading: folders are opened, not downloaded, and opening a file shows it in the viewer.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { DEFAULT_SORT, itemsOf, type SortKey } from '../../api/files';
import type { FileItem, FolderItem, Item } from '../../api/results';
import { visitorShareKeys, shareProblem, visitorShareQueries, useShareDownload, useShareZipDownload } from '../../api/share-service';
import { useSelection } from '../../hooks/use-selection';
import { useSortParam } from '../../hooks/use-sort-param';
import { useViewMode } from '../../hooks/use-view-mode';
import { useI18n } from '../../i18n';
import { notify } from '../../lib/notices';
import { shareCodeStore } from '../../lib/share-code-store';
import { describeError } from '../error-text';
import { ListToolbar } from '../file-browser/sort-control';
import { useListKeys } from '../file-browser/use-list-keys';
import type { ColumnId } from '../file-list/columns';
import { EmptyState } from '../file-list/empty-state';
import { FileList } from '../file-list/file-list';
import { ListingStates, StatusLine } from '../file-list/listing-states';
import { ThumbnailSourceContext } from '../file-list/thumbnail';
import { ToolButton } from '../ui/button';
import { UpdatingNote } from '../page-heading';
import { useSharePreviewSource } from '../viewer/preview-sources';
import { useViewer } from '../viewer/use-viewer';
import { dirFromParams, ShareBreadcrumbs, shareFolderSearch } from './share-breadcrumbs';
import { ShareState } from './share-state';

const COLUMNS: readonly ColumnId[] = ['size', 'time'];
/** Visitors sort by what they can see: the owner's shared and linked marks are not shown. */
const VISITOR_SORT_KEYS: readonly SortKey[] = ['name', 'time', 'size'];

export function SharedFolder({ code, downpwd, root }: { readonly code: string; readonly downpwd: string; readonly root: FolderItem }) {
  const [params] = useSearchParams();
  const dir = dirFromParams(params, root.id);
  return <FolderListing key={dir} code={code} downpwd={downpwd} root={root} dir={dir} />;
}

function FolderListing({ code, downpwd, root, dir }: { readonly code: string; readonly downpwd: string; readonly root: FolderItem; readonly dir: number }) {
  const { t } = useI18n();
  const client = useQueryClient();
  const navigate = useNavigate();
  const { sort, setSort, sortBy } = useSortParam(DEFAULT_SORT);
  const [view, setView] = useViewMode();
  const listing = useQuery({ ...visitorShareQueries.list(code, downpwd, dir, sort), placeholderData: (previous) => previous });
  const items = itemsOf(listing.data);
  const controls = useSelection(items);
  const listId = useId();
  const download = useShareDownload(code, downpwd);
  const zip = useShareZipDownload(code, downpwd);
  const [downloading, setDownloading] = useState(false);
  const thumbnails = useMemo(() => ({ code, downpwd }), [code, downpwd]);

  const trail = useMemo(() => shareCodeStore.trail(code, root.id, root.name, dir), [code, root.id, root.name, dir]);
  const title = dir === 0 ? root.name : trail.at(-1)?.name || t.sharePageFolderUnknown;

  // Moving between folders moves focus to the folder's heading, as a page load would.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (dir !== 0) heading.current?.focus();
  }, [dir]);

  // A folder that is gone, or a code that changed, may mean the share itself changed: ask again.
  const problem = listing.error ? shareProblem(listing.error) : null;
  const problemKind = problem?.kind;
  useEffect(() => {
    if (problemKind === 'not-found' || problemKind === 'code-wrong' || problemKind === 'code-required') {
      void client.invalidateQueries({ queryKey: visitorShareKeys.opens(code) });
    }
  }, [problemKind, client, code]);

  // navigate's promise settles once the route has loaded; the router shows its own errors.
  const goTo = useCallback((folder: number) => void navigate({ search: shareFolderSearch(folder, sort) }), [navigate, sort]);

  // One file as itself; folders, several items or nothing selected (the whole folder) as one ZIP: one download each.
  const downloadItems = useCallback(
    async (items: readonly Item[]) => {
      if (downloading) return;
      const single = items.length === 1 && items[0].type === 'file' ? items[0] : undefined;
      const name = items.length === 1 ? items[0].name : items.length === 0 ? title : t.selectedCount(items.length);
      setDownloading(true);
      try {
        if (single) await download.mutateAsync(single);
        else await zip.mutateAsync({ dir, items });
        notify('info', t.sharePageDownloadStarted(name));
      } catch (error) {
        // The limit: ShareOpen, fetched again, now shows the share's state.
        if (shareProblem(error).kind === 'download-limit') return;
        notify('error', t.sharePageDownloadFailed(name), describeError(error, t, t.sharePageSubjectFile).message);
        if (shareProblem(error).kind === 'not-found') void client.invalidateQueries({ queryKey: visitorShareKeys.lists(code) });
      } finally {
        setDownloading(false);
      }
    },
    [download, zip, dir, title, downloading, t, client, code],
  );

  const downloadFile = useCallback((file: FileItem) => void downloadItems([file]), [downloadItems]);
  const viewer = useViewer(items, useSharePreviewSource(code, downpwd, downloadFile));
  const openItem = useCallback(
    (item: Item) => {
      if (item.type === 'folder') {
        shareCodeStore.rememberFolder(code, item.id, { name: item.name, parent: item.dir });
        goTo(item.id);
      } else {
        viewer.open(item);
      }
    },
    [code, goTo, viewer],
  );

  const parent = trail.length >= 2 ? trail[trail.length - 2] : undefined;
  const goUp = dir !== 0 ? () => goTo(parent && parent.id > 0 ? parent.id : 0) : undefined;
  const onLayout = useListKeys(items, controls, { open: openItem, goUp }, listId);

  return (
    <section aria-labelledby={dir === 0 ? 'share-title' : 'share-folder-title'} className="flex min-h-[26rem] flex-1 flex-col gap-3">
      {dir !== 0 && (
        <div className="space-y-1">
          <ShareBreadcrumbs trail={trail} sort={sort} />
          <h2 id="share-folder-title" ref={heading} tabIndex={-1} className="min-w-0 truncate text-lg font-semibold outline-none">
            {title}
          </h2>
        </div>
      )}

      <ListToolbar sort={sort} setSort={setSort} view={view} setView={setView} keys={VISITOR_SORT_KEYS}>
        <div role="group" aria-label={t.selectionActions} className="flex items-center gap-2">
          <ToolButton
            icon="download"
            label={controls.count > 0 ? t.download : t.sharePageDownloadAll}
            variant="primary"
            wide
            disabled={items.length === 0}
            busy={downloading}
            busyLabel={t.sharePageDownloadPreparing}
            onClick={() => void downloadItems(controls.count > 0 ? controls.selectedItems() : [])}
          />
        </div>
        {listing.isFetching && !listing.isPending && <UpdatingNote />}
      </ListToolbar>

      <ListingStates
        query={listing}
        subject={t.subjectFolder}
        failure={
          (problem?.kind === 'not-found' || problem?.kind === 'locked') && (
            <ShareState
              level={2}
              icon={problem.kind === 'locked' ? 'key' : 'folderOpen'}
              tone="warning"
              title={problem.kind === 'locked' ? t.sharePageFolderLockedTitle : t.sharePageFolderMissingTitle}
              actions={
                <Link to={{ search: shareFolderSearch(0, sort) }} className="text-blue-700 underline dark:text-blue-300">
                  {t.sharePageBackToTop(root.name)}
                </Link>
              }
            >
              <p>{problem.kind === 'locked' ? t.sharePageFolderLockedText : t.sharePageFolderMissingText}</p>
            </ShareState>
          )
        }
        empty={items.length === 0 && <EmptyState icon="folderOpen" title={t.folderEmpty} />}
      >
        <ThumbnailSourceContext value={thumbnails}>
          <FileList
            id={listId}
            items={items}
            controls={controls}
            view={view}
            columns={COLUMNS}
            sort={sort}
            onSort={(order) => VISITOR_SORT_KEYS.includes(order) && sortBy(order)}
            label={t.contentsOf(title)}
            onOpen={openItem}
            onLayout={onLayout}
          />
        </ThumbnailSourceContext>
        <StatusLine selected={controls.count}>
          <span>{t.itemCounts(listing.data?.folders.length ?? 0, listing.data?.files.length ?? 0)}</span>
        </StatusLine>
      </ListingStates>
      {viewer.element}
    </section>
  );
}
