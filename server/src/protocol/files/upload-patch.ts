/**
 * The common tus PATCH (at the upload's offset, a Content-Length that fits) written from the Node stream straight into
 * the datastore: @tus/server's web-stream chain cost about as much CPU as hashing a GiB. It does what tus' PatchHandler
 * does, under the same shared lock; anything else is left to @tus/server untouched, so refusals keep tus' status and text.
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

  /** Answers a PATCH of the caller's live upload `id`, or false without reading anything when @tus/server is to take it. */
  async patch(req: IncomingMessage, res: ServerResponse, id: string, complete: CompleteUpload): Promise<boolean> {
    const declared = commonCase(req);
    if (!declared) return false;
    const { datastore, locker } = this.options;

    // Reading stops when the client goes away, LOCK_DRAIN_MS after a newer request asked for the lock, or at once on
    // shutdown (the client resumes elsewhere); what arrived is kept.
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
      await lock.lock(gone.signal, (atOnce?: boolean) => {
        cutShort = true;
        if (atOnce) stop();
        else drainTimer ??= setTimeout(stop, LOCK_DRAIN_MS);
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
