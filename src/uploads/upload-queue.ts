// The upload engine: at most `concurrency` files under way, knowing nothing of React or the DOM, so tests drive it with fakes.
// Its parts: file-run.ts, instant-upload.ts, transfer.ts, resume-records.ts, retries.ts, progress.ts (docs/web-uploads.md).
import type { FileItem, FolderItem } from '../api/results';
import type { Engine } from './engine';
import type { Entry } from './entry';
import { errorOf } from './failures';
import { runFile } from './file-run';
import { createFolderResolver } from './folder-tree';
import { createProgress, DEFAULT_PROGRESS_INTERVAL_MS } from './progress';
import { createResumeRecords, memoryResumeStore } from './resume-records';
import { createRetries, defaultSleep, DEFAULT_RETRY_DELAYS_MS } from './retries';
import { DEFAULT_CHUNK_BYTES } from './transfer';
import { ACTIVE_STATES, type Hasher, type ResumeStore, type UploadSnapshot, type UploadSource, type UploadTransport } from './types';

export const DEFAULT_CONCURRENCY = 3;

export interface UploadQueueOptions {
  readonly transport: UploadTransport;
  readonly hasher: Hasher;
  /** Where unfinished uploads are remembered; by default only in memory (no resume after a reload). */
  readonly store?: ResumeStore;
  /** Whose uploads these are (the account id): records of other accounts are neither used nor shown. */
  readonly scope?: () => string;
  readonly concurrency?: number;
  readonly chunkBytes?: number;
  readonly progressIntervalMs?: number;
  readonly retryDelaysMs?: readonly number[];
  readonly now?: () => number;
  /** Waits `ms`, or rejects when `signal` aborts. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A file was added (FileAdd succeeded): listings of its folder are out of date. */
  readonly onFileAdded?: (file: FileItem) => void;
  /** A folder was created for a dropped or picked folder tree. */
  readonly onFolderAdded?: (folder: FolderItem) => void;
}

export interface UploadRequest {
  readonly source: UploadSource;
  /** The destination (0 = root), or a function answering it once created (called again on retry). */
  readonly folder: number | (() => Promise<number>);
  /** Shown instead of the name: the path below a dropped or picked folder. */
  readonly relativePath?: string;
  /** Called once FileAdd has added the file (a replace then bins the old one: app-uploads.ts). */
  readonly onAdded?: (file: FileItem) => void;
}

/** A file of a dropped or picked folder, with the folders it lies in below the drop target. */
export interface TreeFile {
  readonly source: UploadSource;
  /** Folder names from the dropped folder down to the file's own folder; empty for a loose file. */
  readonly dirs: readonly string[];
}

export interface UploadQueue {
  /** Queues files; returns their ids. */
  add(requests: readonly UploadRequest[]): string[];
  /** Recreates folders under `folderId` (folder-tree.ts), empty `dirs` too, and queues the files into them. */
  addTree(folderId: number, files: readonly TreeFile[], dirs?: ReadonlyArray<readonly string[]>): string[];
  pause(id: string): void;
  /** Resumes a paused file, or retries a failed one. */
  resume(id: string): void;
  cancel(id: string): void;
  pauseAll(): void;
  resumeAll(): void;
  cancelAll(): void;
  /** Removes a finished, cancelled or failed file from the list (a failed one is given up: its upload is deleted). */
  dismiss(id: string): void;
  /** Removes every done and cancelled file from the list. */
  clearFinished(): void;
  /** Forgets an upload remembered from an earlier page and deletes it on the server. */
  discardInterrupted(key: string): void;
  /** Stops everything and empties the list, keeping what can be resumed (another account logged in). */
  reset(): void;
  /** Ends the waits before retries now (the browser is back online). */
  retryNow(): void;
  getSnapshot(): UploadSnapshot;
  subscribe(listener: () => void): () => void;
}

export function createUploadQueue(options: UploadQueueOptions): UploadQueue {
  const {
    transport,
    hasher,
    store = memoryResumeStore(),
    scope = () => '',
    concurrency = DEFAULT_CONCURRENCY,
    chunkBytes = DEFAULT_CHUNK_BYTES,
    progressIntervalMs = DEFAULT_PROGRESS_INTERVAL_MS,
    retryDelaysMs = DEFAULT_RETRY_DELAYS_MS,
    now = Date.now,
    sleep = defaultSleep,
    onFileAdded,
    onFolderAdded,
  } = options;

  let entries: Entry[] = [];
  const byId = new Map<string, Entry>();
  /** Entries waiting for a slot, in order (stale ones are skipped when taken). */
  let waiting: Entry[] = [];
  let running = 0;
  let nextId = 1;

  const records = createResumeRecords({ store, scope, now, transport });
  const progress = createProgress({ now, progressIntervalMs, entries: () => entries, interrupted: () => records.interrupted() });
  const retries = createRetries({ delaysMs: retryDelaysMs, now, sleep, changed: progress.changed });
  const engine: Engine = { transport, hasher, chunkBytes, now, records, progress, retries, onFileAdded };
  const changed = progress.changed;

  // ---- Scheduling -----------------------------------------------------------------------------

  function pump() {
    while (running < concurrency && waiting.length > 0) {
      const entry = waiting.shift()!;
      if (entry.state !== 'queued' || entry.running || !byId.has(entry.id)) continue;
      void run(entry);
    }
  }

  function enqueue(entry: Entry) {
    entry.state = 'queued';
    entry.error = undefined;
    changed(entry, true);
    waiting.push(entry);
    pump();
  }

  async function run(entry: Entry) {
    const controller = new AbortController();
    entry.controller = controller;
    entry.running = true;
    running++;
    try {
      await runFile(engine, entry, controller.signal);
    } catch (error) {
      // Aborted: pause() or cancel() already set the state.
      if (!controller.signal.aborted && byId.has(entry.id)) {
        entry.state = 'error';
        entry.error = errorOf(error);
        changed(entry, true);
      }
    } finally {
      running--;
      entry.running = false;
      entry.controller = undefined;
      entry.retryAt = undefined;
      entry.samples = [];
      // A paused or failed file keeps its resume record (and the claim on it) for later.
      if (entry.state === 'cancelled') records.discard(entry);
      else if (entry.state === 'done') records.release(entry);
      if (entry.state === 'queued') waiting.push(entry); // resumed while the run was finishing
      changed(entry, true);
      pump();
    }
  }

  // ---- The public face ------------------------------------------------------------------------

  function add(requests: readonly UploadRequest[]): string[] {
    const ids: string[] = [];
    for (const request of requests) {
      const id = `u${nextId++}`;
      const folder = request.folder;
      const entry: Entry = {
        id,
        source: request.source,
        relativePath: request.relativePath,
        onAdded: request.onAdded,
        folder,
        folderId: typeof folder === 'number' ? folder : null,
        state: 'queued',
        running: false,
        checked: false,
        hashed: 0,
        uploaded: 0,
        instant: false,
        samples: [],
        dirty: true,
      };
      entries.push(entry);
      byId.set(id, entry);
      waiting.push(entry);
      ids.push(id);
    }
    changed(null, true);
    pump();
    return ids;
  }

  function addTree(folderId: number, files: readonly TreeFile[], dirs: ReadonlyArray<readonly string[]> = []): string[] {
    const resolve = createFolderResolver(transport, folderId, onFolderAdded);
    // The whole tree is created now, empty folders too; each file waits for its own folder.
    for (const path of dirs) resolve(path).catch(() => {});
    for (const file of files) resolve(file.dirs).catch(() => {});
    return add(
      files.map(({ source, dirs: path }) => ({
        source,
        folder: path.length > 0 ? () => resolve(path) : folderId,
        relativePath: path.length > 0 ? [...path, source.name].join('/') : undefined,
      })),
    );
  }

  function pause(id: string) {
    const entry = byId.get(id);
    if (!entry || !(entry.state === 'queued' || ACTIVE_STATES.has(entry.state))) return;
    entry.state = 'paused';
    entry.controller?.abort(new DOMException('Paused', 'AbortError'));
    changed(entry, true);
  }

  function resume(id: string) {
    const entry = byId.get(id);
    if (!entry || (entry.state !== 'paused' && entry.state !== 'error')) return;
    enqueue(entry);
  }

  function cancel(id: string) {
    const entry = byId.get(id);
    if (!entry || entry.state === 'done' || entry.state === 'cancelled') return;
    entry.state = 'cancelled';
    if (entry.running) entry.controller?.abort(new DOMException('Cancelled', 'AbortError'));
    else records.discard(entry); // a running one is discarded when its run ends, after its last request
    changed(entry, true);
  }

  function dismiss(id: string) {
    const entry = byId.get(id);
    if (!entry || entry.running || !(entry.state === 'done' || entry.state === 'cancelled' || entry.state === 'error')) return;
    if (entry.state === 'error') records.discard(entry);
    remove((candidate) => candidate === entry);
  }

  function remove(test: (entry: Entry) => boolean) {
    const kept: Entry[] = [];
    for (const entry of entries) {
      if (test(entry)) byId.delete(entry.id);
      else kept.push(entry);
    }
    entries = kept;
    changed(null, true);
  }

  return {
    add,
    addTree,
    pause,
    resume,
    cancel,
    pauseAll: () => entries.forEach((entry) => pause(entry.id)),
    resumeAll: () => entries.forEach((entry) => entry.state === 'paused' && resume(entry.id)),
    cancelAll: () => entries.forEach((entry) => cancel(entry.id)),
    dismiss,
    clearFinished: () => remove((entry) => !entry.running && (entry.state === 'done' || entry.state === 'cancelled')),
    discardInterrupted(key) {
      records.discardInterrupted(key);
      changed(null, true);
    },
    reset() {
      for (const entry of entries) {
        if (entry.running) {
          entry.state = 'paused';
          entry.controller?.abort(new DOMException('Reset', 'AbortError'));
        }
      }
      records.reset();
      entries = [];
      byId.clear();
      waiting = [];
      changed(null, true);
    },
    retryNow: () => retries.wakeAll(),
    getSnapshot: () => progress.snapshot(),
    subscribe(listener) {
      const unsubscribe = progress.subscribe(listener);
      if (records.stale()) changed(null, true);
      return unsubscribe;
    },
  };
}
