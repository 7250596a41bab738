/** Instant upload (docs/web-uploads.md §1): FileAdd with the hash skips the bytes when the account already has the content. */
import type { FileItem } from '../api/results';
import { isApiError } from '../api/errors';
import { extensionOf } from '../api/generated/name-rule';
import { deleteUpload, finish, type Engine } from './engine';
import type { Entry } from './entry';
import { speedOf } from './progress';
import { transfer } from './transfer';
import type { ResumeRecord } from './types';

/** Hashing alongside is judged after this long: on a fast line it only slows the transfer (Upload-SHA256 gives the hash anyway). */
export const HASH_GRACE_MS = 1_000;
const HASH_MARGIN = 0.75;

/** The extension FileAdd expects: the service's own rule (generated/name-rule.ts). */
export { extensionOf };

/** The whole file's hash, before anything is sent. */
export async function hashFirst(engine: Engine, entry: Entry, signal: AbortSignal): Promise<void> {
  entry.hashed = 0;
  entry.sha256 = await engine.hasher.hash(entry.source.slice(), {
    signal,
    onProgress: (bytes) => {
      entry.hashed = bytes;
      engine.progress.changed(entry, false);
    },
  });
  entry.hashed = entry.source.size;
}

/** Sends at once while hashing alongside; a known hash the account owns stops the transfer (null). Answers the server's SHA-256. */
export async function sendWhileHashing(engine: Engine, entry: Entry, record: ResumeRecord | undefined, signal: AbortSignal): Promise<string | null> {
  const { source } = entry;
  const { hasher, records, now } = engine;
  const sending = new AbortController();
  const hashing = new AbortController();
  const stop = () => {
    sending.abort(signal.reason);
    hashing.abort(signal.reason);
  };
  signal.addEventListener('abort', stop, { once: true });
  try {
    const transferring = transfer(engine, entry, record, sending.signal).then(
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
          if (!hashingCanWin(entry, startedAt, now())) hashing.abort(new DOMException('Hashing would end after the transfer', 'AbortError'));
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
      records.rememberHash(entry);
      const owned = await probe(engine, entry, first.hash);
      if (owned) {
        // Every byte had gone: FileAdd may have taken this very upload, complete by then. Not instant.
        const instant = entry.uploaded < source.size;
        sending.abort(new DOMException('The content is already stored', 'AbortError'));
        await transferring;
        if (entry.uploadUrl) deleteUpload(engine, entry.uploadUrl);
        entry.uploadUrl = undefined;
        finish(engine, entry, owned, instant);
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

/** After HASH_GRACE_MS, only if hashing ends within HASH_MARGIN of the transfer's time left. */
function hashingCanWin(entry: Entry, startedAt: number, time: number): boolean {
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
async function probe(engine: Engine, entry: Entry, hash: string): Promise<FileItem | null> {
  const { name, size } = entry.source;
  try {
    return await engine.transport.fileAdd({ name, ext: extensionOf(name), size, dirid: entry.folderId ?? 0, hash });
  } catch (error) {
    // 404: not the account's content. Anything else: the FileAdd after the transfer will say.
    if (isApiError(error, 'NotFound')) entry.checked = true;
    return null;
  }
}

/** Retried while unreachable, never aborted midway (a pause waits for the answer); with `probe`, 404 answers null. */
export async function fileAdd(engine: Engine, entry: Entry, hash: string, signal: AbortSignal, probe: boolean): Promise<FileItem | null> {
  const { name, size } = entry.source;
  for (let failures = 0; ; failures++) {
    try {
      return await engine.transport.fileAdd({ name, ext: extensionOf(name), size, dirid: entry.folderId ?? 0, hash });
    } catch (error) {
      if (probe && isApiError(error, 'NotFound')) {
        signal.throwIfAborted();
        return null;
      }
      if (!engine.retries.worthRetrying(error, failures)) throw error;
      await engine.retries.wait(entry, failures, signal);
    }
  }
}
