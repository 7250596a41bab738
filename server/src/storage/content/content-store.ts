/**
 * Where the bytes of content live, by storage key: a folder on local disk in the embedded default
 * (local-disk-store.ts), an S3-compatible bucket when scaled out (s3-store.ts). The database
 * (`content`) says which key holds what; the store knows nothing about hashes, files or accounts.
 * Both stores use the same keys, `ab/cd/<sha256>-<16 hex>` (storageKeyFor), so the rows of a
 * database stay valid when its blobs are copied from one store to the other.
 *
 * Keys are unique per content row and never reused: a new write always gets a new key (newKey),
 * even for bytes stored before. So deleting an old key can never remove a newer upload of the
 * same bytes, and a key queued for removal can never name a live blob again.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';

/** Inclusive byte offsets, as in HTTP Range: `{ start: 0, end: 0 }` is the first byte. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface BlobStat {
  readonly size: number;
}

export interface ContentStore {
  /** A key never handed out before, for bytes with this SHA-256 (lowercase hex). */
  newKey(sha256: string): string;

  /**
   * Puts a finished local file under `key` and consumes the file (it is moved, or copied and
   * removed). When this resolves the bytes are durable under the key; until then the key holds
   * nothing, whatever happens: a crash never leaves part of a file under a key.
   */
  putFile(key: string, sourcePath: string): Promise<void>;

  /**
   * The bytes under `key` (all of them, or one range), as a stream that reads as it is consumed.
   * Rejects, before any byte is read, when the key holds nothing.
   */
  read(key: string, range?: ByteRange): Promise<Readable>;

  /** The size of what `key` holds; null when nothing. */
  stat(key: string): Promise<BlobStat | null>;

  /** Deletes what `key` holds. Idempotent: deleting a key that holds nothing succeeds. */
  delete(key: string): Promise<void>;

  /** Every key that holds something, in no particular order (for integrity checks). */
  listKeys(): AsyncIterable<string>;

  /**
   * Stores `bytes` under a derived key (derivedKeyFor: thumbnails, renditions), replacing what it held,
   * whole or not at all. read, stat and delete take derived keys too; listKeys never lists them.
   */
  putDerived(key: string, bytes: Buffer): Promise<void>;

  /** Every derived key that holds something (of the content with this SHA-256, if given), in no particular order. */
  listDerivedKeys(sha256?: string): AsyncIterable<string>;

  /**
   * Removes what interrupted writes left behind (temporary files, unfinished multipart uploads)
   * started before `before`; returns how many. Never touches a key.
   */
  sweepPartialWrites(before: Date): Promise<number>;
}

/** A key that is not of this store's form: never a path outside the store. */
export class InvalidStorageKeyError extends Error {
  constructor(key: string) {
    super(`invalid storage key: ${JSON.stringify(key.slice(0, 100))}`);
    this.name = 'InvalidStorageKeyError';
  }
}

/** What read() rejects with when the key holds nothing (`code` as a missing file's). */
export class ContentMissingError extends Error {
  readonly code = 'ENOENT';
  constructor(key: string) {
    super(`no content under storage key ${key}`);
    this.name = 'ContentMissingError';
  }
}

const STORAGE_KEY = /^([0-9a-f]{2})\/([0-9a-f]{2})\/([0-9a-f]{64})-([0-9a-f]{16})$/;
const SHA256 = /^[0-9a-f]{64}$/;
const DERIVED_KEY = /^derived\/([0-9a-f]{2})\/([0-9a-f]{2})\/([0-9a-f]{64})-(\d{1,15})-([a-z]{1,16}(?:\.webp)?)$/;

/** A new key for bytes with this SHA-256: `ab/cd/<sha256>-<16 random hex>` (two levels of fan-out). */
export function storageKeyFor(sha256: string): string {
  if (!SHA256.test(sha256)) throw new Error('newKey needs a lowercase hex SHA-256');
  return `${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}-${randomBytes(8).toString('hex')}`;
}

/** Whether `key` has the form storageKeyFor gives (its fan-out matching its hash). */
export function isStorageKey(key: string): boolean {
  const match = STORAGE_KEY.exec(key);
  return match !== null && match[3].slice(0, 2) === match[1] && match[3].slice(2, 4) === match[2];
}

/**
 * The key of what is derived from the content with this SHA-256 and size (`name` e.g. `small.webp`):
 * `derived/ab/cd/<sha256>-<size>-<name>`, one per content and name, so made once however many files share it.
 */
export function derivedKeyFor(sha256: string, size: number, name: string): string {
  const key = `derived/${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}-${size}-${name}`;
  if (!isDerivedKey(key)) throw new Error(`not a derived key: ${key}`);
  return key;
}

/** The content and name a derived key is of; null when `key` is not one. */
export function parseDerivedKey(key: string): { readonly sha256: string; readonly size: number; readonly name: string } | null {
  const match = DERIVED_KEY.exec(key);
  if (!match || match[3].slice(0, 2) !== match[1] || match[3].slice(2, 4) !== match[2]) return null;
  return { sha256: match[3], size: Number(match[4]), name: match[5] };
}

export function isDerivedKey(key: string): boolean {
  return parseDerivedKey(key) !== null;
}
