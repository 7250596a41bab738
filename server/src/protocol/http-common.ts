/** What every binding shares: content types, bounded request bodies, answers with ASMX's headers, request facts. */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config';
import { clientAddressOf, requestSchemeOf } from './client-address';
import { XmlWriter, type XmlSink, type XmlWriterOptions } from './asmx/xml-writer';

export interface ContentType {
  readonly mediaType: string;
  readonly params: ReadonlyMap<string, string>;
  /** The header exactly as sent, for messages. */
  readonly raw: string;
}

/** Parsed on every call: a memo by header text gained nothing measurable (docs/design.md, "Caches"). */
export function parseContentType(header: string | undefined): ContentType | null {
  if (header === undefined || header.trim() === '') return null;
  const [type, ...rest] = header.split(';');
  const params = new Map<string, string>();
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    params.set(name, value);
  }
  return { mediaType: type.trim().toLowerCase(), params, raw: header };
}

/** Cache-Control of answers that come from an operation, and of answers that did not reach one. */
export const OPERATION_CACHE = 'private, max-age=0';
export const BINDING_CACHE = 'private';

export class BodyTooLargeError extends Error {}

const DISCARD_LIMIT = 16 * 1024 * 1024;
const LINGER_MS = 2_000;

/**
 * Every connection of `server` closes after an answer with `Connection: close` as RFC 9112 §9.6 asks: the answer and a
 * FIN first, then what the client still sends is read and dropped until it closes (at most 2 s or 16 MiB). Node's own
 * close resets a connection that has unread bytes, and a client's stack that meets the reset throws the answer away.
 */
export function closeConnectionsGently(server: Server): void {
  server.on('connection', (socket: Socket) => (socket.destroySoon = lingerThenClose));
}

function lingerThenClose(this: Socket): void {
  this.removeAllListeners('data'); // the HTTP parser's: nothing after this answer is a request
  let dropped = 0;
  this.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_LIMIT) this.destroy();
  });
  this.once('end', () => this.destroy());
  const timer = setTimeout(() => this.destroy(), LINGER_MS);
  this.once('close', () => clearTimeout(timer));
  this.end();
  this.resume();
}

/** Reads a body of at most `limit` bytes; beyond it the rest is discarded (then the connection dropped), so 100 MB costs no memory. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      discard(req);
      reject(new BodyTooLargeError());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        discard(req);
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      // A small body comes in one piece, a view of the socket's read (never written to again): no copy.
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', (error) => {
      if (done) return;
      done = true;
      reject(error);
    });
  });
}

function discard(req: IncomingMessage): void {
  let discarded = 0;
  req.removeAllListeners('data');
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_LIMIT) req.socket.destroy();
  });
  req.on('error', () => {});
  req.resume();
}

export interface AnswerOptions {
  readonly status: number;
  readonly contentType?: string;
  readonly cacheControl?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Sends a complete answer. An empty body with no content type is sent as ASMX does (Content-Length: 0). */
export function answer(res: ServerResponse, options: AnswerOptions, body: string | Buffer = ''): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  // All headers in one writeHead: Node then writes them straight out instead of keeping a header map first.
  const headers: Record<string, string | number> = {};
  if (options.contentType) headers['Content-Type'] = options.contentType;
  if (options.cacheControl) headers['Cache-Control'] = options.cacheControl;
  headers['X-Content-Type-Options'] = 'nosniff';
  if (options.headers) Object.assign(headers, options.headers);
  headers['Content-Length'] = bytes.length;
  res.writeHead(options.status, headers);
  res.end(res.req.method === 'HEAD' ? undefined : bytes);
}

/** HTTP GET/POST and layer-1 errors: 500, the message and a newline, as text. */
export function answerPlainText(res: ServerResponse, message: string, cacheControl = BINDING_CACHE, status = 500, closeConnection = false): void {
  const headers: Record<string, string> = closeConnection ? { Connection: 'close' } : {};
  answer(res, { status, contentType: 'text/plain; charset=utf-8', cacheControl, headers }, message + '\n');
}

/** Streams an XML document: small ones in one piece with Content-Length, large ones chunked as written, awaiting drain. */
export async function answerXmlStream(
  res: ServerResponse,
  options: AnswerOptions,
  writerOptions: XmlWriterOptions,
  render: (writer: XmlWriter) => Promise<void>,
): Promise<void> {
  let streaming = false;
  let pending = '';
  const send = (chunk: string): void | Promise<void> => {
    if (res.destroyed) throw new ClientGoneError();
    if (res.req.method === 'HEAD') return;
    if (res.write(chunk)) return;
    // Wait for the socket to drain, or stop rendering at once if the client has gone: a listing
    // must not hold its database cursor for a reader that will never come back.
    return new Promise<void>((resolve, reject) => {
      const onDrain = () => {
        res.off('close', onClose);
        resolve();
      };
      const onClose = () => {
        res.off('drain', onDrain);
        reject(new ClientGoneError());
      };
      res.once('drain', onDrain);
      res.once('close', onClose);
    });
  };
  // Everything is collected until it passes 64 KiB; only then do the headers go out, chunked.
  const sink: XmlSink = {
    write(chunk) {
      if (streaming) return send(chunk);
      pending += chunk;
      if (pending.length < 64 * 1024) return;
      streaming = true;
      res.statusCode = options.status;
      if (options.contentType) res.setHeader('Content-Type', options.contentType);
      if (options.cacheControl) res.setHeader('Cache-Control', options.cacheControl);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      const head = pending;
      pending = '';
      return send(head);
    },
  };
  const writer = new XmlWriter(sink, writerOptions);
  await render(writer);
  await writer.flush();
  if (streaming) res.end();
  else answer(res, options, pending);
}

/** The client closed the connection while an answer was being written. Nothing to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super('the client closed the connection');
    this.name = 'ClientGoneError';
  }
}

export interface RequestFacts {
  /** The client's address: the TCP peer, or behind a trusted proxy its X-Forwarded-For (client-address.ts). */
  readonly clientAddress: string;
  /** FSS_PUBLIC_URL, else the request's own scheme and host. */
  readonly baseUrl: string;
  /** The Accept-Language header ('' when absent): share e-mails are written in it. */
  readonly acceptLanguage: string;
}

const HOST_HEADER = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export function requestFacts(req: IncomingMessage, config: Config): RequestFacts {
  const host = req.headers.host;
  const ownHost = host && HOST_HEADER.test(host) ? host : `${config.host}:${config.port}`;
  return {
    clientAddress: clientAddressOf(req, config),
    baseUrl: config.publicUrl ?? `${requestSchemeOf(req, config)}://${ownHost}`,
    acceptLanguage: (req.headers['accept-language'] ?? '').slice(0, 200),
  };
}
