/**
 * Requests of the hostile corpus, byte for byte: the four call forms built from parameter texts
 * (so that a value can be anything, not only what a well-behaved client would send), sent with a
 * time bound, and their answers read into the three layers of DECISIONS.md §3.
 */
import http from 'node:http';
import type { OperationSpec } from '../../../src/catalog/operations';
import { signRequest } from '../../../src/operations/accounts/signing';
import type { Form } from '../../helpers/requests';

export const NAMESPACE = 'http://tempuri.org/';
export const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** Every request must be answered within this time: a request that is not is a hang. */
export const ANSWER_WITHIN_MS = 10_000;

export interface RawRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
}

export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers: http.IncomingHttpHeaders;
}

/** One parameter as it goes on the wire: its text, or absent; `repeat` sends it a second time. */
export type ParamTexts = Record<string, string | undefined>;

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The sign a client computes over these texts (every parameter but sign, absent ones as ""). */
export function signFor(op: OperationSpec, key: string, texts: ParamTexts): string {
  const covered: Record<string, string> = {};
  for (const p of op.params) if (p.name !== 'sign') covered[p.name] = texts[p.name] ?? '';
  try {
    return signRequest(key, op.name, covered);
  } catch {
    // A lone surrogate cannot be percent-encoded: no client can sign it, the server cannot verify it.
    return '0'.repeat(64);
  }
}

/** The operation element with these parameter elements; `rawXml` texts go in unescaped. */
export function operationElement(op: OperationSpec, texts: ParamTexts, rawXml: ReadonlySet<string> = new Set(), extra = ''): string {
  let params = '';
  for (const p of op.params) {
    const text = texts[p.name];
    if (text === undefined) continue;
    params += `<${p.name}>${rawXml.has(p.name) ? text : escapeXml(text)}</${p.name}>`;
  }
  return `<${op.name} xmlns="${NAMESPACE}">${params}${extra}</${op.name}>`;
}

export function envelope(version: '1.1' | '1.2', inner: string, prolog = '<?xml version="1.0" encoding="utf-8"?>'): string {
  return (
    `${prolog}<soap:Envelope xmlns:soap="${version === '1.1' ? SOAP11 : SOAP12}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
    `xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body>${inner}</soap:Body></soap:Envelope>`
  );
}

/**
 * A SOAP request. SOAP 1.1 names its operation in SOAPAction (read under that operation's limit);
 * SOAP 1.2 is routed by its body, as zeep and .NET send it, unless `action` is given.
 */
export function soapRequest(op: OperationSpec, version: '1.1' | '1.2', body: string | Buffer, options: { action?: boolean; contentType?: string } = {}): RawRequest {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const headers: Record<string, string> =
    version === '1.1'
      ? { 'Content-Type': options.contentType ?? 'text/xml; charset=utf-8', SOAPAction: `"${NAMESPACE}${op.name}"` }
      : { 'Content-Type': options.contentType ?? `application/soap+xml; charset=utf-8${options.action ? `; action="${NAMESPACE}${op.name}"` : ''}` };
  return { method: 'POST', path: `/${op.service}.asmx`, headers, body: bytes };
}

/** `name=value&…` with each text percent-encoded as a browser does; `raw` texts go in as they are. */
export function formEncoded(op: OperationSpec, texts: ParamTexts, raw: ReadonlySet<string> = new Set(), extra = ''): string {
  const pairs: string[] = [];
  for (const p of op.params) {
    const text = texts[p.name];
    if (text === undefined) continue;
    pairs.push(`${p.name}=${raw.has(p.name) ? text : encodeURIComponent(text)}`);
  }
  return pairs.join('&') + extra;
}

export function formRequest(op: OperationSpec, form: 'get' | 'post', query: string | Buffer, contentType = 'application/x-www-form-urlencoded'): RawRequest {
  const path = `/${op.service}.asmx/${op.name}`;
  if (form === 'get') return { method: 'GET', path: `${path}?${query.toString()}`, headers: {} };
  return { method: 'POST', path, headers: { 'Content-Type': contentType }, body: typeof query === 'string' ? Buffer.from(query, 'utf8') : query };
}

/** The request of an ordinary call in one of the four forms. */
export function callRequest(op: OperationSpec, form: Form, texts: ParamTexts): RawRequest {
  switch (form) {
    case 'soap11':
      return soapRequest(op, '1.1', envelope('1.1', operationElement(op, texts)));
    case 'soap12':
      return soapRequest(op, '1.2', envelope('1.2', operationElement(op, texts)));
    case 'get':
    case 'post':
      return formRequest(op, form, formEncoded(op, texts));
  }
}

/**
 * Sends a request and waits for its whole answer, at most ANSWER_WITHIN_MS. A server that closes
 * the connection after answering (an over-size body) still gives its answer; one that never
 * answers fails the test as a hang.
 */
export function sendRaw(baseUrl: string, request: RawRequest): Promise<Answer> {
  const url = new URL(request.path.replace(/^\/+/, '/'), baseUrl);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms: ${request.method} ${request.path.slice(0, 120)}`));
    }, ANSWER_WITHIN_MS);
    let answered = false;
    // A body always goes with its length (a GET's body too: without it, the body would be read as
    // the next request). A body over the limit goes on a connection of its own, which the server closes.
    const headers: Record<string, string> = { ...request.headers };
    if (request.body) headers['Content-Length'] = String(request.body.length);
    const large = (request.body?.length ?? 0) > 256 * 1024;
    const req = http.request(url, { method: request.method, headers: large ? { ...headers, Connection: 'close' } : headers, agent: large ? false : keepAlive }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8'), headers: res.headers });
      });
      res.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    req.on('error', (error) => {
      // Writing the rest of an over-size body to a server that has answered and closed: not a failure.
      if (answered) return;
      clearTimeout(timer);
      reject(error);
    });
    req.end(request.body);
  });
}
