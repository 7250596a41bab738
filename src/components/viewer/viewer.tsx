/**
 * The full-window file viewer (issue 21): a modal <dialog> (the page behind is inert, Escape closes
 * it and focus goes back where it was), previous / next among the folder's files by buttons,
 * arrow keys and a swipe, a download button and the file's details. Each file is shown by the view
 * of its kind (lib/preview-kinds.ts) from a /v/ URL that the source asks the service for.
 */
import { useEffect, useId, useRef, useState, type PointerEvent } from 'react';
import type { FileItem } from '../../api/results';
import { useI18n } from '../../i18n';
import { previewKind } from '../../lib/preview-kinds';
import { ToolButton } from '../ui/button';
import { useModal } from '../ui/dialog';
import { DetailsPanel } from './details-panel';
import { PreviewBody } from './preview-body';

export interface PreviewSource {
  /** The file's /v/ URL (FilePreview, SharePreview); undefined when the user gave up (an unlock cancelled). */
  readonly url: (file: FileItem) => Promise<string | undefined>;
  readonly download: (file: FileItem) => void;
  /** The folder the files are in, as a path (`/A/B`), for the details. */
  readonly folder?: string;
  /** Called when the viewer closes. */
  readonly closed?: () => void;
}

const SWIPE_PX = 50;

export function Viewer({
  files,
  start,
  source,
  onClose,
}: {
  readonly files: readonly FileItem[];
  readonly start: number;
  readonly source: PreviewSource;
  readonly onClose: () => void;
}) {
  const { t } = useI18n();
  const ref = useModal(onClose);
  const titleId = useId();
  const [index, setIndex] = useState(start);
  const [details, setDetails] = useState(false);
  const swipe = useRef<{ x: number; y: number } | null>(null);
  const file = files[Math.min(index, files.length - 1)];
  const kind = previewKind(file.ext);

  const go = (delta: number) => setIndex((current) => Math.max(0, Math.min(files.length - 1, current + delta)));

  // On the document: focus may be on the body when the button that had it went with the last file.
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      // Media controls and fields keep their arrow keys.
      if (event.defaultPrevented || (event.target as Element).closest('video, audio, input, [role="slider"]')) return;
      if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
        event.preventDefault();
        go(event.key === 'ArrowLeft' ? -1 : 1);
      }
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  });
  // A horizontal swipe of a finger moves between files, except on a zoomed image (which it pans).
  const onPointerDown = (event: PointerEvent) => {
    // A second finger makes it a pinch, not a swipe.
    swipe.current = event.pointerType === 'touch' && event.isPrimary && !(event.target as Element).closest('[data-zoomed]') ? { x: event.clientX, y: event.clientY } : null;
  };
  const onPointerUp = (event: PointerEvent) => {
    const from = swipe.current;
    swipe.current = null;
    if (!from || !event.isPrimary) return;
    const dx = event.clientX - from.x;
    if (Math.abs(dx) > SWIPE_PX && Math.abs(dx) > 2 * Math.abs(event.clientY - from.y)) go(dx < 0 ? 1 : -1);
  };

  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      aria-modal="true"
      className="m-0 flex h-dvh max-h-none w-screen max-w-none flex-col bg-gray-950 p-0 text-gray-100 backdrop:bg-black/80"
    >
      <header className="flex items-center gap-2 border-b border-gray-800 px-3 py-2">
        <h2 id={titleId} className="min-w-0 flex-1 truncate font-semibold">
          {t.viewerTitle(file.name, index + 1, files.length)}
        </h2>
        <ToolButton icon="info" label={t.details} aria-pressed={details} onClick={() => setDetails(!details)} />
        <ToolButton icon="download" label={t.download} onClick={() => source.download(file)} />
        <ToolButton icon="close" label={t.closeViewer} data-autofocus onClick={onClose} />
      </header>
      <div className="flex min-h-0 flex-1">
        <div className="relative flex min-w-0 flex-1 flex-col touch-pan-y" onPointerDown={onPointerDown} onPointerUp={onPointerUp} onPointerCancel={() => (swipe.current = null)}>
          {kind === 'none' ? (
            <DetailsPanel file={file} folder={source.folder} note={t.noPreview} onDownload={() => source.download(file)} />
          ) : (
            <PreviewBody key={file.id} file={file} kind={kind} source={source} />
          )}
          {files.length > 1 && (
            <div className="pointer-events-none absolute inset-x-2 top-1/2 flex -translate-y-1/2 justify-between">
              <ToolButton className="pointer-events-auto" icon="chevronLeft" label={t.previousFile} iconOnly disabled={index === 0} onClick={() => go(-1)} />
              <ToolButton className="pointer-events-auto" icon="chevronRight" label={t.nextFile} iconOnly disabled={index === files.length - 1} onClick={() => go(1)} />
            </div>
          )}
        </div>
        {details && kind !== 'none' && (
          <aside className="w-72 shrink-0 overflow-auto border-l border-gray-800 max-sm:absolute max-sm:inset-x-0 max-sm:bottom-0 max-sm:max-h-1/2 max-sm:w-auto max-sm:border-t max-sm:bg-gray-950">
            <DetailsPanel file={file} folder={source.folder} />
          </aside>
        )}
      </div>
    </dialog>
  );
}
