/** The upload panel: each file with progress and pause, resume, cancel; virtualized, so a dropped folder of 10,000 files renders only the rows on screen. */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useId, useRef, useState, type ButtonHTMLAttributes, type CSSProperties, type ReactNode } from 'react';
import { useUploads, useUploadSnapshot } from '../../uploads/use-uploads';
import { useUploadText, type UploadMessages } from '../../i18n/uploads';
import type { Messages } from '../../i18n';
import { formatSize } from '../../lib/format';
import { uploadQueue } from '../../uploads/app-uploads';
import { UPLOAD_SPACE, useBottomSpace } from '../notices';
import { describeError, durationText } from '../error-text';
import { uploadErrorText } from './upload-error-text';
import type { UploadItem, UploadSnapshot, UploadState, UploadTotals } from '../../uploads/types';

const ROW_HEIGHT = 76;
const CROSS = 'M6 6l12 12M18 6 6 18';

/** A row's buttons after Download: the states each is offered in, its label, the queue's call and the icon. */
const ROW_ACTIONS: readonly {
  readonly states: readonly UploadState[];
  readonly label: 'pause' | 'resume' | 'retry' | 'cancelUpload' | 'dismissUpload';
  readonly run: 'pause' | 'resume' | 'cancel' | 'dismiss';
  readonly path: string;
}[] = [
  { states: ['queued', 'hashing', 'uploading'], label: 'pause', run: 'pause', path: 'M9 6v12M15 6v12' },
  { states: ['paused'], label: 'resume', run: 'resume', path: 'M8 5l11 7-11 7z' },
  { states: ['error'], label: 'retry', run: 'resume', path: 'M4 12a8 8 0 1 0 2.3-5.7M4 4v4h4' },
  { states: ['queued', 'hashing', 'checking', 'uploading', 'adding', 'paused'], label: 'cancelUpload', run: 'cancel', path: CROSS },
  { states: ['done', 'cancelled', 'error'], label: 'dismissUpload', run: 'dismiss', path: 'M5 12h14' },
];

const BAR_COLORS: Partial<Record<UploadState, string>> = {
  hashing: 'bg-gray-400 dark:bg-gray-500',
  error: 'bg-red-600 dark:bg-red-500',
  done: 'bg-green-600 dark:bg-green-500',
  paused: 'bg-gray-400 dark:bg-gray-600',
  cancelled: 'bg-gray-400 dark:bg-gray-600',
};
const LIST_MAX_HEIGHT = 'max-h-[min(50vh,22rem)]';

interface Formatters {
  readonly u: UploadMessages;
  readonly t: Messages;
  readonly size: (bytes: number) => string;
  readonly duration: (seconds: number) => string;
}

function useFormatters(): Formatters {
  const { u, t, language } = useUploadText();
  return { u, t, size: (bytes) => formatSize(bytes, language), duration: (seconds) => durationText(seconds, t) };
}

const percentOf = (part: number, whole: number) => (whole > 0 ? Math.min(100, Math.floor((part * 100) / whole)) : 100);

/** The progress bar's value: hashing progress while hashing, else the bytes on the server. */
function itemPercent(item: UploadItem): number {
  if (item.state === 'done') return 100;
  if (item.state === 'hashing') return percentOf(item.hashed, item.size);
  return percentOf(item.uploaded, item.size);
}

function itemStatus(item: UploadItem, f: Formatters, now: number): string {
  const { u } = f;
  if (item.retryAt !== undefined) {
    const seconds = Math.ceil((item.retryAt - now) / 1000);
    return seconds > 0 ? u.retryingIn(seconds) : u.retryingNow;
  }
  switch (item.state) {
    case 'queued':
      return item.folderId === null ? u.stateWaitingFolder : u.stateQueued;
    case 'hashing':
      return u.stateHashing(percentOf(item.hashed, item.size));
    case 'checking':
      return u.stateChecking;
    case 'adding':
      return u.stateAdding;
    case 'done':
      return item.instant ? u.stateInstant : u.stateDone;
    case 'paused':
      return `${u.statePaused} · ${u.sizeOf(f.size(item.uploaded), f.size(item.size))}`;
    case 'cancelled':
      return u.stateCancelled;
    case 'error':
      return uploadErrorText(item.error, u, f.t);
    case 'uploading': {
      const parts = transferParts(f, item.uploaded, item.size, item.speed, item.secondsLeft);
      if (item.resumedFrom !== undefined) parts.push(u.resumedAt(percentOf(item.resumedFrom, item.size)));
      return parts.join(' · ');
    }
  }
}

/** "40% · 4 MB of 10 MB · 1 MB/s · 6 seconds left": a transfer's progress, of one file or of all. */
function transferParts({ u, size, duration }: Formatters, uploaded: number, bytes: number, speed: number, secondsLeft: number | undefined): string[] {
  const parts = [u.percent(percentOf(uploaded, bytes)), u.sizeOf(size(uploaded), size(bytes))];
  if (speed > 0) parts.push(u.speed(size(speed)));
  if (secondsLeft !== undefined) parts.push(u.timeLeft(duration(secondsLeft)));
  return parts;
}

function summary(totals: UploadTotals, u: UploadMessages): string {
  if (totals.active > 0) return u.uploadingCount(totals.done, totals.files);
  if (totals.paused > 0) return u.uploadsPausedCount(totals.paused);
  return u.uploadedAll(totals.done);
}

/** Re-renders every second while a retry countdown is shown. */
function useTicker(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return active ? now : Date.now();
}

export function UploadPanel() {
  const snapshot = useUploadSnapshot();
  // The live region is in the panel, which shows as soon as a file is added, well before the first announcement.
  if (snapshot.items.length === 0 && snapshot.interrupted.length === 0) return null;
  return <UploadPanelBox snapshot={snapshot} />;
}

function UploadPanelBox({ snapshot }: { readonly snapshot: UploadSnapshot }) {
  const f = useFormatters();
  const { u } = f;
  const [expanded, setExpanded] = useState(true);
  const titleId = useId();
  const listId = useId();
  const announcement = useAnnouncements(snapshot, u);
  const now = useTicker(snapshot.items.some((item) => item.retryAt !== undefined));
  const box = useRef<HTMLElement>(null);
  // Lists end above the panel (StatusLine), so it covers no row and no column.
  useBottomSpace(box, UPLOAD_SPACE);

  const { items, totals, interrupted } = snapshot;
  // Everything done without a failure: the panel folds into a chip, until it is reopened or another upload starts.
  const allDone = totals.done > 0 && totals.active === 0 && totals.paused === 0 && totals.failed === 0 && interrupted.length === 0;
  const [reopened, setReopened] = useState(false);
  const [wasAllDone, setWasAllDone] = useState(allDone);
  if (wasAllDone !== allDone) {
    setWasAllDone(allDone);
    setReopened(false);
  }
  const clearAll = () => {
    uploadQueue.clearFinished();
    for (const item of items) if (item.state === 'error') uploadQueue.dismiss(item.id);
  };

  const folded = allDone && !reopened;

  const anyActive = totals.active > 0;
  const anyPausable = items.some((item) => item.state === 'queued' || item.state === 'hashing' || item.state === 'uploading');
  const anyPaused = totals.paused > 0;
  const anyFinished = items.some((item) => item.state === 'done' || item.state === 'cancelled');
  const overall = percentOf(totals.uploaded, totals.bytes);
  const overallText = transferParts(f, totals.uploaded, totals.bytes, anyActive ? totals.speed : 0, anyActive ? totals.secondsLeft : undefined).join(' · ');

  return (
    <section
      ref={box}
      aria-labelledby={titleId}
      data-testid="upload-panel"
      data-folded={folded || undefined}
      className={`fixed inset-x-0 bottom-0 z-30 border-t border-gray-200 bg-white shadow-lg sm:inset-x-auto sm:right-4 sm:bottom-4 sm:rounded-lg sm:border dark:border-gray-700 dark:bg-gray-900 ${folded ? 'pb-2 sm:w-auto' : 'sm:w-[26rem]'}`}
    >
      <p role="status" className="sr-only">
        {announcement}
      </p>
      <div className="flex items-center gap-2 px-3 pt-2">
        <h2 id={titleId} className="min-w-0 flex-1 truncate text-sm font-semibold">
          {items.length > 0 ? summary(totals, u) : u.interruptedTitle}
          {totals.failed > 0 && <span className="ml-2 font-normal text-red-700 dark:text-red-400">{u.failedCount(totals.failed)}</span>}
        </h2>
        {/* Folded, the panel is a chip: its summary, Show (which unfolds it) and Close. */}
        <IconButton
          label={expanded && !folded ? u.hideUploads : u.showUploads}
          aria-expanded={expanded && !folded}
          aria-controls={listId}
          onClick={() => {
            setReopened(true);
            setExpanded(folded || !expanded);
          }}
        >
          <path d={expanded && !folded ? 'M6 9l6 6 6-6' : 'M6 15l6-6 6 6'} />
        </IconButton>
        {!anyActive && !anyPaused && (
          <IconButton label={u.closePanel} onClick={clearAll}>
            <path d={CROSS} />
          </IconButton>
        )}
      </div>

      {items.length > 0 && (
        <div className="px-3 pt-1 pb-2" hidden={folded}>
          <ProgressBar label={u.overallProgress} value={overall} valueText={overallText} testId="upload-overall" />
          <p className="mt-1 truncate text-xs text-gray-600 dark:text-gray-400" aria-hidden="true">
            {overallText}
          </p>
        </div>
      )}

      <div id={listId} hidden={!expanded || folded}>
        {items.length > 0 && (
          <div className="flex flex-wrap gap-x-3 gap-y-1 border-t border-gray-100 px-3 py-1.5 text-xs dark:border-gray-800">
            {anyPausable && <TextButton onClick={uploadQueue.pauseAll}>{u.pauseAll}</TextButton>}
            {anyPaused && <TextButton onClick={uploadQueue.resumeAll}>{u.resumeAll}</TextButton>}
            {(anyActive || anyPaused) && <TextButton onClick={uploadQueue.cancelAll}>{u.cancelAll}</TextButton>}
            {anyFinished && <TextButton onClick={uploadQueue.clearFinished}>{u.clearFinished}</TextButton>}
          </div>
        )}
        {items.length > 0 && <UploadList items={items} f={f} now={now} label={u.uploadsList} />}
        {interrupted.length > 0 && (
          <div className="border-t border-gray-100 px-3 py-2 text-sm dark:border-gray-800">
            {items.length > 0 && <h3 className="font-medium">{u.interruptedTitle}</h3>}
            <p className="text-xs text-gray-600 dark:text-gray-400">{u.interruptedHint}</p>
            <ul className={`mt-1 overflow-y-auto ${LIST_MAX_HEIGHT}`}>
              {interrupted.map((record) => (
                <li key={record.key} className="flex items-center gap-2 py-0.5">
                  <span className="min-w-0 flex-1 truncate" title={record.name}>
                    {record.name}
                  </span>
                  <span className="shrink-0 text-xs text-gray-500">{f.size(record.size)}</span>
                  <IconButton label={u.discardInterrupted(record.name)} onClick={() => uploadQueue.discardInterrupted(record.key)}>
                    <path d={CROSS} />
                  </IconButton>
                </li>
              ))}
            </ul>
          </div>
        )}
      </div>
    </section>
  );
}

function UploadList({ items, f, now, label }: { readonly items: readonly UploadItem[]; readonly f: Formatters; readonly now: number; readonly label: string }) {
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 6,
    getItemKey: (index) => items[index].id,
    // Before the first measurement (and in tests without layout), render the first rows.
    initialRect: { width: 400, height: ROW_HEIGHT * 5 },
  });
  return (
    <div ref={scroller} className={`overflow-y-auto border-t border-gray-100 dark:border-gray-800 ${LIST_MAX_HEIGHT}`}>
      <ul aria-label={label} className="relative" style={{ height: virtualizer.getTotalSize() }}>
        {virtualizer.getVirtualItems().map((row) => (
          <UploadRow
            key={row.key}
            item={items[row.index]}
            f={f}
            now={now}
            style={{ transform: `translateY(${row.start}px)`, height: ROW_HEIGHT }}
            position={row.index + 1}
            count={items.length}
          />
        ))}
      </ul>
    </div>
  );
}

function UploadRow({
  item,
  f,
  now,
  style,
  position,
  count,
}: {
  readonly item: UploadItem;
  readonly f: Formatters;
  readonly now: number;
  readonly style: CSSProperties;
  readonly position: number;
  readonly count: number;
}) {
  const { u } = f;
  const { downloadFile } = useUploads();
  const [downloadError, setDownloadError] = useState<string>();
  const status = downloadError ?? itemStatus(item, f, now);
  const name = item.relativePath ?? item.name;
  const failed = item.state === 'error';

  return (
    <li
      className="absolute inset-x-0 top-0 flex flex-col justify-center gap-1 border-b border-gray-100 px-3 last:border-b-0 dark:border-gray-800"
      style={style}
      aria-setsize={count}
      aria-posinset={position}
      data-state={item.state}
      data-testid="upload-item"
    >
      <div className="flex min-w-0 items-center gap-1">
        <span className="min-w-0 flex-1 truncate text-sm font-medium" title={name}>
          {name}
        </span>
        <span className="shrink-0 text-xs text-gray-500 dark:text-gray-400">{f.size(item.size)}</span>
        {item.state === 'done' && item.file && (
          <IconButton
            label={u.downloadUploaded(name)}
            onClick={() => {
              setDownloadError(undefined);
              downloadFile(item.file!.id).catch((error: unknown) => setDownloadError(u.downloadFailed(describeError(error, f.t).message)));
            }}
          >
            <path d="M12 4v12M7 11l5 5 5-5M4 16v3a1 1 0 0 0 1 1h14a1 1 0 0 0 1-1v-3" />
          </IconButton>
        )}
        {ROW_ACTIONS.filter(({ states }) => states.includes(item.state)).map(({ label, run, path }) => (
          <IconButton key={label} label={u[label](name)} onClick={() => uploadQueue[run](item.id)}>
            <path d={path} />
          </IconButton>
        ))}
      </div>
      <ProgressBar label={name} value={itemPercent(item)} valueText={status} barClass={BAR_COLORS[item.state] ?? 'bg-blue-600 dark:bg-blue-400'} />
      <p className={`truncate text-xs ${failed ? 'text-red-700 dark:text-red-400' : 'text-gray-600 dark:text-gray-400'}`} title={status}>
        {status}
      </p>
    </li>
  );
}

function ProgressBar({
  label,
  value,
  valueText,
  barClass = 'bg-blue-600 dark:bg-blue-400',
  testId,
}: {
  readonly label: string;
  readonly value: number;
  readonly valueText: string;
  readonly barClass?: string;
  readonly testId?: string;
}) {
  return (
    <div
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={value}
      aria-valuetext={valueText}
      data-testid={testId}
      className="h-1.5 w-full overflow-hidden rounded-full bg-gray-200 dark:bg-gray-700"
    >
      {/* No transition: the value changes a few times a second while a file uploads, and animating
          each change would lay out and paint the page every frame (issue 19: the upload's own CPU). */}
      <div className={`h-full rounded-full ${barClass}`} style={{ width: `${value}%` }} />
    </div>
  );
}

function IconButton({ label, children, ...rest }: { readonly label: string; readonly children: ReactNode } & ButtonHTMLAttributes<HTMLButtonElement>) {
  return (
    <button
      type="button"
      aria-label={label}
      title={label}
      className="inline-flex size-8 shrink-0 items-center justify-center rounded-md text-gray-600 hover:bg-gray-100 hover:text-gray-900 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-blue-600 dark:text-gray-300 dark:hover:bg-gray-800 dark:hover:text-white"
      {...rest}
    >
      <svg viewBox="0 0 24 24" className="size-4" fill="none" stroke="currentColor" strokeWidth={2} strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
        {children}
      </svg>
    </button>
  );
}

function TextButton({ children, onClick }: { readonly children: ReactNode; readonly onClick: () => void }) {
  return (
    <button
      type="button"
      onClick={onClick}
      className="rounded px-1 py-1 font-medium text-blue-700 hover:underline focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-blue-300"
    >
      {children}
    </button>
  );
}

/** What a screen reader hears: each file that finishes or fails, and the end of all uploads (not every percent). */
function useAnnouncements(snapshot: UploadSnapshot, u: UploadMessages): string {
  const previous = useRef(new Map<string, UploadItem['state']>());
  const [text, setText] = useState('');
  useEffect(() => {
    const messages: string[] = [];
    const seen = new Map<string, UploadItem['state']>();
    for (const item of snapshot.items) {
      seen.set(item.id, item.state);
      const before = previous.current.get(item.id);
      if (before === item.state) continue;
      if (item.state === 'done') messages.push(u.announceUploaded(item.name));
      else if (item.state === 'error') messages.push(u.announceFailed(item.name));
    }
    const wasActive = [...previous.current.values()].some((state) => state !== 'done' && state !== 'error' && state !== 'cancelled' && state !== 'paused');
    previous.current = seen;
    if (wasActive && snapshot.totals.active === 0 && snapshot.totals.done > 1) messages.push(u.announceAllDone(snapshot.totals.done));
    // Many files finishing at once are summed up, not read one by one.
    if (messages.length > 3) setText(messages[messages.length - 1]);
    else if (messages.length > 0) setText(messages.join(' '));
  }, [snapshot, u]);
  return text;
}
