/** Snapshots of the queue for the components, announced at most every `progressIntervalMs`, and each file's recent speed. */
import { createListeners } from '../lib/listeners';
import type { Entry } from './entry';
import { ACTIVE_STATES, type InterruptedUpload, type UploadItem, type UploadSnapshot, type UploadTotals } from './types';

export const DEFAULT_PROGRESS_INTERVAL_MS = 200;
/** State changes are shown this soon (together with whatever else changed meanwhile). */
const URGENT_DELAY_MS = 50;
/** Speed is measured over this window. */
const SPEED_WINDOW_MS = 5_000;
const MIN_SPEED_SPAN_MS = 400;

export type Progress = ReturnType<typeof createProgress>;

export function createProgress(options: {
  readonly now: () => number;
  readonly progressIntervalMs: number;
  readonly entries: () => readonly Entry[];
  readonly interrupted: () => readonly InterruptedUpload[];
}) {
  const { now, progressIntervalMs, entries, interrupted } = options;
  const listeners = createListeners();
  let snapshot: UploadSnapshot = { items: [], totals: totalsOf([]), interrupted: [] };
  let lastEmit = -Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let dueAt = Infinity;
  const urgentDelayMs = Math.min(URGENT_DELAY_MS, progressIntervalMs);

  /** Changes are batched, so 10,000 small files finishing one after another cost a few announcements a second. */
  function changed(entry: Entry | null, urgent: boolean) {
    if (entry) entry.dirty = true;
    const due = lastEmit + (urgent ? urgentDelayMs : progressIntervalMs);
    if (timer !== undefined && dueAt <= due) return;
    if (timer !== undefined) clearTimeout(timer);
    dueAt = due;
    timer = setTimeout(emit, Math.max(0, due - now()));
  }

  function emit() {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    dueAt = Infinity;
    const time = now();
    lastEmit = time;
    const items = entries().map((entry) => {
      if (entry.dirty || entry.state === 'uploading' || !entry.view) {
        entry.view = viewOf(entry, time);
        entry.dirty = false;
      }
      return entry.view;
    });
    snapshot = { items, totals: totalsOf(items), interrupted: interrupted() };
    listeners.emit();
    // Keep speed and time left current while something transfers, even between progress events.
    if (entries().some((entry) => entry.state === 'uploading')) changed(null, false);
  }

  return {
    changed,
    snapshot: () => snapshot,
    subscribe: listeners.subscribe,
  };
}

/** Bytes per second over the last SPEED_WINDOW_MS. */
export function speedOf(entry: Entry, time: number): number {
  const samples = entry.samples;
  while (samples.length > 1 && time - samples[0][0] > SPEED_WINDOW_MS) samples.shift();
  if (samples.length === 0) return 0;
  const [startTime, startBytes] = samples[0];
  const span = time - startTime;
  if (span < MIN_SPEED_SPAN_MS) return entry.view?.speed ?? 0;
  return Math.max(0, ((entry.uploaded - startBytes) * 1000) / span);
}

/** Notes the bytes sent so far for the speed (at most one sample per 100 ms). */
export function sample(entry: Entry, time: number) {
  const last = entry.samples[entry.samples.length - 1];
  if (last && time - last[0] < 100) return;
  entry.samples.push([time, entry.uploaded]);
}

function viewOf(entry: Entry, time: number): UploadItem {
  const speed = entry.state === 'uploading' ? speedOf(entry, time) : 0;
  const left = entry.source.size - entry.uploaded;
  const view: UploadItem = {
    id: entry.id,
    name: entry.source.name,
    relativePath: entry.relativePath,
    size: entry.source.size,
    folderId: entry.folderId,
    state: entry.state,
    hashed: entry.hashed,
    uploaded: entry.uploaded,
    speed,
    secondsLeft: speed > 0 ? left / speed : undefined,
    resumedFrom: entry.resumedFrom,
    instant: entry.instant,
    retryAt: ACTIVE_STATES.has(entry.state) ? entry.retryAt : undefined,
    error: entry.error,
    file: entry.file,
  };
  const old = entry.view;
  if (old && (Object.keys(view) as Array<keyof UploadItem>).every((key) => old[key] === view[key])) return old;
  return view;
}
function totalsOf(items: readonly UploadItem[]): UploadTotals {
  let files = 0;
  let done = 0;
  let failed = 0;
  let active = 0;
  let paused = 0;
  let bytes = 0;
  let uploaded = 0;
  let speed = 0;
  let remaining = 0;
  for (const item of items) {
    if (item.state === 'cancelled') continue;
    files++;
    bytes += item.size;
    uploaded += item.state === 'done' ? item.size : item.uploaded;
    speed += item.speed;
    if (item.state === 'done') done++;
    else if (item.state === 'error') failed++;
    else if (item.state === 'paused') paused++;
    else {
      active++;
      remaining += item.size - item.uploaded;
    }
  }
  return { files, done, failed, active, paused, bytes, uploaded, speed, secondsLeft: speed > 0 ? remaining / speed : undefined };
}
