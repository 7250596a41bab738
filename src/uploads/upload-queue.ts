/**
 * The upload engine: a queue of files, at most `concurrency` of them under way at once, each going
 * through the states of types.ts. It knows nothing of React or the DOM: the transport (tus and the
 * operations), the hasher and the resume store are given to it, so tests drive it with fakes.
 * Components read `getSnapshot()` through `subscribe()`; progress changes are announced at most
 * every `progressIntervalMs`, state changes at once.
 *
 * Bytes flow at once (docs/web-uploads.md §1): a file bigger than one chunk is sent while a hasher
 * reads it alongside; once its hash is known, FileAdd is asked with it, and if the account already
 * has the content the transfer stops ("instant upload"). A file of one chunk or less is hashed
 * first, which takes a moment and spares it every request to /upload/ when the content is owned.
 *
 * Resuming (docs/web-uploads.md §2): once a tus upload is created, its URL (and the file's hash,
 * when known) are remembered under the file's fingerprint (account, destination folder, name,
 * size, lastModified). Adding the same file again, in this page or after a reload, finds that
 * record, asks the server with HEAD how many bytes it has, and sends the rest. A broken connection
 * is retried with growing delays, each time from the offset HEAD reports.
 */
import { ApiError, isApiError } from '../api/errors';
import type { FileItem, FolderItem } from '../api/results';
import { checkName, nameProblemMessage } from '../api/name-check';
import { createFolderResolver } from './folder-tree';
import {
  ACTIVE_STATES,
  type Hasher,
  type InterruptedUpload,
  type ResumeRecord,
  type ResumeStore,
  type UploadError,
  type UploadItem,
  type UploadSnapshot,
  type UploadSource,
  type UploadState,
  type UploadTotals,
  type UploadTransport,
} from './types';

export const DEFAULT_CONCURRENCY = 3;
/**
 * 8 MiB per PATCH: each request arrives well within the server's 120 s request timeout even on a
 * slow line (8 MiB at 1 Mbit/s is about 67 s), and a broken connection loses at most one chunk.
 */
export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;
export const DEFAULT_PROGRESS_INTERVAL_MS = 200;
/** State changes are shown this soon (together with whatever else changed meanwhile). */
const URGENT_DELAY_MS = 50;
/** Waits before each new attempt after a broken connection; when they run out the file fails (Retry starts again). */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 30_000, 30_000, 60_000, 60_000];
/** The server keeps an unfinished upload for 24 h after its creation. */
export const RESUME_LIFETIME_MS = 24 * 60 * 60 * 1000;
/**
 * Hashing alongside a transfer goes on for this long before it is judged: after it, it stops unless
 * it is expected to end before the transfer, in at most HASH_MARGIN of the transfer's time left.
 * On a fast line (the browser's CPU being the limit) it would only slow the transfer down, and the
 * server's Upload-SHA256 gives the hash anyway; on a slow line it costs the transfer nothing and
 * may spare most of it.
 */
export const HASH_GRACE_MS = 1_000;
const HASH_MARGIN = 0.75;
/** Speed is measured over this window. */
const SPEED_WINDOW_MS = 5_000;
const MIN_SPEED_SPAN_MS = 400;

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
  /**
   * The destination folder (0 = the root), or a function that answers it once created (called
   * when the file starts, and again when a failed file is retried).
   */
  readonly folder: number | (() => Promise<number>);
  /** Shown instead of the name: the path below a dropped or picked folder. */
  readonly relativePath?: string;
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
  /**
   * Recreates folders under `folderId` (FolderAdd; see folder-tree.ts) and queues the files into
   * them. `dirs` are folders to create even if no file lies in them (empty ones).
   */
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

/** The key of a file's resume record. */
export function fingerprint(scope: string, folderId: number, source: UploadSource): string {
  return JSON.stringify([scope, folderId, source.name, source.size, source.lastModified]);
}

/** The extension FileAdd expects (docs/protocol.md §10.1): after the last dot, unless that dot is first or last. */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? name.slice(dot + 1).toLowerCase() : '';
}

/** Worth another attempt: the service was unreachable or failed, not a refusal. */
export function isRetryable(error: unknown): boolean {
  if (!isApiError(error)) return false;
  if (error.code === 'Network') return true;
  const status = error.status ?? 0;
  return status >= 500 || status === 408 || status === 423 || status === 429;
}

/** The upload no longer exists on the server (expired, housekept, or another account's). */
const isGone = (error: unknown) => isApiError(error) && (error.status === 404 || error.status === 410);

export function memoryResumeStore(): ResumeStore {
  const records = new Map<string, ResumeRecord>();
  return {
    get: (key) => records.get(key),
    set: (key, record) => void records.set(key, record),
    remove: (key) => void records.delete(key),
    list: () => [...records],
  };
}

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** Settles with `promise`, or rejects as soon as `signal` aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** A failure of the engine's own (not from the service). */
class UploadFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const fileChanged = () => new UploadFailure('Changed', 'The file changed while it was being uploaded. Choose it again.');

/** Whether the file can still be read at `offset` (browsers refuse to read a file changed since it was picked). */
async function readable(source: UploadSource, offset: number): Promise<boolean> {
  if (source.size === 0) return true;
  const at = Math.min(offset, source.size - 1);
  try {
    await source.slice(at, at + 1).arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

function errorOf(error: unknown): UploadError {
  if (isApiError(error)) return { code: error.code, message: error.message };
  if (error instanceof UploadFailure) return { code: error.code, message: error.message };
  return { code: 'Unknown', message: error instanceof Error ? error.message : String(error) };
}

interface Entry {
  readonly id: string;
  readonly source: UploadSource;
  readonly relativePath?: string;
  readonly folder: number | (() => Promise<number>);
  folderId: number | null;
  state: UploadState;
  /** A run (the async pipeline) is in progress; it may outlive a pause while a FileAdd finishes. */
  running: boolean;
  controller?: AbortController;
  /** The resume record this entry owns (one entry per fingerprint at a time). */
  key?: string;
  sha256?: string;
  /** FileAdd with the hash was tried (and answered 404): no need to try again on resume. */
  checked: boolean;
  uploadUrl?: string;
  hashed: number;
  uploaded: number;
  resumedFrom?: number;
  retryAt?: number;
  instant: boolean;
  error?: UploadError;
  file?: FileItem;
  /** Progress samples (time, bytes) for the speed. */
  samples: Array<readonly [number, number]>;
  view?: UploadItem;
  dirty: boolean;
}

export function createUploadQueue(options: UploadQueueOptions): UploadQueue {
  const {
    transport,
    hasher,
    store: givenStore = memoryResumeStore(),
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

  // Records and claims decide the list of interrupted uploads: it is read again only when they change.
  let interruptedStale = true;
  const store: ResumeStore = {
    get: (key) => givenStore.get(key),
    list: () => givenStore.list(),
    set(key, record) {
      givenStore.set(key, record);
      interruptedStale = true;
    },
    remove(key) {
      givenStore.remove(key);
      interruptedStale = true;
    },
  };

  let entries: Entry[] = [];
  const byId = new Map<string, Entry>();
  /** Entries waiting for a slot, in order (stale ones are skipped when taken). */
  let waiting: Entry[] = [];
  let running = 0;
  let nextId = 1;
  /** Fingerprints owned by an entry of this page. */
  const claimed = new Set<string>();

  const listeners = new Set<() => void>();
  let snapshot: UploadSnapshot = { items: [], totals: totalsOf([]), interrupted: [] };
  let lastEmit = -Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let dueAt = Infinity;
  const urgentDelayMs = Math.min(URGENT_DELAY_MS, progressIntervalMs);
  let interrupted: readonly InterruptedUpload[] = [];
  /** Wakes the files waiting to retry. */
  const wakers = new Set<() => void>();

  // ---- Announcing changes ---------------------------------------------------------------------

  /**
   * Something changed. A state change (`urgent`) is announced within URGENT_DELAY_MS of the last
   * announcement, progress within `progressIntervalMs`; changes in between are announced together,
   * so that 10,000 small files finishing one after another cost a few announcements a second.
   */
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
    const items = entries.map((entry) => {
      if (entry.dirty || entry.state === 'uploading' || !entry.view) {
        entry.view = viewOf(entry, time);
        entry.dirty = false;
      }
      return entry.view;
    });
    if (interruptedStale) {
      interruptedStale = false;
      interrupted = listInterrupted();
    }
    snapshot = { items, totals: totalsOf(items), interrupted };
    for (const listener of [...listeners]) listener();
    // Keep speed and time left current while something transfers, even between progress events.
    if (entries.some((entry) => entry.state === 'uploading')) changed(null, false);
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

  function speedOf(entry: Entry, time: number): number {
    const samples = entry.samples;
    while (samples.length > 1 && time - samples[0][0] > SPEED_WINDOW_MS) samples.shift();
    if (samples.length === 0) return 0;
    const [startTime, startBytes] = samples[0];
    const span = time - startTime;
    if (span < MIN_SPEED_SPAN_MS) return entry.view?.speed ?? 0;
    return Math.max(0, ((entry.uploaded - startBytes) * 1000) / span);
  }

  function sample(entry: Entry) {
    const time = now();
    const last = entry.samples[entry.samples.length - 1];
    if (last && time - last[0] < 100) return;
    entry.samples.push([time, entry.uploaded]);
  }

  function listInterrupted(): InterruptedUpload[] {
    const who = scope();
    const time = now();
    const result: InterruptedUpload[] = [];
    for (const [key, record] of store.list()) {
      if (record.expires <= time) {
        store.remove(key);
        continue;
      }
      if (record.scope !== who || claimed.has(key)) continue;
      result.push({ key, name: record.name, size: record.size, folderId: record.folderId });
    }
    return result;
  }

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
      await process(entry, controller.signal);
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
      if (entry.state === 'cancelled') discard(entry);
      else if (entry.state === 'done') release(entry);
      if (entry.state === 'queued') waiting.push(entry); // resumed while the run was finishing
      changed(entry, true);
      pump();
    }
  }

  function release(entry: Entry) {
    if (entry.key) claimed.delete(entry.key);
    entry.key = undefined;
    interruptedStale = true;
  }

  /** A cancelled or given-up file: delete its upload on the server and forget it. */
  function discard(entry: Entry) {
    const url = entry.uploadUrl;
    if (url) transport.deleteUpload(url).catch(() => {});
    // Also an upload remembered from an earlier page for this file, unless another entry owns it.
    const key = entry.key ?? (entry.folderId !== null ? fingerprint(scope(), entry.folderId, entry.source) : undefined);
    const record = key && (entry.key === key || !claimed.has(key)) ? store.get(key) : undefined;
    if (key && record) {
      store.remove(key);
      if (record.url !== url) transport.deleteUpload(record.url).catch(() => {});
    }
    entry.uploadUrl = undefined;
    release(entry);
  }

  /** Sets an active state, unless the run has been paused or cancelled meanwhile. */
  function enter(entry: Entry, state: UploadState, signal: AbortSignal) {
    signal.throwIfAborted();
    entry.state = state;
    entry.retryAt = undefined;
    changed(entry, true);
  }

  function finish(entry: Entry, file: FileItem, instant: boolean) {
    entry.state = 'done';
    entry.file = file;
    entry.instant = instant;
    entry.uploaded = entry.source.size;
    entry.error = undefined;
    if (entry.key) store.remove(entry.key);
    release(entry);
    changed(entry, true);
    onFileAdded?.(file);
  }

  // ---- One file -------------------------------------------------------------------------------

  async function process(entry: Entry, signal: AbortSignal): Promise<void> {
    const { source } = entry;
    // A name the service would refuse (its own rule: api/name-check.ts) is neither hashed nor sent.
    const badName = checkName(source.name);
    if (badName) throw new UploadFailure('InvalidArgument', nameProblemMessage(badName));
    if (entry.folderId === null) {
      const folder = entry.folder;
      entry.folderId = typeof folder === 'number' ? folder : await abortable(folder(), signal);
      changed(entry, true);
    }
    const folderId = entry.folderId;

    if (!entry.key) {
      const key = fingerprint(scope(), folderId, source);
      if (!claimed.has(key)) {
        claimed.add(key);
        entry.key = key;
        interruptedStale = true;
      }
    }
    let record = entry.key ? usableRecord(entry.key) : undefined;
    if (entry.sha256 && record?.sha256 && record.sha256 !== entry.sha256) record = undefined;
    if (!entry.sha256 && record?.sha256) entry.sha256 = record.sha256;

    // One chunk or less (and no upload of it under way): hashing takes a moment, and if the account
    // has the content nothing goes to /upload/ at all. A bigger file is sent at once (below).
    if (!entry.sha256 && !record && source.size <= chunkBytes) {
      enter(entry, 'hashing', signal);
      entry.hashed = 0;
      entry.sha256 = await hasher.hash(source.slice(), {
        signal,
        onProgress: (bytes) => {
          entry.hashed = bytes;
          changed(entry, false);
        },
      });
      entry.hashed = source.size;
    }

    if (entry.sha256 && !entry.checked) {
      enter(entry, 'checking', signal);
      const owned = await fileAdd(entry, entry.sha256, signal, true);
      entry.checked = true;
      if (owned) {
        // The account had the content: an unfinished upload of it is of no use now.
        if (record && entry.key) {
          store.remove(entry.key);
          transport.deleteUpload(record.url).catch(() => {});
        }
        finish(entry, owned, true);
        return;
      }
    }

    enter(entry, 'uploading', signal);
    const uploaded = entry.sha256 ? await transfer(entry, record, signal) : await sendWhileHashing(entry, record, signal);
    if (uploaded === null) return; // the content was the account's: finished without the rest of the bytes
    if (entry.sha256 && uploaded !== entry.sha256) {
      // The bytes that arrived are not the bytes that were hashed: the file changed meanwhile.
      dropChangedUpload(entry);
      throw fileChanged();
    }

    enter(entry, 'adding', signal);
    const file = await fileAdd(entry, uploaded, signal, false);
    if (!file) throw new ApiError('NotFound', 'The service no longer has the upload. Try again.', {}, 404);
    finish(entry, file, false);
  }

  /**
   * A file whose hash is not known yet: the transfer starts at once and a hasher reads the file
   * alongside. If the hash is known before the last byte arrives, FileAdd is asked with it; when
   * the account already has that content, the transfer stops, its upload is deleted and the file
   * is done (answers null). Hashing stops when the transfer ends first, or when it can no longer
   * end well before it (hashingCanWin): the server's Upload-SHA256 is then the file's hash (a
   * browser refuses to read, and so to send, a file changed after it was picked). Answers the
   * server's SHA-256.
   */
  async function sendWhileHashing(entry: Entry, record: ResumeRecord | undefined, signal: AbortSignal): Promise<string | null> {
    const { source } = entry;
    const sending = new AbortController();
    const hashing = new AbortController();
    const stop = () => {
      sending.abort(signal.reason);
      hashing.abort(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
    try {
      const transferring = transfer(entry, record, sending.signal).then(
        (sha256) => ({ sha256 }),
        (error: unknown) => ({ error }),
      );
      const startedAt = now();
      entry.hashed = 0;
      const hashed = hasher
        .hash(source.slice(), {
          signal: hashing.signal,
          onProgress: (bytes) => {
            entry.hashed = bytes;
            if (!hashingCanWin(entry, startedAt)) hashing.abort(new DOMException('Hashing would end after the transfer', 'AbortError'));
          },
        })
        // Hashing is a shortcut here: if the file cannot be read, the transfer says so.
        .then(
          (hash) => ({ hash }),
          () => ({ hash: undefined }),
        );

      const first = await Promise.race([transferring, hashed]);
      if ('hash' in first && first.hash) {
        entry.sha256 = first.hash;
        entry.hashed = source.size;
        rememberHash(entry);
        const owned = await probe(entry, first.hash);
        if (owned) {
          // Every byte had gone: FileAdd may have taken this very upload, complete by then. Not instant.
          const instant = entry.uploaded < source.size;
          sending.abort(new DOMException('The content is already stored', 'AbortError'));
          await transferring;
          if (entry.uploadUrl) transport.deleteUpload(entry.uploadUrl).catch(() => {});
          entry.uploadUrl = undefined;
          finish(entry, owned, instant);
          return null;
        }
        signal.throwIfAborted();
      }
      const ended = await transferring;
      if ('error' in ended) throw ended.error;
      return ended.sha256;
    } finally {
      signal.removeEventListener('abort', stop);
      hashing.abort(new DOMException('The transfer has ended', 'AbortError'));
    }
  }

  /**
   * Whether hashing alongside the transfer is still worth its CPU: after HASH_GRACE_MS, only if
   * at the rates so far it ends in at most HASH_MARGIN of the time the transfer still needs.
   */
  function hashingCanWin(entry: Entry, startedAt: number): boolean {
    const time = now();
    const elapsed = time - startedAt;
    if (elapsed < HASH_GRACE_MS || entry.hashed <= 0) return true;
    const bytesPerSecond = speedOf(entry, time);
    if (bytesPerSecond <= 0) return true; // nothing moves (a broken connection): the hash may spare the wait
    const size = entry.source.size;
    const hashLeftMs = ((size - entry.hashed) * elapsed) / entry.hashed;
    const sendLeftMs = ((size - entry.uploaded) * 1000) / bytesPerSecond;
    return hashLeftMs <= sendLeftMs * HASH_MARGIN;
  }

  /** FileAdd with a hash learnt while sending: once, never aborted; null unless it added the file. */
  async function probe(entry: Entry, hash: string): Promise<FileItem | null> {
    const { name, size } = entry.source;
    try {
      const file = await transport.fileAdd({ name, ext: extensionOf(name), size, dirid: entry.folderId ?? 0, hash });
      return file;
    } catch (error) {
      // 404: not the account's content. Anything else: the FileAdd after the transfer will say.
      if (isApiError(error, 'NotFound')) entry.checked = true;
      return null;
    }
  }

  /** The file changed while it was sent: its upload (a mix of versions) is deleted and forgotten, and a retry starts over. */
  function dropChangedUpload(entry: Entry) {
    if (entry.key) store.remove(entry.key);
    if (entry.uploadUrl) transport.deleteUpload(entry.uploadUrl).catch(() => {});
    entry.uploadUrl = undefined;
    entry.sha256 = undefined;
    entry.checked = false;
    entry.uploaded = 0;
  }

  /** Adds a hash learnt after the upload was created to its resume record. */
  function rememberHash(entry: Entry) {
    const record = entry.key ? store.get(entry.key) : undefined;
    if (entry.key && entry.sha256 && record && record.url === entry.uploadUrl && !record.sha256) store.set(entry.key, { ...record, sha256: entry.sha256 });
  }

  /**
   * FileAdd, retried while the service is unreachable. Never aborted midway (see UploadTransport):
   * a pause takes effect once it answers. With `probe`, a 404 (content not owned) answers null.
   */
  async function fileAdd(entry: Entry, hash: string, signal: AbortSignal, probe: boolean): Promise<FileItem | null> {
    const { name, size } = entry.source;
    for (let failures = 0; ; failures++) {
      try {
        return await transport.fileAdd({ name, ext: extensionOf(name), size, dirid: entry.folderId ?? 0, hash });
      } catch (error) {
        if (probe && isApiError(error, 'NotFound')) {
          signal.throwIfAborted();
          return null;
        }
        if (!isRetryable(error) || failures >= retryDelaysMs.length) throw error;
        await backoff(entry, failures, signal);
      }
    }
  }

  async function backoff(entry: Entry, failures: number, signal: AbortSignal) {
    const delay = retryDelaysMs[failures];
    entry.retryAt = now() + delay;
    entry.samples = [];
    changed(entry, true);
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    wakers.add(wake);
    try {
      await Promise.race([sleep(delay, signal), woken]);
    } finally {
      wakers.delete(wake);
    }
    signal.throwIfAborted();
    entry.retryAt = undefined;
    changed(entry, true);
  }

  function usableRecord(key: string): ResumeRecord | undefined {
    const record = store.get(key);
    if (!record) return undefined;
    if (record.expires <= now() + 60_000) {
      store.remove(key);
      return undefined;
    }
    return record;
  }

  /** The tus transfer: create (or HEAD to resume), then PATCH chunk by chunk. Answers the server's SHA-256. */
  async function transfer(entry: Entry, record: ResumeRecord | undefined, signal: AbortSignal): Promise<string> {
    const { source } = entry;
    const size = source.size;
    let url = entry.uploadUrl ?? record?.url;
    let needsHead = url !== undefined;
    let offset = 0;
    let sha256: string | undefined;
    let failures = 0;
    let restarts = 0;
    let conflicts = 0;
    let headsAtEnd = 0;

    for (;;) {
      try {
        if (!url) {
          // The folder lets the service encrypt the bytes as they arrive when it is encrypted.
          const created = await transport.createUpload(size, { filename: source.name, folder: String(entry.folderId ?? 0) }, signal);
          url = created.url;
          entry.uploadUrl = url;
          offset = created.offset;
          sha256 = created.sha256;
          if (entry.key && !sha256) {
            store.set(entry.key, {
              url,
              ...(entry.sha256 ? { sha256: entry.sha256 } : {}),
              name: source.name,
              size,
              folderId: entry.folderId ?? 0,
              scope: scope(),
              expires: created.expires ?? now() + RESUME_LIFETIME_MS,
            });
          }
        } else if (needsHead) {
          const status = await transport.headUpload(url, signal);
          if (status.length !== size) throw new ApiError('NotFound', 'The upload does not match the file.', {}, 404);
          entry.uploadUrl = url;
          offset = status.offset;
          sha256 = status.sha256;
          needsHead = false;
          if (offset > 0 && !sha256) entry.resumedFrom = offset;
        }
        entry.uploaded = offset;
        changed(entry, false);
        if (sha256) return sha256;
        if (offset >= size) {
          // Every byte is there but the answer with the hash was lost: HEAD completes it.
          if (++headsAtEnd > 2) throw new ApiError('Protocol', 'The service did not complete the upload.');
          needsHead = true;
          continue;
        }

        const start = offset;
        const answer = await transport.patchUpload(url, start, source.slice(start, Math.min(size, start + chunkBytes)), {
          signal,
          onProgress: (sent) => {
            entry.uploaded = Math.min(size, start + sent);
            sample(entry);
            changed(entry, false);
          },
        });
        offset = answer.offset;
        sha256 = answer.sha256;
        failures = 0;
        conflicts = 0;
        entry.uploaded = offset;
        sample(entry);
      } catch (error) {
        if (signal.aborted) throw error;
        if (url && isGone(error)) {
          // Expired or removed: start a new upload (once).
          if (++restarts > 1) throw error;
          if (entry.key) store.remove(entry.key);
          url = undefined;
          entry.uploadUrl = undefined;
          entry.resumedFrom = undefined;
          offset = 0;
          sha256 = undefined;
          needsHead = false;
          entry.uploaded = 0;
          changed(entry, true);
          continue;
        }
        if (url && isApiError(error, 'Conflict')) {
          // A PATCH at an offset the server does not have: learn the right one.
          if (++conflicts > 3) throw error;
          needsHead = true;
          continue;
        }
        // A browser will not send a file changed since it was picked: no use trying again.
        if (isApiError(error, 'Network') && !(await readable(source, offset))) {
          dropChangedUpload(entry);
          throw fileChanged();
        }
        if (!isRetryable(error) || failures >= retryDelaysMs.length) throw error;
        await backoff(entry, failures++, signal);
        if (url) needsHead = true;
      }
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
    else discard(entry); // a running one is discarded when its run ends, after its last request
    changed(entry, true);
  }

  function dismiss(id: string) {
    const entry = byId.get(id);
    if (!entry || entry.running || !(entry.state === 'done' || entry.state === 'cancelled' || entry.state === 'error')) return;
    if (entry.state === 'error') discard(entry);
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
      if (claimed.has(key)) return;
      const record = store.get(key);
      store.remove(key);
      if (record) transport.deleteUpload(record.url).catch(() => {});
      changed(null, true);
    },
    reset() {
      for (const entry of entries) {
        if (entry.running) {
          entry.state = 'paused';
          entry.controller?.abort(new DOMException('Reset', 'AbortError'));
        }
      }
      claimed.clear();
      interruptedStale = true;
      entries = [];
      byId.clear();
      waiting = [];
      changed(null, true);
    },
    retryNow() {
      for (const wake of [...wakers]) wake();
    },
    getSnapshot: () => snapshot,
    subscribe(listener) {
      listeners.add(listener);
      if (interruptedStale) changed(null, true);
      return () => listeners.delete(listener);
    },
  };
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
