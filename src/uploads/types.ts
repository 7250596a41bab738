/** The upload engine's vocabulary; no React and no DOM beyond Blob and AbortSignal, so it runs in node tests. */
import type { FileAddParams, FolderAddParams } from '../api/generated/operations';
import type { FileItem, FolderItem, Listing } from '../api/results';
import type { TusClient } from '../api/tus';
import type { HashBlobOptions } from './hash';

export type { PatchOptions } from '../api/tus';

// One file's life (docs/web-uploads.md §1): small files hash, check with FileAdd, then upload and add; bigger ones upload while hashing.
// Any state may go paused, cancelled or error; a remembered upload resumes from HEAD's offset.
export type UploadState = 'queued' | 'hashing' | 'checking' | 'uploading' | 'adding' | 'done' | 'error' | 'paused' | 'cancelled';

export const ACTIVE_STATES: ReadonlySet<UploadState> = new Set(['hashing', 'checking', 'uploading', 'adding']);

/** What is uploaded: a File (or, in tests, anything with the same four members). */
export interface UploadSource {
  readonly name: string;
  readonly size: number;
  readonly lastModified: number;
  slice(start?: number, end?: number): Blob;
}

// ---- What the engine needs ------------------------------------------------------------------------

/** The tus endpoint (api/tus.ts) and the operations an upload needs; failures are ApiErrors ('Network' or the HTTP status's code). */
export interface UploadTransport extends TusClient {
  /** FileAdd. Never aborted: a FileAdd the server committed must be known (else a retry duplicates the file). */
  fileAdd(params: FileAddParams): Promise<FileItem>;
  folderAdd(params: FolderAddParams): Promise<FolderItem>;
  /** GetFiles of one folder (to find a folder whose name FolderAdd said is taken). */
  listFolder(folderId: number): Promise<Listing>;
}

/** SHA-256 of a file's content, lowercase hex (in the browser: in a Web Worker). */
export interface Hasher {
  hash(source: Blob, options: HashBlobOptions & { readonly signal: AbortSignal }): Promise<string>;
}

/** What is remembered about an unfinished upload, to resume it after a reload (24 h at most). */
export interface ResumeRecord {
  readonly url: string;
  /** The file's SHA-256, once known (a big file's upload is remembered from its creation, before its hash). */
  readonly sha256?: string;
  readonly name: string;
  readonly size: number;
  readonly folderId: number;
  /** Who created it (the account id): another account's records are not used nor shown. */
  readonly scope: string;
  /** ms since the epoch after which the server no longer resumes it. */
  readonly expires: number;
}

/** Where resume records live (localStorage in the browser), by fingerprint. */
export interface ResumeStore {
  get(key: string): ResumeRecord | undefined;
  set(key: string, record: ResumeRecord): void;
  remove(key: string): void;
  /** Every record, with its key. */
  list(): ReadonlyArray<readonly [string, ResumeRecord]>;
}

// ---- What the engine shows ------------------------------------------------------------------------

export interface UploadError {
  /** An ApiError code ('Network', 'TooLarge', 'NotFound', …), 'Changed' or 'Unknown'. */
  readonly code: string;
  readonly message: string;
  /** What failed (an ApiError, an UploadFailure): the panel tells it in the user's language from this, never from `message`. */
  readonly cause?: unknown;
}

export interface UploadItem {
  readonly id: string;
  readonly name: string;
  /** The path below the dropped or picked folder (`Photos/2024/a.jpg`), when it came in one. */
  readonly relativePath?: string;
  readonly size: number;
  /** The destination folder; null while a dropped folder's tree is still being created. */
  readonly folderId: number | null;
  readonly state: UploadState;
  /** Bytes hashed so far (hashing, or alongside the transfer of a big file). */
  readonly hashed: number;
  /** Bytes the server has (uploading), or the whole size once done. */
  readonly uploaded: number;
  /** Bytes per second while transferring (0 otherwise). */
  readonly speed: number;
  /** Seconds left for the transfer, when it can be estimated. */
  readonly secondsLeft?: number;
  /** Where a resumed upload started again (bytes), when it resumed an earlier one. */
  readonly resumedFrom?: number;
  /** The content was already the account's: nothing was transferred. */
  readonly instant: boolean;
  /** While a broken connection is being retried: when the next attempt starts (ms since the epoch). */
  readonly retryAt?: number;
  readonly error?: UploadError;
  /** The added file, once done. */
  readonly file?: FileItem;
}

/** An unfinished upload remembered from an earlier page: adding the same file again resumes it. */
export interface InterruptedUpload {
  readonly key: string;
  readonly name: string;
  readonly size: number;
  readonly folderId: number;
}

export interface UploadTotals {
  /** Files not cancelled. */
  readonly files: number;
  readonly done: number;
  readonly failed: number;
  /** Files queued or under way (paused ones not counted). */
  readonly active: number;
  readonly paused: number;
  readonly bytes: number;
  /** Bytes that have reached the server (or needed no transfer). */
  readonly uploaded: number;
  readonly speed: number;
  readonly secondsLeft?: number;
}

export interface UploadSnapshot {
  readonly items: readonly UploadItem[];
  readonly totals: UploadTotals;
  readonly interrupted: readonly InterruptedUpload[];
}
