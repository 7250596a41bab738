/** A folder: / or /folder/:id, sorted by the query string. GetFilesWhitPath gives items and breadcrumbs in one call. */
import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useId, useRef } from 'react';
import { Link, useLocation, useNavigate, useParams, type LoaderFunctionArgs } from 'react-router';
import { lockOf } from '../api/encryption';
import { isApiError } from '../api/errors';
import { queryClient } from '../api/query-client';
import { session } from '../api/session';
import { DEFAULT_SORT, fileQueries, itemsOf } from '../api/files';
import type { FolderItem, Item } from '../api/results';
import { LockedFolderPrompt } from '../components/encryption/unlock-form';
import { FolderBreadcrumbs, folderPath } from '../components/file-browser/breadcrumbs';
import { useRowDrops } from '../components/file-browser/drop-move';
import { useItemActions } from '../components/file-browser/item-actions';
import { SelectionTools, useContextMenu } from '../components/file-browser/selection-tools';
import { ListToolbar } from '../components/file-browser/sort-control';
import { useListKeys } from '../components/file-browser/use-list-keys';
import { useOwnerPreviewSource } from '../components/viewer/preview-sources';
import { useViewer } from '../components/viewer/use-viewer';
import type { ColumnId } from '../components/file-list/columns';
import { EmptyState } from '../components/file-list/empty-state';
import { FileList } from '../components/file-list/file-list';
import { prefixQuery } from '../components/file-list/thumbnail';
import { ListingStates, StatusLine } from '../components/file-list/listing-states';
import { PageHeading } from '../components/page-heading';
import { LineSkeleton } from '../components/file-list/skeleton';
import { Spinner, ToolButton } from '../components/ui/button';
import { useDocumentTitle } from '../hooks/use-document-title';
import { useSelection } from '../hooks/use-selection';
import { sortFromParams, useSortParam } from '../hooks/use-sort-param';
import { useUploads } from '../uploads/use-uploads';
import { useViewMode } from '../hooks/use-view-mode';
import { useI18n } from '../i18n';
import { itemKey } from '../lib/items';

const COLUMNS: readonly ColumnId[] = ['size', 'time'];

/** What other pages may ask of the folder page when they link to it. */
export interface FolderLinkState {
  /** The folder's name, for the title until the listing arrives. */
  readonly name?: string;
  /** An item key (lib/items.ts) to select and scroll to: a search result shown in its folder. */
  readonly select?: string;
}

/** The folder id of the route: /, or /folder/:id with a whole number; null for anything else. */
const folderIdOf = (id: string | undefined): number | null => (id === undefined ? 0 : /^\d{1,15}$/.test(id) ? Number(id) : null);
const useFolderId = () => folderIdOf(useParams().id);

/** The route's loader: the listing and the thumbnail prefix are asked for together as the route matches, before the page renders. */
export function prefetchFolder({ params, request }: LoaderFunctionArgs): null {
  const dir = folderIdOf(params.id);
  if (dir === null || !session.get()) return null;
  void queryClient.prefetchQuery(fileQueries.withPath(dir, sortFromParams(new URL(request.url).searchParams, DEFAULT_SORT)));
  void queryClient.prefetchQuery(prefixQuery('owner'));
  return null;
}

export function FolderPage() {
  const { t } = useI18n();
  const dir = useFolderId();
  if (dir === null) {
    return (
      <div role="alert" className="space-y-2">
        <h1 className="text-xl font-semibold">{t.noSuchFolder}</h1>
        <p>
          {t.noSuchFolderText}{' '}
          <Link className="text-blue-700 underline dark:text-blue-300" to="/">
            {t.goToFiles}
          </Link>
        </p>
      </div>
    );
  }
  return <FolderView key={dir} dir={dir} />;
}

function FolderView({ dir }: { readonly dir: number }) {
  const { t } = useI18n();
  const location = useLocation();
  const navigate = useNavigate();
  const uploads = useUploads();
  const linkState = (location.state ?? {}) as FolderLinkState;
  const { sort, setSort, sortBy } = useSortParam(DEFAULT_SORT);
  const [view, setView] = useViewMode();
  const listing = useQuery({ ...fileQueries.withPath(dir, sort), placeholderData: (previous) => previous });
  const items = itemsOf(listing.data);
  // A big listing shows its first items while the rest arrive (api/files.ts).
  const arriving = listing.data?.partial ? listing.data.count : undefined;
  // A locked folder (423) asks for its password in place of the listing.
  const lock = listing.isError ? lockOf(listing.error) : null;
  // Nothing can be added to a locked (423) or missing (404) folder; its breadcrumb still leads back to All files.
  const closed = lock !== null || isApiError(listing.error, 'NotFound');
  const controls = useSelection(items);
  const listId = useId();

  const dirs = listing.data?.path.dirs;
  const title =
    dir === 0 ? t.allFiles : (dirs?.at(-1)?.name ?? (typeof linkState.name === 'string' ? linkState.name : t.folderNamed(dir)));
  useDocumentTitle(title);

  // Moving between folders moves focus to the new folder's heading, as a page load would.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (dir !== 0) heading.current?.focus();
  }, [dir]);

  // Select an item once it is listed: a search result shown here, a folder just created.
  const pendingSelect = useRef<string[] | null>(typeof linkState.select === 'string' ? [linkState.select] : null);
  const { list, selectKeys } = controls;
  useEffect(() => {
    const keys = pendingSelect.current;
    if (keys && keys.every((key) => list.position.has(key))) {
      pendingSelect.current = null;
      selectKeys(keys);
    }
  }, [list, selectKeys]);

  const viewer = useViewer(items, useOwnerPreviewSource(dirs && `/${dirs.filter((segment) => segment.id !== 0).map((segment) => segment.name).join('/')}`));
  const openItem = useCallback(
    (item: Item) => {
      // navigate's promise settles once the route has loaded; the router shows its own errors.
      if (item.type === 'folder') void navigate(folderPath(item.id), { state: { name: item.name } satisfies FolderLinkState });
      else viewer.open(item);
    },
    [navigate, viewer],
  );
  const parent = dirs && dirs.length >= 2 ? dirs[dirs.length - 2] : undefined;
  const goUp = parent ? () => void navigate(folderPath(parent.id), { state: { name: parent.name } satisfies FolderLinkState }) : undefined;

  const actions = useItemActions(controls, {
    primary: { label: t.open, run: openItem },
    preview: viewer.open,
    pathIds: dirs?.map((segment) => segment.id),
    onFolderCreated: (folder) => {
      pendingSelect.current = [itemKey(folder)];
    },
  });
  const contextMenu = useContextMenu(actions);
  const onLayout = useListKeys(items, controls, { open: openItem, goUp, remove: actions.remove, rename: actions.rename }, listId, actions.request === null);
  const onDropOnFolder = useCallback((folder: FolderItem, data: DataTransfer) => uploads.addDropped(folder.id, data), [uploads]);
  const rowDrops = useRowDrops(dirs);

  return (
    <section aria-labelledby="folder-title" className="flex min-h-0 flex-1 flex-col gap-3">
      <PageHeading
        id="folder-title"
        title={title}
        above={
          dirs ? <FolderBreadcrumbs dirs={dirs} drops={rowDrops} /> : closed ? <FolderBreadcrumbs dirs={[{ id: 0, name: '' }, { id: dir, name: title }]} /> : dir !== 0 && !listing.isError && <LineSkeleton />
        }
        updating={listing.isFetching && !listing.isPending && arriving === undefined}
        headingRef={heading}
      />

      <ListToolbar sort={sort} setSort={setSort} view={view} setView={setView}>
        <div role="group" aria-label={t.folderActions} className="flex flex-wrap items-center gap-2">
          <ToolButton icon="plusFolder" label={t.newFolder} variant="primary" disabled={closed} onClick={() => actions.open({ kind: 'new-folder', dir })} />
          <ToolButton icon="upload" label={t.upload} disabled={closed} onClick={() => uploads.pickFiles(dir)} />
          <ToolButton icon="uploadFolder" label={t.uploadFolder} disabled={closed} onClick={() => uploads.pickFolder(dir)} />
        </div>
        <div role="group" aria-label={t.selectionActions} className="flex flex-wrap items-center gap-2">
          <SelectionTools actions={actions} count={controls.count} />
        </div>
      </ListToolbar>

      <ListingStates
        query={listing}
        subject={t.subjectFolder}
        failure={
          lock && (
            <LockedFolderPrompt lock={lock} folder={{ type: 'folder', id: dir }} onUnlocked={() => heading.current?.focus()} />
          )
        }
        empty={
          items.length === 0 && (
            <EmptyState icon="folderOpen" title={t.folderEmpty}>
              {t.folderEmptyHint}
            </EmptyState>
          )
        }
      >
        <FileList
          id={listId}
          items={items}
          total={arriving}
          controls={controls}
          view={view}
          columns={COLUMNS}
          sort={sort}
          onSort={sortBy}
          label={t.contentsOf(title)}
          onOpen={openItem}
          onContextMenu={contextMenu.openAt}
          onDropOnFolder={onDropOnFolder}
          rowDrops={rowDrops}
          onLayout={onLayout}
        />
        <StatusLine selected={controls.count}>
          {arriving === undefined ? (
            <span>{t.itemCounts(listing.data?.folders.length ?? 0, listing.data?.files.length ?? 0)}</span>
          ) : (
            // Not a live region: it changes several times a second; the list says aria-busy.
            <span className="inline-flex items-center gap-1">
              <Spinner /> {t.itemsArriving(items.length, arriving)}
            </span>
          )}
        </StatusLine>
      </ListingStates>
      {actions.dialogs}
      {contextMenu.element}
      {viewer.element}
    </section>
  );
}
