// The client of the tus 1.0 endpoint at /upload/ (docs/uploads-and-downloads.md §1). XMLHttpRequest, not fetch: it reports progress within a PATCH.
// Failures are ApiErrors: 'Network' without an answer (or no progress for STALL_MS), else the HTTP status's result code; a 401 ends the session.
import { ApiError, resultCodeName } from './errors';
import { session as defaultSession, type SessionStore } from './session';

const TUS_VERSION = '1.0.0';
/** A PATCH whose bytes stop moving for this long is given up (and retried by the engine from HEAD's offset). */
const STALL_MS = 30_000;
/** Requests without a body: answered quickly or not at all. */
const SHORT_TIMEOUT_MS = 60_000;

export interface TusAnswer {
  readonly status: number;
  header(name: string): string | null;
}

export interface TusClientOptions {
  /** Where the endpoint is; '/upload/' on the page's origin by default. */
  readonly endpoint?: string;
  readonly session?: SessionStore;
}

/** The answer to a tus request that may have completed the upload: Upload-Offset, and Upload-SHA256 once complete. */
export interface TusProgress {
  readonly offset: number;
  readonly sha256?: string;
}

export interface PatchOptions {
  readonly signal: AbortSignal;
  /** Bytes of this chunk sent so far; called as they go (for progress), not necessarily at the end. */
  readonly onProgress?: (sent: number) => void;
}

export interface TusClient {
  /** The upload's URL (Location) and Upload-Expires as ms since the epoch, when the server said. */
  createUpload(length: number, metadata: Readonly<Record<string, string>>, signal: AbortSignal): Promise<TusProgress & { readonly url: string; readonly expires?: number }>;
  headUpload(url: string, signal: AbortSignal): Promise<TusProgress & { readonly length: number }>;
  patchUpload(url: string, offset: number, chunk: Blob, options: PatchOptions): Promise<TusProgress>;
  /** Termination: frees the server's quota reservation. Best effort. */
  deleteUpload(url: string): Promise<void>;
}

function base64Utf8(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** `Upload-Metadata`: `key base64(value)` pairs, comma-separated. */
export function encodeMetadata(metadata: Readonly<Record<string, string>>): string {
  return Object.entries(metadata)
    .map(([key, value]) => `${key} ${base64Utf8(value)}`)
    .join(',');
}

function numberHeader(answer: TusAnswer, name: string): number {
  const text = answer.header(name);
  const value = text === null ? NaN : Number(text);
  if (!Number.isSafeInteger(value) || value < 0) throw new ApiError('Protocol', `The upload service sent no valid ${name}.`, {}, answer.status);
  return value;
}

const sha256Of = (answer: TusAnswer) => answer.header('Upload-SHA256')?.trim().toLowerCase() || undefined;

function refusal(status: number, body: string): ApiError {
  const code = resultCodeName(status);
  const message = body.trim().split('\n')[0] || `The upload service answered HTTP ${status}.`;
  return new ApiError(code === 'Unknown' ? 'Protocol' : code, message, {}, status);
}

export function createTusClient(options: TusClientOptions = {}): TusClient {
  const sessions = options.session ?? defaultSession;
  const endpoint = options.endpoint ?? '/upload/';

  interface Send {
    readonly method: 'POST' | 'HEAD' | 'PATCH' | 'DELETE';
    readonly url: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly body?: Blob;
    readonly signal?: AbortSignal;
    readonly onProgress?: (sent: number) => void;
    readonly expect: readonly number[];
  }

  function send(request: Send): Promise<TusAnswer> {
    const current = sessions.get();
    if (!current) return Promise.reject(new ApiError('Unauthorized', 'You are not logged in.', {}, 401));
    return new Promise<TusAnswer>((resolve, reject) => {
      const { signal } = request;
      if (signal?.aborted) return reject(signal.reason);
      const xhr = new XMLHttpRequest();
      xhr.open(request.method, request.url);
      xhr.setRequestHeader('Tus-Resumable', TUS_VERSION);
      xhr.setRequestHeader('Authorization', `Bearer ${current.token}`);
      for (const [name, value] of Object.entries(request.headers)) xhr.setRequestHeader(name, value);
      if (!request.body) xhr.timeout = SHORT_TIMEOUT_MS;

      let stall: ReturnType<typeof setTimeout> | undefined;
      let stalled = false;
      const watch = () => {
        clearTimeout(stall);
        stall = setTimeout(() => {
          stalled = true;
          xhr.abort();
        }, STALL_MS);
      };
      const done = () => {
        clearTimeout(stall);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => xhr.abort();
      signal?.addEventListener('abort', onAbort, { once: true });

      if (request.body) {
        watch();
        xhr.upload.onprogress = (event) => {
          watch();
          request.onProgress?.(event.loaded);
        };
        // Every byte is out: the server may now hash a big file before it answers; no stall watch.
        xhr.upload.onload = () => clearTimeout(stall);
      }
      xhr.onload = () => {
        done();
        const answer: TusAnswer = { status: xhr.status, header: (name) => xhr.getResponseHeader(name) };
        if (request.expect.includes(xhr.status)) return resolve(answer);
        if (xhr.status === 401) sessions.unauthorized(current.token);
        reject(refusal(xhr.status, typeof xhr.responseText === 'string' ? xhr.responseText : ''));
      };
      const broken = () => {
        done();
        if (signal?.aborted && !stalled) return reject(signal.reason);
        reject(new ApiError('Network', stalled ? 'The upload stopped moving.' : 'Cannot reach the service. Check the connection.'));
      };
      xhr.onerror = broken;
      xhr.ontimeout = broken;
      xhr.onabort = broken;
      xhr.send(request.body ?? null);
    });
  }

  /** The upload's URL, absolute, from the page's address (the Location may be relative). */
  const absolute = (url: string) => new URL(url, globalThis.location?.href ?? 'http://localhost/').href;

  return {
    async createUpload(length, metadata, signal) {
      const headers: Record<string, string> = { 'Upload-Length': String(length) };
      const encoded = encodeMetadata(metadata);
      if (encoded) headers['Upload-Metadata'] = encoded;
      const answer = await send({ method: 'POST', url: absolute(endpoint), headers, signal, expect: [201] });
      const location = answer.header('Location');
      if (!location) throw new ApiError('Protocol', 'The upload service sent no Location.', {}, answer.status);
      const expiresText = answer.header('Upload-Expires');
      const expires = expiresText ? Date.parse(expiresText) : NaN;
      const offsetText = answer.header('Upload-Offset');
      return {
        url: absolute(location),
        offset: offsetText === null ? 0 : numberHeader(answer, 'Upload-Offset'),
        sha256: sha256Of(answer),
        expires: Number.isNaN(expires) ? undefined : expires,
      };
    },
    async headUpload(url, signal) {
      const answer = await send({ method: 'HEAD', url, headers: { 'Cache-Control': 'no-store' }, signal, expect: [200, 204] });
      return { offset: numberHeader(answer, 'Upload-Offset'), length: numberHeader(answer, 'Upload-Length'), sha256: sha256Of(answer) };
    },
    async patchUpload(url, offset, chunk, { signal, onProgress }) {
      const answer = await send({
        method: 'PATCH',
        url,
        headers: { 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
        body: chunk,
        signal,
        onProgress,
        expect: [204],
      });
      return { offset: numberHeader(answer, 'Upload-Offset'), sha256: sha256Of(answer) };
    },
    async deleteUpload(url) {
      await send({ method: 'DELETE', url, headers: {}, expect: [204] });
    },
  };
}
