import { getDocument, GlobalWorkerOptions, type PDFDocumentProxy } from 'pdfjs-dist';
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { useI18n } from '../../i18n';
import { Spinner, ToolButton } from '../ui/button';

GlobalWorkerOptions.workerSrc = workerUrl;

/** A PDF with pdf.js, one page at a time fitted to the width; previous / next page and Page Up / Down. */
export function PdfView({ url, onFail }: { readonly url: string; readonly onFail: (error?: unknown) => void }) {
  const { t } = useI18n();
  const canvas = useRef<HTMLCanvasElement>(null);
  const stage = useRef<HTMLDivElement>(null);
  const [pdf, setPdf] = useState<PDFDocumentProxy | null>(null);
  const [page, setPage] = useState(1);
  const fail = useRef(onFail);
  fail.current = onFail;

  useEffect(() => {
    // No eval (the app's CSP forbids it); pdf.js reads the /v/ URL with Range requests.
    const task = getDocument({ url, isEvalSupported: false });
    // A 415 (not a PDF to the service) or unreadable bytes: the details panel.
    task.promise.then(setPdf, () => !task.destroyed && fail.current());
    return () => void task.destroy();
  }, [url]);

  useEffect(() => {
    if (!pdf || !canvas.current || !stage.current) return;
    let render: { cancel: () => void } | undefined;
    const target = canvas.current;
    const width = stage.current.clientWidth - 32;
    void pdf.getPage(page).then((proxy) => {
      const natural = proxy.getViewport({ scale: 1 });
      const ratio = window.devicePixelRatio || 1;
      const viewport = proxy.getViewport({ scale: (Math.min(width, 1200) / natural.width) * ratio });
      target.width = viewport.width;
      target.height = viewport.height;
      target.style.width = `${viewport.width / ratio}px`;
      const task = proxy.render({ canvas: target, viewport });
      render = task;
      task.promise.catch(() => undefined); // cancelled by the next page
    });
    return () => render?.cancel();
  }, [pdf, page]);

  const pages = pdf?.numPages ?? 0;
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'PageDown' && event.key !== 'PageUp') return;
    event.preventDefault();
    setPage((current) => Math.max(1, Math.min(pages, current + (event.key === 'PageDown' ? 1 : -1))));
  };
  return (
    <>
      <div ref={stage} tabIndex={0} className="flex min-h-0 flex-1 overflow-auto p-4" onKeyDown={onKeyDown}>
        {!pdf && <Spinner className="m-auto" />}
        <canvas ref={canvas} aria-label={pages ? t.pageOf(page, pages) : undefined} role="img" className="mx-auto bg-white shadow" hidden={!pdf} />
      </div>
      {pdf && (
        <div className="flex items-center justify-center gap-2 border-t border-gray-800 p-2">
          <ToolButton icon="arrowUp" label={t.previousPage} iconOnly disabled={page <= 1} onClick={() => setPage(page - 1)} />
          <output aria-live="polite" className="text-sm tabular-nums">
            {t.pageOf(page, pages)}
          </output>
          <ToolButton icon="arrowDown" label={t.nextPage} iconOnly disabled={page >= pages} onClick={() => setPage(page + 1)} />
        </div>
      )}
    </>
  );
}
