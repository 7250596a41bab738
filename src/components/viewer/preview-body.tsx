import { Suspense, useEffect, useRef, useState } from 'react';
import type { FileItem } from '../../api/results';
import { useI18n } from '../../i18n';
import type { PreviewKind } from '../../lib/preview-kinds';
import { describeError } from '../error-text';
import { Spinner } from '../ui/button';
import { lazyNamed } from '../ui/lazy-named';
import { DetailsPanel } from './details-panel';
import { ImageView } from './image-view';
import type { PreviewSource } from './viewer';

// pdf.js and markdown-it are chunks of their own, fetched with the first PDF or text file.
const PdfView = lazyNamed(() => import('./pdf-view'), 'PdfView');
const TextView = lazyNamed(() => import('./text-view'), 'TextView');

type State = { readonly url?: string; readonly failed?: string };

/** One file's preview: its URL first, then the view of its kind; any failure shows the details. */
export function PreviewBody({ file, kind, source }: { readonly file: FileItem; readonly kind: Exclude<PreviewKind, 'none'>; readonly source: PreviewSource }) {
  const { t } = useI18n();
  const [state, setState] = useState<State>({});
  // One URL per file shown (the viewer keys this by file id): a visitor's may count a download.
  const asked = useRef({ file, source });

  useEffect(() => {
    let live = true;
    asked.current.source.url(asked.current.file).then(
      (url) => live && setState(url ? { url } : { failed: t.previewFailed }),
      (error: unknown) => live && setState({ failed: describeError(error, t).message }),
    );
    return () => {
      live = false;
    };
  }, [t]);

  // No error: the service would not serve the bytes inline (415) or the browser could not show them.
  const fail = (error?: unknown) => setState({ failed: error === undefined ? t.previewFailed : describeError(error, t).message });

  if (state.failed) return <DetailsPanel file={file} folder={source.folder} note={state.failed} onDownload={() => source.download(file)} />;
  const loading = (
    <p role="status" className="m-auto flex items-center gap-2">
      <Spinner /> {t.loadingPreview}
    </p>
  );
  if (!state.url) return loading;
  const url = state.url;
  switch (kind) {
    case 'image':
      return <ImageView url={url} name={file.name} onFail={() => fail()} />;
    case 'video':
      return <video controls src={url} aria-label={file.name} onError={() => fail()} className="m-auto max-h-full max-w-full" />;
    case 'audio':
      return <audio controls src={url} aria-label={file.name} onError={() => fail()} className="m-auto w-full max-w-lg px-4" />;
    case 'pdf':
      return (
        <Suspense fallback={loading}>
          <PdfView url={url} onFail={fail} />
        </Suspense>
      );
    default:
      return (
        <Suspense fallback={loading}>
          <TextView url={url} markdown={kind === 'markdown'} onFail={fail} />
        </Suspense>
      );
  }
}
