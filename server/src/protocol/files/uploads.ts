/**
 * The tus 1.0 endpoint at /upload/ (docs/protocol.md §13.1) on @tus/server, adding what tus leaves to the application:
 * a Bearer token, ownership (another account's upload is a 404), Upload-Length against the limit and quota (413),
 * `Upload-SHA256` on completion, expiry from the database row, and encryption as it arrives for an encrypted folder.
 * State and tus' lock live in the database and the upload area, so requests on one upload may reach any instance.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server, type Upload } from '@tus/server';
import type { Logger } from '../../log';
import type { Caller, Services } from '../../operations/context';
import { OpError, ResultCode } from '../../operations/errors';
import { OUTAGE_RETRY_AFTER_SECONDS, outageRefusal } from '../../operations/outages';
import { keyForUploadInto, unlockedKeyForUpload } from '../../operations/encryption/encryption';
import { authenticateBearer } from '../../operations/accounts/sessions';
import { uploadLockerOf } from '../../operations/content/upload-locks';
import {
  beginUpload,
  cancelUpload,
  completeIfArrived,
  completeUpload,
  findOwnUpload,
  holdUploadKey,
  isUploadId,
  uploadDatastore,
  type OwnUpload,
} from '../../operations/content/uploads';
import { requestFacts } from '../http-common';
import { DirectPatch } from './upload-patch';
import { newIncidentId } from '../pipeline';
import type { RequestTarget } from '../request-target';

const TUS_RESUMABLE = '1.0.0';
const UPLOAD_PATH = /^\/upload(?:\/([^/]*))?\/?$/;
const SHA256_HEADER = 'Upload-SHA256';

/** What the wrapper learned about a request before tus handles it. */
interface UploadRequest {
  readonly caller: Caller;
  readonly baseUrl: string;
  /** The id a creation (POST) will get. */
  readonly newId: string;
  /** Upload keys the request holds (holdUploadKey), let go when it ends. */
  readonly keys: Array<() => void>;
}

/** The destination folder a creation names in its Upload-Metadata (`folder`); null when none. */
function folderOfMetadata(metadata: Upload['metadata']): number | null {
  const value = metadata?.folder;
  if (value === undefined || value === null) return null;
  if (!/^\d{1,15}$/.test(value)) throw { status_code: 400, body: 'Upload-Metadata: folder must be the id of a folder.\n' } satisfies TusError;
  return Number(value);
}

/** A refusal in the shape @tus/server sends: status and plain-text body. */
interface TusError {
  readonly status_code: number;
  readonly body: string;
}

type NodeBacked = { runtime?: { node?: { req?: IncomingMessage; res?: ServerResponse } } };

export class UploadEndpoint {
  private readonly tus: Server;
  private readonly directPatch: DirectPatch;
  private readonly requests = new WeakMap<IncomingMessage, UploadRequest>();

  constructor(
    private readonly services: Services,
    private readonly log: Logger,
  ) {
    // No tus-side expiry: uploads expire by their database row (UPLOAD_LIFETIME_MS), which this
    // wrapper checks before tus sees the request, and housekeeping removes their files.
    const datastore = uploadDatastore(services);
    // Upload-Length is needed up front to check it against the limit and the quota.
    datastore.extensions = datastore.extensions.filter((extension) => extension !== 'creation-defer-length');

    this.tus = new Server({
      path: '/upload',
      datastore,
      // In the database, not in this process: the requests on one upload may reach any instance.
      locker: uploadLockerOf(services),
      maxSize: services.config.limits.maxUploadBytes,
      // Same origin only: no CORS headers.
      allowedOrigins: () => false,
      namingFunction: (req) => this.requestOf(req).newId,
      generateUrl: (req, { id }) => `${this.requestOf(req).baseUrl}/upload/${id}`,
      onUploadCreate: async (req, upload) => {
        const { caller, keys } = this.requestOf(req);
        try {
          const folderId = folderOfMetadata(upload.metadata);
          const key = folderId === null ? null : await keyForUploadInto(services.db, caller, folderId);
          const created = await beginUpload(services, caller.uid, upload.id, upload.size ?? -1, key);
          // tus writes the upload's first bytes (its header, when encrypted) right after this.
          if (key && created.encryption) keys.push(holdUploadKey(services, created, key.dataKey));
          nodeOf(req).res?.setHeader('Upload-Expires', created.expiresAt.toUTCString());
        } catch (error) {
          throw tusErrorOf(error);
        }
        return {};
      },
      onUploadFinish: async (req, upload: Upload) => {
        nodeOf(req).res?.removeHeader('Upload-Expires');
        return { headers: await this.finish(this.requestOf(req).caller, upload.id) };
      },
      onResponseError: async (req, error) => {
        if (isTusError(error)) return (await this.completedMeanwhile(req, error)) ?? undefined;
        return this.incident(error, nodeOf(req).res);
      },
    });
    this.directPatch = new DirectPatch({ datastore, locker: uploadLockerOf(services) });
  }

  /** Completes an upload whose last byte has arrived: the headers of the answer (its SHA-256). */
  private async finish(caller: Caller, id: string): Promise<Record<string, string>> {
    try {
      const completed = await completeUpload(this.services, caller.uid, id);
      return { [SHA256_HEADER]: completed.sha256 };
    } catch (error) {
      throw tusErrorOf(error);
    }
  }

  /** A fault of the server during an upload request: logged with an id the answer names. */
  private incident(error: unknown, res?: ServerResponse): TusError {
    if (outageRefusal(this.services.config, error)) {
      res?.setHeader('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
      return { status_code: 503, body: 'The service is temporarily unavailable. Try again in a moment.\n' };
    }
    const incident = newIncidentId();
    this.log.error('incident', { incident, path: '/upload/…', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    return { status_code: 500, body: `Internal error (incident ${incident}).\n` };
  }

  /** Answers the request if it is for /upload/; false when the path is not one. */
  async route(req: IncomingMessage, res: ServerResponse, url: RequestTarget): Promise<boolean> {
    const match = UPLOAD_PATH.exec(url.pathname);
    if (!match) return false;
    const id = match[1] || null;
    const method = req.method ?? 'GET';
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');

    if (method === 'OPTIONS') {
      await this.tus.handle(req, res);
      return true;
    }
    const allowed = id === null ? 'POST, OPTIONS' : 'HEAD, PATCH, DELETE, OPTIONS';
    if (!allowed.split(', ').includes(method)) {
      reply(res, 405, 'Method not allowed.\n', { Allow: allowed });
      return true;
    }

    const caller = await this.authenticate(req);
    if (!caller) {
      reply(res, 401, 'An upload needs the header Authorization: Bearer <token> with a live token.\n', { 'WWW-Authenticate': 'Bearer realm="fss"' });
      return true;
    }
    const keys: Array<() => void> = [];
    try {
      await this.answer(req, res, method, id, caller, keys);
    } finally {
      for (const release of keys) release();
    }
    return true;
  }

  /** Answers an authenticated request on /upload/ (`id` null: a creation). */
  private async answer(req: IncomingMessage, res: ServerResponse, method: string, id: string | null, caller: Caller, keys: Array<() => void>): Promise<void> {
    if (id !== null) {
      const upload = isUploadId(id) ? await findOwnUpload(this.services, caller.uid, id) : null;
      if (!upload) {
        reply(res, 404, 'Upload not found.\n');
        return;
      }
      if (upload.expiresAt.getTime() <= this.services.now().getTime()) {
        reply(res, 410, 'The upload has expired.\n');
        return;
      }
      if (upload.sha256 !== null) {
        await this.answerCompleted(req, res, caller, upload);
        return;
      }
      if (upload.encryption && method !== 'DELETE') {
        const dataKey = await unlockedKeyForUpload(this.services.db, caller, upload.encryption.keyId);
        if (!dataKey) {
          const unread = method === 'PATCH' ? { Connection: 'close' } : undefined;
          reply(res, 423, 'The upload is encrypted with the key of a folder this session has not unlocked: unlock the folder, then resume.\n', unread);
          return;
        }
        keys.push(holdUploadKey(this.services, upload, dataKey));
      }
      if (method === 'HEAD') {
        // All bytes here but never completed (a crash, a lost last answer): complete it now.
        const done = await completeIfArrived(this.services, caller.uid, id);
        if (done) {
          await this.answerCompleted(req, res, caller, { ...upload, sha256: done.sha256 });
          return;
        }
      }
      res.setHeader('Upload-Expires', upload.expiresAt.toUTCString());
      if (method === 'DELETE') {
        // Termination, without tus: the row goes first (the reservation with it), then the files.
        await cancelUpload(this.services, caller.uid, id);
        reply(res, 204, '');
        return;
      }
    }

    if (method === 'PATCH' && id !== null) {
      // The common PATCH is written from the Node stream directly (upload-patch.ts); the rest is tus'.
      try {
        if (await this.directPatch.patch(req, res, id, () => this.finish(caller, id))) return;
      } catch (error) {
        const refusal = isTusError(error) ? error : this.incident(error, res);
        this.directPatch.answer(res, refusal.status_code, { 'Content-Type': 'text/plain; charset=utf-8' }, true, refusal.body);
        return;
      }
    }

    const newId = randomBytes(16).toString('hex');
    this.requests.set(req, { caller, baseUrl: requestFacts(req, this.services.config).baseUrl, newId, keys });
    await this.tus.handle(req, res);
    if (method === 'POST' && res.statusCode !== 201) {
      // A creation that failed after its row was written (a body cut short, a disk error): the
      // client never learned the upload's URL, so nothing can resume it; free its reservation now.
      await cancelUpload(this.services, caller.uid, newId).catch((error: unknown) => {
        if (!(error instanceof OpError)) throw error; // not found: no row was written
      });
    }
  }

  /** A completed upload: HEAD and a repeated final PATCH answer with its hash; DELETE forgets it. */
  private async answerCompleted(req: IncomingMessage, res: ServerResponse, caller: Caller, upload: OwnUpload): Promise<void> {
    if (req.method === 'HEAD' || req.method === 'PATCH') {
      const answer = completedAnswer(req, upload.length, upload.sha256 ?? '');
      reply(res, answer.status, answer.body, answer.headers);
      return;
    }
    await cancelUpload(this.services, caller.uid, upload.id);
    reply(res, 204, '');
  }

  /** A PATCH or HEAD that waited for the lock while another request completed the upload: answered as completed, not tus' 404. */
  private async completedMeanwhile(req: object, error: TusError): Promise<TusError | undefined> {
    const node = nodeOf(req);
    const known = node.req && this.requests.get(node.req);
    const method = node.req?.method;
    if (error.status_code !== 404 || !known || !node.req || !node.res || (method !== 'PATCH' && method !== 'HEAD')) return undefined;
    const id = UPLOAD_PATH.exec(new URL(node.req.url ?? '/', 'http://host').pathname)?.[1];
    const upload = id ? await findOwnUpload(this.services, known.caller.uid, id) : null;
    if (!upload?.sha256) return undefined;
    const answer = completedAnswer(node.req, upload.length, upload.sha256);
    node.res.removeHeader('Upload-Expires');
    for (const [name, value] of Object.entries(answer.headers)) node.res.setHeader(name, value);
    return { status_code: answer.status, body: answer.body };
  }

  private async authenticate(req: IncomingMessage): Promise<Caller | null> {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '');
    if (!match) return null;
    try {
      return await authenticateBearer(this.services, match[1]);
    } catch (error) {
      if (error instanceof OpError && error.code === ResultCode.Unauthorized) return null;
      throw error;
    }
  }

  private requestOf(req: object): UploadRequest {
    const node = nodeOf(req).req;
    const known = node && this.requests.get(node);
    if (!known) throw new Error('an upload request reached tus without passing the wrapper');
    return known;
  }
}

/** The Node request and response behind @tus/server's web Request (srvx keeps them). */
function nodeOf(req: object): { req?: IncomingMessage; res?: ServerResponse } {
  return (req as unknown as NodeBacked).runtime?.node ?? {};
}

function reply(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.setHeader('Tus-Resumable', TUS_RESUMABLE);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (status === 204 || res.req.method === 'HEAD') {
    if (status !== 204) res.setHeader('Content-Length', Buffer.byteLength(body));
    res.writeHead(status);
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.writeHead(status);
  res.end(body);
}

function isTusError(error: unknown): error is TusError {
  return typeof error === 'object' && error !== null && typeof (error as TusError).status_code === 'number' && typeof (error as TusError).body === 'string';
}

/** Refusals of the operations become tus answers with the matching status; the rest stays an error. */
function tusErrorOf(error: unknown): unknown {
  if (!(error instanceof OpError)) return error;
  return { status_code: error.code, body: `${error.message}\n` } satisfies TusError;
}

/** A completed upload's answer to HEAD and PATCH: its hash; 204 to a repeated final (empty) PATCH, else 409 and close. */
function completedAnswer(req: IncomingMessage, length: number, sha256: string): { status: number; body: string; headers: Record<string, string> } {
  const headers = { 'Upload-Offset': String(length), [SHA256_HEADER]: sha256 };
  if (req.method === 'HEAD') return { status: 200, body: '', headers: { ...headers, 'Upload-Length': String(length) } };
  if (req.headers['upload-offset'] === String(length) && Number(req.headers['content-length'] ?? 0) === 0) return { status: 204, body: '', headers };
  return { status: 409, body: 'The upload is complete.\n', headers: { ...headers, Connection: 'close' } };
}
