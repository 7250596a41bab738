/** The upload pieces that live once in the signed-in layout: the hidden pickers, the page-wide drop zone, the panel, the name-conflict questions. */
import { lazy, Suspense, useEffect, useRef, useState } from 'react';
import { useLocation } from 'react-router';
import { pickerCancelled, takePicked, useUploads, useUploadSnapshot } from '../../uploads/use-uploads';
import { useUploadText } from '../../i18n/uploads';
import { NameConflictHost } from '../dialogs/name-conflict-dialog';

// The panel comes with the upload engine, in a chunk fetched after the first render.
const UploadPanel = lazy(() => import('./upload-panel').then((module) => ({ default: module.UploadPanel })));

/** The folder the page shows: 0 on /, the id on /folder/:id, null elsewhere (search, bin…: no drop target). */
export function folderOfPath(pathname: string): number | null {
  if (pathname === '/' || pathname === '') return 0;
  const match = /^\/folder\/(\d{1,15})\/?$/.exec(pathname);
  return match ? Number(match[1]) : null;
}

export function UploadRoot() {
  const { pathname } = useLocation();
  const folderId = folderOfPath(pathname);
  return (
    <>
      <PickerInput kind="files" folderId={folderId ?? 0} />
      <PickerInput kind="folder" folderId={folderId ?? 0} />
      <PageDropZone folderId={folderId} />
      <LeaveWarning />
      <NameConflictHost />
      <Suspense fallback={null}>
        <UploadPanel />
      </Suspense>
    </>
  );
}

/** Closing the tab while uploading asks first (adding the same files again resumes them, for 24 hours). */
function LeaveWarning() {
  const active = useUploadSnapshot().totals.active > 0;
  useEffect(() => {
    if (!active) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      event.returnValue = ''; // older browsers ask only when this is set
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => window.removeEventListener('beforeunload', onBeforeUnload);
  }, [active]);
  return null;
}

function PickerInput({ kind, folderId }: { readonly kind: 'files' | 'folder'; readonly folderId: number }) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const input = ref.current;
    if (!input) return;
    if (kind === 'folder') input.webkitdirectory = true;
    input.addEventListener('cancel', pickerCancelled);
    return () => input.removeEventListener('cancel', pickerCancelled);
  }, [kind]);
  return (
    <input
      ref={ref}
      type="file"
      multiple
      hidden
      tabIndex={-1}
      aria-hidden="true"
      data-upload-picker={kind}
      data-testid={kind === 'files' ? 'upload-files-input' : 'upload-folder-input'}
      onChange={(event) => takePicked(event.currentTarget, folderId)}
    />
  );
}

const carriesFiles = (event: DragEvent) => Array.from(event.dataTransfer?.types ?? []).includes('Files');

/** Drops anywhere go into the current folder unless a target inside (a folder row) took them; elsewhere a drop does nothing rather than open the file. */
function PageDropZone({ folderId }: { readonly folderId: number | null }) {
  const { addDropped } = useUploads();
  const { u } = useUploadText();
  const [over, setOver] = useState(false);

  useEffect(() => {
    let hideTimer: ReturnType<typeof setTimeout> | undefined;
    // dragover repeats while the pointer is over the page; when it stops (left the window, Escape), hide.
    const keepShowing = () => {
      clearTimeout(hideTimer);
      hideTimer = setTimeout(() => setOver(false), 250);
    };
    const onDragOver = (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      if (event.defaultPrevented) {
        setOver(false); // a folder row takes it
        return;
      }
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = folderId === null ? 'none' : 'copy';
      if (folderId === null) return;
      setOver(true);
      keepShowing();
    };
    const onDrop = (event: DragEvent) => {
      clearTimeout(hideTimer);
      setOver(false);
      if (event.defaultPrevented || !event.dataTransfer || !carriesFiles(event)) return;
      event.preventDefault();
      if (folderId !== null) addDropped(folderId, event.dataTransfer);
    };
    window.addEventListener('dragenter', onDragOver);
    window.addEventListener('dragover', onDragOver);
    window.addEventListener('drop', onDrop);
    return () => {
      clearTimeout(hideTimer);
      window.removeEventListener('dragenter', onDragOver);
      window.removeEventListener('dragover', onDragOver);
      window.removeEventListener('drop', onDrop);
    };
  }, [folderId, addDropped]);

  if (!over || folderId === null) return null;
  return (
    <div
      aria-hidden="true"
      className="pointer-events-none fixed inset-0 z-40 flex items-center justify-center bg-blue-600/10 p-4 outline-4 -outline-offset-8 outline-blue-600 outline-dashed dark:bg-blue-400/10 dark:outline-blue-400"
    >
      <p className="rounded-lg bg-white px-4 py-3 text-center text-base font-medium shadow dark:bg-gray-900">
        {u.dropHere(folderId === 0 ? u.dropRoot : u.dropCurrent)}
      </p>
    </div>
  );
}
