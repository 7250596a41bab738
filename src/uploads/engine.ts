/** The parts a file's run works with (Engine), and the steps that end or move it between states. */
import type { FileItem } from '../api/results';
import type { Entry } from './entry';
import type { Progress } from './progress';
import type { ResumeRecords } from './resume-records';
import type { Retries } from './retries';
import type { Hasher, UploadState, UploadTransport } from './types';

/** What a file's run works with, shared by every file of one queue. */
export interface Engine {
  readonly transport: UploadTransport;
  readonly hasher: Hasher;
  readonly chunkBytes: number;
  readonly now: () => number;
  readonly records: ResumeRecords;
  readonly progress: Progress;
  readonly retries: Retries;
  readonly onFileAdded?: (file: FileItem) => void;
}

/** Deletes an upload on the server; nothing waits for it, and a failure leaves it to the server's housekeeping. */
export function deleteUpload(engine: Engine, url: string) {
  engine.transport.deleteUpload(url).catch(() => {});
}

/** Sets an active state, unless the run has been paused or cancelled meanwhile. */
export function enter(engine: Engine, entry: Entry, state: UploadState, signal: AbortSignal) {
  signal.throwIfAborted();
  entry.state = state;
  entry.retryAt = undefined;
  engine.progress.changed(entry, true);
}

export function finish(engine: Engine, entry: Entry, file: FileItem, instant: boolean) {
  entry.state = 'done';
  entry.file = file;
  entry.instant = instant;
  entry.uploaded = entry.source.size;
  entry.error = undefined;
  engine.records.forget(entry);
  engine.records.release(entry);
  engine.progress.changed(entry, true);
  engine.onFileAdded?.(file);
  entry.onAdded?.(file);
}
