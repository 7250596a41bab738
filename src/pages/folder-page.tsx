import { useEffect, useRef } from 'react';
import { Link, useLocation, useParams, useSearchParams } from 'react-router';
import { DEFAULT_SORT, isSortKey, useFolderListing, type Sort, type SortKey } from '../api/files';
import { ErrorPanel } from '../components/error-panel';
import { FileTable } from '../components/file-list/file-table';
import { Spinner } from '../components/ui/button';
import { useDocumentTitle } from '../hooks/use-document-title';

/** The folder id of the route: /, or /folder/:id with a whole number. */
function useFolderId(): number | null {
  const { id } = useParams();
  if (id === undefined) return 0;
  return /^\d{1,15}$/.test(id) ? Number(id) : null;
}

/** The sort order lives in the URL (?order=size&desc=1), so that it survives reloads and links. */
function useSort(): [Sort, (order: SortKey) => void] {
  const [params, setParams] = useSearchParams();
  const order = params.get('order');
  const sort: Sort = {
    order: isSortKey(order) ? order : DEFAULT_SORT.order,
    desc: params.get('desc') === '1',
  };
  const toggle = (next: SortKey) => {
    const desc = next === sort.order ? !sort.desc : false;
    setParams(
      (current) => {
        const updated = new URLSearchParams(current);
        updated.set('order', next);
        updated.set('desc', desc ? '1' : '0');
        return updated;
      },
      { replace: true },
    );
  };
  return [sort, toggle];
}

export function FolderPage() {
  const dir = useFolderId();
  if (dir === null) {
    return (
      <div role="alert" className="space-y-2">
        <h1 className="text-xl font-semibold">No such folder</h1>
        <p>
          This address does not name a folder. <Link className="text-blue-700 underline dark:text-blue-300" to="/">Go to all files</Link>
        </p>
      </div>
    );
  }
  return <FolderListing key={dir} dir={dir} />;
}

function FolderListing({ dir }: { readonly dir: number }) {
  const location = useLocation();
  const knownName = (location.state as { name?: unknown } | null)?.name;
  const title = dir === 0 ? 'All files' : typeof knownName === 'string' ? knownName : `Folder ${dir}`;
  useDocumentTitle(title);
  const [sort, toggleSort] = useSort();
  const listing = useFolderListing(dir, sort);

  // Moving between folders moves focus to the new folder's heading, as a page load would.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (dir !== 0) heading.current?.focus();
  }, [dir]);

  return (
    <section aria-labelledby="folder-title" className="space-y-4">
      <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <h1 id="folder-title" ref={heading} tabIndex={-1} className="min-w-0 truncate text-xl font-semibold outline-none">
          {title}
        </h1>
        {dir !== 0 && (
          <Link to="/" className="text-sm text-blue-700 hover:underline dark:text-blue-300">
            Back to all files
          </Link>
        )}
        {listing.isFetching && !listing.isPending && (
          <span role="status" className="inline-flex items-center gap-1 text-sm text-gray-500">
            <Spinner /> Updating…
          </span>
        )}
      </div>

      {listing.isPending ? (
        <p role="status" className="flex items-center gap-2 text-gray-600 dark:text-gray-400">
          <Spinner /> Loading…
        </p>
      ) : listing.isError ? (
        <ErrorPanel error={listing.error} subject="this folder" onRetry={() => void listing.refetch()} retrying={listing.isFetching} />
      ) : listing.data.folders.length + listing.data.files.length === 0 ? (
        <p className="rounded-md border border-dashed border-gray-300 p-6 text-center text-gray-600 dark:border-gray-700 dark:text-gray-400">
          This folder is empty.
        </p>
      ) : (
        <>
          <FileTable listing={listing.data} sort={sort} onSort={toggleSort} label={`Contents of ${title}`} />
          <p className="text-sm text-gray-500 dark:text-gray-400">
            {listing.data.folders.length} {listing.data.folders.length === 1 ? 'folder' : 'folders'}, {listing.data.files.length}{' '}
            {listing.data.files.length === 1 ? 'file' : 'files'}
          </p>
        </>
      )}
    </section>
  );
}
