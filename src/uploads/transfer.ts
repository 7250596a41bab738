/** One file's tus transfer; a broken connection retries from HEAD's offset, and an upload the server lost restarts once. */
import { ApiError, isApiError } from '../api/errors';
import { deleteUpload, type Engine } from './engine';
import type { Entry } from './entry';
import { fileChanged, isGone, readable } from './failures';
import { sample } from './progress';
import type { ResumeRecord } from './types';

/** 8 MiB at 1 Mbit/s is about 67 s, within the server's 120 s request timeout; a break loses at most one chunk. */
export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;

/** Sends the file, from where `record` (or an upload of this run) left it. Answers the server's SHA-256. */
export async function transfer(engine: Engine, entry: Entry, record: ResumeRecord | undefined, signal: AbortSignal): Promise<string> {
  const { transport, records, progress, retries, chunkBytes, now } = engine;
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
        if (!sha256) records.remember(entry, url, created.expires);
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
      progress.changed(entry, false);
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
          sample(entry, now());
          progress.changed(entry, false);
        },
      });
      offset = answer.offset;
      sha256 = answer.sha256;
      failures = 0;
      conflicts = 0;
      entry.uploaded = offset;
      sample(entry, now());
    } catch (error) {
      if (signal.aborted) throw error;
      if (url && isGone(error)) {
        // Expired or removed: start a new upload (once).
        if (++restarts > 1) throw error;
        records.forget(entry);
        url = undefined;
        entry.uploadUrl = undefined;
        entry.resumedFrom = undefined;
        offset = 0;
        sha256 = undefined;
        needsHead = false;
        entry.uploaded = 0;
        progress.changed(entry, true);
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
        dropChangedUpload(engine, entry);
        throw fileChanged();
      }
      if (!retries.worthRetrying(error, failures)) throw error;
      await retries.wait(entry, failures++, signal);
      if (url) needsHead = true;
    }
  }
}

/** The file changed while it was sent: its upload (a mix of versions) is deleted and forgotten, and a retry starts over. */
export function dropChangedUpload(engine: Engine, entry: Entry) {
  engine.records.forget(entry);
  if (entry.uploadUrl) deleteUpload(engine, entry.uploadUrl);
  entry.uploadUrl = undefined;
  entry.sha256 = undefined;
  entry.checked = false;
  entry.uploaded = 0;
}
