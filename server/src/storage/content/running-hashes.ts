/**
 * The SHA-256 of an upload computed while its bytes arrive (docs/uploads-and-downloads.md §8). Node's Hash cannot be
 * saved, so it is an optimization only: it answers when this process saw every byte in order through successful
 * writes, and completion hashes the stored bytes otherwise.
 */
import { createHash, type Hash } from 'node:crypto';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { DataStore, Upload } from '@tus/server';
import { WrappingDataStore } from './wrapping-data-store';
import { Lru } from '../../lru';

/** A hash of the first `bytes` bytes of an upload. */
interface RunningHash {
  readonly hash: Hash;
  bytes: number;
}

/** Uploads hashed at once, at most; the oldest are forgotten (and would be hashed again if completed). */
const DEFAULT_LIMIT = 10_000;

export class RunningHashes {
  private readonly entries: Lru<string, RunningHash>;

  constructor(limit = DEFAULT_LIMIT) {
    this.entries = new Lru(limit);
  }

  /**
   * Starts a write of upload `id` at `offset`: the stream to hand the store (hashed as it passes) and `settle`, called
   * with the store's new offset or null. The hash is put back only if the store took exactly the bytes hashed.
   */
  track(id: string, offset: number, stream: Readable): { stream: Readable; settle(newOffset: number | null): void } {
    const known = this.entries.get(id);
    this.entries.delete(id);
    const running: RunningHash | undefined = known?.bytes === offset ? known : offset === 0 ? { hash: createHash('sha256'), bytes: 0 } : undefined;
    if (!running) return { stream, settle: () => {} };

    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        running.hash.update(chunk);
        running.bytes += chunk.length;
        done(null, chunk);
      },
    });
    // Either side failing ends both: the store sees the source's error, the source the store's.
    pipeline(stream, hashing, () => {});
    return {
      stream: hashing,
      settle: (newOffset) => {
        if (newOffset !== null && newOffset === running.bytes) this.remember(id, running);
      },
    };
  }

  /** SHA-256 (hex) of upload `id` if exactly its first `size` bytes were hashed here; else null. Asking again answers again. */
  digestOf(id: string, size: number): string | null {
    const running = this.entries.get(id);
    if (!running || running.bytes !== size) return null;
    return running.hash.copy().digest('hex');
  }

  /** Forgets upload `id` (stored, removed, or written by something that did not hash). */
  forget(id: string): void {
    this.entries.delete(id);
  }

  /** How many uploads have a running hash (for tests). */
  get size(): number {
    return this.entries.size;
  }

  private remember(id: string, running: RunningHash): void {
    this.entries.set(id, running);
  }
}

/** SHA-256 (lowercase hex) and size of what a stream yields, as it comes: memory stays constant. */
export async function sha256OfStream(stream: Readable): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** SHA-256 and size of a complete upload: the running hash when it covers `readableBytes`, else by reading; null when nothing. */
export async function sha256OfUpload(
  hashes: RunningHashes,
  id: string,
  area: { readableBytes(id: string): Promise<number | null>; open(id: string): Promise<Readable | null> },
): Promise<{ sha256: string; size: number } | null> {
  const size = await area.readableBytes(id);
  if (size === null) return null;
  const sha256 = hashes.digestOf(id, size);
  if (sha256 !== null) return { sha256, size };
  const bytes = await area.open(id);
  return bytes && sha256OfStream(bytes);
}

/** A tus datastore whose writes are hashed on the way (RunningHashes.track). */
export class HashingDataStore extends WrappingDataStore {
  constructor(
    inner: DataStore,
    private readonly hashes: RunningHashes,
  ) {
    super(inner);
  }

  override async create(upload: Upload): Promise<Upload> {
    this.hashes.forget(upload.id);
    return this.inner.create(upload);
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    const tracked = this.hashes.track(id, offset, stream);
    let newOffset: number | null = null;
    try {
      newOffset = await this.inner.write(tracked.stream, id, offset);
      return newOffset;
    } finally {
      tracked.settle(newOffset);
    }
  }

  override async remove(id: string): Promise<void> {
    this.hashes.forget(id);
    await this.inner.remove(id);
  }
}
