/**
 * A tus PATCH written from the Node request stream straight into the upload area's datastore
 * (docs/uploads-and-downloads.md §8). @tus/server reads a request through a web stream (srvx's
 * request body, then `Readable.fromWeb`, a PassThrough and its size limiter) before the datastore
 * sees a byte: on a GiB that chain cost about as much CPU as hashing it. This takes the common
 * case, a well-formed PATCH at the upload's offset with a Content-Length that fits, and does what
 * @tus/server's PatchHandler does for it, through the same datastore (hashing included) and the
 * same lock:
 *
 * - the upload's lock, shared by every instance (operations/content/upload-locks.ts); asked to let go by a
 *   newer request on the upload, the PATCH stops reading after LOCK_DRAIN_MS (@tus/server's
 *   lockDrainTimeout), keeps what it wrote and answers with `Connection: close`;
 * - the offset checked under the lock against the bytes the area holds;
 * - the body written as it arrives; what arrived before the client went away is kept, so the
 *   upload resumes from there;
 * - completion when the last byte is written (the endpoint's `complete`, as tus' onUploadFinish);
 * - 204 with Tus-Resumable, Upload-Offset and the headers @tus/server sends.
 *
 * Everything else (another offset, a body that would pass the upload's length, no Content-Length,
 * other tus headers, a wrong version or content type) is left to @tus/server, untouched, so every
 * refusal keeps the status and text tus gives it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { EXPOSED_HEADERS, type DataStore, type Locker } from '@tus/server';

/** How long a PATCH asked to let go of its upload's lock may go on reading (@tus/server's default lockDrainTimeout). */
export const LOCK_DRAIN_MS = 3_000;

const TUS_RESUMABLE = '1.0.0';
const OFFSET_OCTET_STREAM = 'application/offset+octet-stream';
const DIGITS = /^\d{1,16}$/;
/** tus headers that make a PATCH something other than the common case. */
const OTHER_TUS_HEADERS = ['upload-length', 'upload-defer-length', 'upload-metadata', 'upload-concat', 'upload-checksum', 'x-http-method-override'];

/** What the endpoint does when an upload's last byte has arrived: the headers to add to the 204. */
export type CompleteUpload = () => Promise<Record<string, string>>;

/** A refusal in @tus/server's shape. */
export interface DirectPatchOptions {
  readonly datastore: DataStore;
  readonly locker: Locker;
}

/** The declared body length of a PATCH this module takes; null when it leaves the PATCH to @tus/server. */
function commonCase(req: IncomingMessage): { offset: number; length: number } | null {
  const { headers } = req;
  if (headers['tus-resumable'] !== TUS_RESUMABLE || headers['content-type'] !== OFFSET_OCTET_STREAM) return null;
  const offset = headers['upload-offset'];
  const length = headers['content-length'];
  if (typeof offset !== 'string' || !DIGITS.test(offset) || typeof length !== 'string' || !DIGITS.test(length)) return null;
  if (headers['transfer-encoding'] !== undefined || OTHER_TUS_HEADERS.some((name) => headers[name] !== undefined)) return null;
  return { offset: Number(offset), length: Number(length) };
}

export class DirectPatch {
  constructor(private readonly options: DirectPatchOptions) {}

  /**
   * Answers a PATCH of upload `id` (the caller's, live, not complete: the endpoint has checked),
   * or answers false without reading anything when @tus/server is to take it. Throws what the
   * datastore or `complete` throws, once the lock is let go.
   */
  async patch(req: IncomingMessage, res: ServerResponse, id: string, complete: CompleteUpload): Promise<boolean> {
    const declared = commonCase(req);
    if (!declared) return false;
    const { datastore, locker } = this.options;

    // Reading stops when the client goes away, or LOCK_DRAIN_MS after a newer request on this
    // upload (on any instance) asked for the lock; what arrived until then is written and kept.
    let stopped = false;
    let cutShort = false;
    let endBody: (() => void) | null = null;
    const stop = () => {
      stopped = true;
      endBody?.();
    };
    let drainTimer: NodeJS.Timeout | undefined;
    const gone = new AbortController();
    const onClose = () => {
      if (!req.complete) {
        cutShort = true;
        gone.abort();
        stop();
      }
    };
    req.once('close', onClose);
    const lock = locker.newLock(id);
    try {
      await lock.lock(gone.signal, () => {
        cutShort = true;
        drainTimer ??= setTimeout(stop, LOCK_DRAIN_MS);
      });
    } catch (error) {
      req.off('close', onClose);
      throw error;
    }

    try {
      // Not found (completed meanwhile elsewhere), or anything odd: @tus/server answers it.
      const upload = await datastore.getUpload(id).catch(() => null);
      if (!upload || upload.offset !== declared.offset || upload.size === undefined || declared.offset + declared.length > upload.size) {
        // Not the common case after all: @tus/server answers it (409, 413…) under the lock it takes.
        return false;
      }
      const body = new PassThrough({ highWaterMark: 1024 * 1024 });
      endBody = () => {
        req.unpipe(body);
        body.end();
      };
      if (stopped) endBody();
      else req.pipe(body);
      const newOffset = await datastore.write(body, id, declared.offset);
      const headers: Record<string, string> = { 'Upload-Offset': String(newOffset) };
      if (newOffset === upload.size) {
        Object.assign(headers, await complete());
        res.removeHeader('Upload-Expires');
      }
      this.answer(res, 204, headers, cutShort);
      return true;
    } finally {
      clearTimeout(drainTimer);
      req.off('close', onClose);
      await lock.unlock();
    }
  }

  /** An answer as @tus/server would send it: its headers, and `Connection: close` for a request cut short. */
  answer(res: ServerResponse, status: number, headers: Record<string, string>, cutShort: boolean, body = ''): void {
    res.setHeader('Tus-Resumable', TUS_RESUMABLE);
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (cutShort) res.setHeader('Connection', 'close');
    if (body !== '') res.setHeader('Content-Length', Buffer.byteLength(body));
    res.writeHead(status);
    res.end(body === '' ? undefined : body);
  }
}
