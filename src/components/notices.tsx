import { useEffect, useRef, type RefObject } from 'react';
import { useRetryingOutage } from '../api/query-client';
import { useI18n } from '../i18n';
import { dismissNotice, holdNotice, latestUndoable, useNotices, type Notice } from '../lib/notices';
import { Icon } from './ui/icons';

/** The room notices take at the bottom of the screen: lists' status lines stand above it (StatusLine), so nothing is covered. */
export const NOTICE_SPACE = '--notice-space';
/** The room the upload panel takes, likewise. */
export const UPLOAD_SPACE = '--upload-space';

/** Keeps `variable` at the height `element` takes from the bottom of the window (0 when it is not at the bottom). */
export function useBottomSpace(element: RefObject<HTMLElement | null>, variable: string): void {
  useEffect(() => {
    const box = element.current;
    if (!box) return;
    // On phones the notices are at the top, where they take no room from the list's bottom.
    const measure = () => {
      const rect = box.getBoundingClientRect();
      const atBottom = rect.height > 0 && rect.bottom > window.innerHeight - 40;
      document.documentElement.style.setProperty(variable, `${atBottom ? Math.ceil(window.innerHeight - rect.top) : 0}px`);
    };
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    window.addEventListener('resize', measure);
    return () => {
      observer.disconnect();
      window.removeEventListener('resize', measure);
      document.documentElement.style.removeProperty(variable);
    };
  }, [element, variable]);
}

/** Errors as alerts that stay until dismissed; the rest polite and going by themselves. Ctrl+Z presses the newest Undo. */
export function Notices() {
  const { t } = useI18n();
  const notices = useNotices();
  const retrying = useRetryingOutage();
  const section = useRef<HTMLElement>(null);

  useBottomSpace(section, NOTICE_SPACE);
  const cards = (kind: Notice['kind']) => notices.filter((notice) => notice.kind === kind).map((notice) => <NoticeCard key={notice.id} notice={notice} />);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key.toLowerCase() !== 'z' || !(event.ctrlKey || event.metaKey) || event.shiftKey || event.altKey) return;
      // A text field keeps its own undo.
      if (event.target instanceof Element && event.target.closest('input, textarea, [contenteditable="true"]')) return;
      const notice = latestUndoable();
      if (!notice?.undo) return;
      event.preventDefault();
      notice.undo();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  return (
    <section
      ref={section}
      aria-label={t.notifications}
      className="pointer-events-none fixed inset-x-2 top-2 z-50 flex flex-col items-stretch gap-2 sm:inset-x-auto sm:top-auto sm:bottom-4 sm:left-4 sm:w-96"
    >
      <div role="status" className="flex flex-col gap-2">
        {retrying && <p className="pointer-events-auto rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 shadow-lg dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100">{t.serviceRetrying}</p>}
        {cards('info')}
      </div>
      <div role="alert" className="flex flex-col gap-2">
        {cards('error')}
      </div>
    </section>
  );
}

function NoticeCard({ notice }: { readonly notice: Notice }) {
  const { t } = useI18n();
  const { id, text, detail, undo } = notice;
  const error = notice.kind === 'error';
  const hold = (held: boolean) => () => holdNotice(id, held);
  return (
    <div
      onPointerEnter={hold(true)}
      onPointerLeave={hold(false)}
      onFocus={hold(true)}
      onBlur={hold(false)}
      className={`pointer-events-auto flex items-start gap-3 rounded-md border p-3 text-sm shadow-lg ${
        error
          ? 'border-red-300 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100'
          : 'border-gray-200 bg-white text-gray-900 dark:border-gray-700 dark:bg-gray-900 dark:text-gray-100'
      }`}
    >
      {error && <Icon name="warning" className="mt-0.5 size-4" />}
      <p className="min-w-0 flex-1 break-words">
        {text}
        {detail && <span className="block">{detail}</span>}
      </p>
      {undo && (
        <button
          type="button"
          onClick={undo}
          aria-keyshortcuts="Control+Z Meta+Z"
          title={t.undoShortcut}
          className="-my-0.5 rounded px-2 py-0.5 font-semibold text-blue-700 hover:bg-blue-50 focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-blue-300 dark:hover:bg-blue-950"
        >
          {t.undo}
        </button>
      )}
      <button
        type="button"
        onClick={() => dismissNotice(id)}
        className="rounded p-0.5 hover:bg-black/10 focus-visible:outline-2 focus-visible:outline-blue-600 dark:hover:bg-white/10"
      >
        <Icon name="close" className="size-4" />
        <span className="sr-only">{t.dismiss}</span>
      </button>
    </div>
  );
}
