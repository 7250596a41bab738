/** SHA-256 of a Blob in slices, so memory stays flat whatever the file's size. */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

/** 4 MiB: big enough that reading costs little per byte, small enough to hold twice. */
export const HASH_SLICE_BYTES = 4 * 1024 * 1024;

export interface HashBlobOptions {
  readonly signal?: AbortSignal;
  readonly onProgress?: (hashedBytes: number) => void;
  readonly sliceBytes?: number;
}

export async function hashBlob(blob: Blob, options: HashBlobOptions = {}): Promise<string> {
  const { signal, onProgress, sliceBytes = HASH_SLICE_BYTES } = options;
  const hash = sha256.create();
  // The next slice is read while the current one is hashed.
  let next: Promise<ArrayBuffer> | undefined = blob.size > 0 ? blob.slice(0, sliceBytes).arrayBuffer() : undefined;
  for (let start = 0; next; start += sliceBytes) {
    const bytes = new Uint8Array(await next);
    signal?.throwIfAborted();
    const following = start + sliceBytes;
    next = following < blob.size ? blob.slice(following, following + sliceBytes).arrayBuffer() : undefined;
    hash.update(bytes);
    onProgress?.(Math.min(blob.size, following));
  }
  return bytesToHex(hash.digest());
}
