/**
 * GET/HEAD /d/{token}/{name}, the signed URLs FileDownload hands out (statuses, Range, validators, headers: docs/protocol.md
 * §13.2). Several ranges get the whole file (RFC 9110 lets a server ignore Range; download managers ask one at a time).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '../../log';
import type { Services } from '../../operations/context';
import { openGrantedFile, verifyDownloadToken, type Downloadable } from '../../operations/content/downloads';
import { answer } from '../http-common';
import { newIncidentId } from '../pipeline';
import { routePath, type RequestTarget } from '../request-target';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  txt: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  json: 'application/json',
  xml: 'application/xml',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  '7z': 'application/x-7z-compressed',
  rar: 'application/vnd.rar',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  bmp: 'image/bmp',
  ico: 'image/x-icon',
  heic: 'image/heic',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  avi: 'video/x-msvideo',
};

/** The media type of a file by its (lowercase) extension; unknown → application/octet-stream. */
export function contentTypeOf(ext: string): string {
  return Object.hasOwn(CONTENT_TYPES, ext) ? CONTENT_TYPES[ext] : 'application/octet-stream';
}

/** `attachment; filename="…"; filename*=UTF-8''…` (RFC 6266): an ASCII fallback for old clients, the exact name for current ones. */
export function contentDisposition(name: string, type: 'attachment' | 'inline' = 'attachment'): string {
  const fallback = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

export type RangeChoice =
  | { readonly kind: 'whole' }
  | { readonly kind: 'part'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

/** What a Range header asks of `size` bytes (docs/protocol.md §13.2). */
export function chooseRange(header: string | undefined, size: number): RangeChoice {
  if (header === undefined) return { kind: 'whole' };
  const match = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  if (!match) return { kind: 'whole' };
  const specs = match[1]
    .split(',')
    .map((spec) => spec.trim())
    .filter((spec) => spec !== '');
  const parsed: Array<{ first: number | null; last: number | null }> = [];
  for (const spec of specs) {
    const parts = /^(\d*)\s*-\s*(\d*)$/.exec(spec);
    if (!parts || (parts[1] === '' && parts[2] === '')) return { kind: 'whole' };
    const first = parts[1] === '' ? null : Number(parts[1]);
    const last = parts[2] === '' ? null : Number(parts[2]);
    if (first !== null && last !== null && first > last) return { kind: 'whole' };
    parsed.push({ first, last });
  }
  if (parsed.length !== 1) return { kind: 'whole' };
  const [{ first, last }] = parsed;
  if (first === null) {
    // Suffix: the last `last` bytes.
    if (last === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - (last as number)), end: size - 1 };
  }
  if (first >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start: first, end: last === null ? size - 1 : Math.min(last, size - 1) };
}

/** If-None-Match (weak comparison): `*` or any listed tag with the same opaque value. */
export function noneMatch(header: string | string[] | undefined, etag: string): boolean {
  const value = single(header);
  if (value === undefined) return false;
  if (value.trim() === '*') return true;
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** The opening of the capability routes (/d/, /l/, /v/, /s/image/): their own path, GET and HEAD only (else 405), plain-text refusals. */
export abstract class CapabilityRoute {
  protected abstract readonly path: RegExp;
  /** Headers every answer of the route carries, refusals included. */
  protected readonly answerHeaders: Record<string, string> = {};

  constructor(
    protected readonly services: Services,
    protected readonly log: Logger,
  ) {}

  /** Answers the request if the path is this route's; false when it is not. */
  async route(req: IncomingMessage, res: ServerResponse, url: RequestTarget): Promise<boolean> {
    const match = this.path.exec(routePath(url.pathname));
    if (!match) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') refuse(res, 405, 'Method not allowed.', { ...this.answerHeaders, Allow: 'GET, HEAD' });
    else await this.answer(req, res, match.slice(1));
    return true;
  }

  protected abstract answer(req: IncomingMessage, res: ServerResponse, captures: readonly string[]): Promise<void>;
}

export class DownloadRoute extends CapabilityRoute {
  protected readonly path = /^\/d\/([^/]+)(?:\/[^/]*)?$/;

  protected async answer(req: IncomingMessage, res: ServerResponse, [token]: readonly string[]): Promise<void> {
    const check = verifyDownloadToken(this.services.secret, token, this.services.now());
    if (check.kind === 'invalid') return refuse(res, 403, 'This download link is not valid.');
    if (check.kind === 'expired') return refuse(res, 410, 'This download link has expired. Ask for a new one.');
    const lookup = await openGrantedFile(this.services, check.grant);
    if (lookup.kind === 'notFound') return refuse(res, 404, 'This file is no longer available.');
    if (lookup.kind === 'locked') return refuse(res, 423, 'This file is encrypted: unlock it and ask for a new link.');
    await serveFile(req, res, lookup.file, this.log, { logPath: '/d/…' });
  }
}

/** What a route adds to serveFile. */
export interface ServeOptions {
  /** The route as logged (never the capability in the path): `/d/…`. */
  readonly logPath: string;
  /** Called when a GET is about to send bytes (200 or 206), with the range sent (undefined: whole file): links count hits here. */
  readonly onTransfer?: (range: { readonly start: number; readonly end: number } | undefined) => Promise<void>;
  /** The type decided by the route (the previews sniff it); the extension's otherwise. */
  readonly contentType?: string;
  /** Headers to add to every answer (the previews: an inline disposition, even on 304 and 416). */
  readonly headers?: Record<string, string>;
}

/** Answers a GET or HEAD with `file`: validators, one Range, disposition and safety headers, bytes streamed with backpressure. */
export async function serveFile(req: IncomingMessage, res: ServerResponse, file: Downloadable, log: Logger, options: ServeOptions): Promise<void> {
  const etag = `"${file.sha256}"`;
  const headers: Record<string, string | number> = {
    ETag: etag,
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'private, no-cache',
    'X-Content-Type-Options': 'nosniff',
    // Should a browser ever render it anyway: no scripts, no subresources, a unique origin.
    'Content-Security-Policy': "default-src 'none'; sandbox",
    ...options.headers,
  };

  if (noneMatch(req.headers['if-none-match'], etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }

  const ifRange = single(req.headers['if-range']);
  const rangeHeader = ifRange === undefined || ifRange.trim() === etag ? req.headers.range : undefined;
  const range = chooseRange(rangeHeader, file.size);
  if (range.kind === 'unsatisfiable') {
    refuse(res, 416, 'The requested range is not satisfiable.', { ...stringValues(headers), 'Content-Range': `bytes */${file.size}` });
    return;
  }

  headers['Content-Type'] = options.contentType ?? contentTypeOf(file.ext);
  headers['Content-Disposition'] ??= contentDisposition(file.name);
  let status = 200;
  if (range.kind === 'part') {
    status = 206;
    headers['Content-Range'] = `bytes ${range.start}-${range.end}/${file.size}`;
    headers['Content-Length'] = range.end - range.start + 1;
  } else {
    headers['Content-Length'] = file.size;
  }

  const sent = range.kind === 'part' ? { start: range.start, end: range.end } : undefined;
  if (req.method === 'HEAD' || headers['Content-Length'] === 0) {
    if (req.method !== 'HEAD') await options.onTransfer?.(sent);
    res.writeHead(status, headers);
    res.end();
    return;
  }
  // Opened before the head goes out, so that a missing blob becomes a clean 500.
  const body = await file.open(sent);
  try {
    await options.onTransfer?.(sent);
  } catch (error) {
    body.destroy();
    throw error;
  }
  res.writeHead(status, headers);
  await streamBody(body, res, log, options.logPath);
}

/** A body served whole (no Range), with a strong validator: cover images, preview renditions. */
export interface WholeBody {
  readonly etag: string;
  readonly contentType: string;
  readonly size: number;
  open(): Promise<NodeJS.ReadableStream>;
}

/** Answers a GET or HEAD with `body`: If-None-Match → 304, else 200; `headers` go on both. */
export async function serveWhole(req: IncomingMessage, res: ServerResponse, body: WholeBody, headers: Record<string, string>, log: Logger, logPath: string): Promise<void> {
  const head: Record<string, string | number> = { ETag: body.etag, ...headers };
  if (noneMatch(req.headers['if-none-match'], body.etag)) {
    res.writeHead(304, head);
    res.end();
    return;
  }
  head['Content-Type'] = body.contentType;
  head['Content-Length'] = body.size;
  if (req.method === 'HEAD') {
    res.writeHead(200, head);
    res.end();
    return;
  }
  // Opened before the head goes out, so that a missing blob becomes a clean 500.
  const stream = await body.open();
  res.writeHead(200, head);
  await streamBody(stream, res, log, logPath);
}

/** Sends `body` after the head, with backpressure; `logPath` is the route as logged. */
export async function streamBody(body: NodeJS.ReadableStream, res: ServerResponse, log: Logger, logPath: string): Promise<void> {
  try {
    await pipeline(body, res);
  } catch (error) {
    // A client that goes away mid-download is ordinary; anything else is worth a log line.
    if (!res.destroyed || (error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
      log.error('incident', { incident: newIncidentId(), path: logPath, error: error instanceof Error ? error.message : String(error) });
    }
    res.destroy();
  }
}

/** A refusal as plain text, kept out of caches. */
export function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  answer(res, { status, contentType: 'text/plain; charset=utf-8', cacheControl: 'no-store', headers }, message + '\n');
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function stringValues(headers: Record<string, string | number>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)]));
}
