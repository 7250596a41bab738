/** One file in the queue: what the engine knows of it, changed as its run goes on. */
import type { FileItem } from '../api/results';
import type { UploadError, UploadItem, UploadSource, UploadState } from './types';

export interface Entry {
  readonly id: string;
  readonly source: UploadSource;
  readonly relativePath?: string;
  readonly onAdded?: (file: FileItem) => void;
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
