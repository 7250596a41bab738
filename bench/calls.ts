/**
 * Calls to the service as its clients make them: Login, then signed calls in the four forms, each
 * built once as raw request bytes (what the load generator replays: a sign carries no nonce, so the same
 * signed call may be sent again and again, as a client polling a folder does) and sent over a
 * keep-alive connection. The sign is computed by the protocol's reference implementation
 * (server/src/operations/accounts/signing.ts signRequest: docs/protocol.md §6).
 */
import http from 'node:http';
import { findOperation, type OperationSpec, type ServiceName } from '../server/src/catalog/operations';
import { signRequest } from '../server/src/operations/accounts/signing';

export type Form = 'soap11' | 'soap12' | 'get' | 'post';
export const FORMS: readonly Form[] = ['soap11', 'soap12', 'get', 'post'];
export const FORM_NAMES: Readonly<Record<Form, string>> = { soap11: 'SOAP 1.1', soap12: 'SOAP 1.2', get: 'HTTP GET', post: 'HTTP POST' };

export const NAMESPACE = 'http://tempuri.org/';

export interface Session {
  readonly uid: number;
  readonly token: string;
  readonly key: string;
  /** The token's expiry as Login answered it (the web app keeps it with the session). */
  readonly expires?: string;
}

/** One request, ready to send or to hand to the load generator. */
export interface RawRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

export interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  /** Milliseconds from sending to the last byte. */
  readonly ms: number;
}

export const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

export function operation(service: ServiceName, name: string): OperationSpec {
  const op = findOperation(service, name);
  if (!op) throw new Error(`no operation ${service}.${name}`);
  return op;
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A call in one form, with `values` for every parameter but sign (absent ones sent as ""). */
export function buildRequest(form: Form, op: OperationSpec, values: Readonly<Record<string, string>>): RawRequest {
  const params = op.params.map((p) => [p.name, values[p.name] ?? ''] as const);
  const base = `/${op.service}.asmx`;
  const action = `${NAMESPACE}${op.name}`;
  switch (form) {
    case 'soap11':
    case 'soap12': {
      const envelopeNs = form === 'soap11' ? 'http://schemas.xmlsoap.org/soap/envelope/' : 'http://www.w3.org/2003/05/soap-envelope';
      const prefix = form === 'soap11' ? 'soap' : 'soap12';
      const inner = params.map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`).join('');
      const body =
        `<?xml version="1.0" encoding="utf-8"?><${prefix}:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
        `xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:${prefix}="${envelopeNs}"><${prefix}:Body>` +
        `<${op.name} xmlns="${NAMESPACE}">${inner}</${op.name}></${prefix}:Body></${prefix}:Envelope>`;
      // As .NET proxies send them: SOAPAction for 1.1, action= in the Content-Type for 1.2.
      const headers: Record<string, string> =
        form === 'soap11'
          ? { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${action}"` }
          : { 'Content-Type': `application/soap+xml; charset=utf-8; action="${action}"` };
      return { method: 'POST', path: base, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) }, body };
    }
    case 'get':
      return { method: 'GET', path: `${base}/${op.name}?${formEncoded(params)}`, headers: {} };
    case 'post': {
      const body = formEncoded(params);
      return {
        method: 'POST',
        path: `${base}/${op.name}`,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(Buffer.byteLength(body)) },
        body,
      };
    }
  }
}

function formEncoded(params: ReadonlyArray<readonly [string, string]>): string {
  return params.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&');
}

/** A signed call: uid, token, the parameters, and the sign over all of them (docs/protocol.md §6). */
export function signedRequest(form: Form, op: OperationSpec, session: Session, params: Readonly<Record<string, string>>): RawRequest {
  const values: Record<string, string> = { uid: String(session.uid), token: session.token };
  for (const p of op.params) if (p.name !== 'sign' && p.name !== 'uid' && p.name !== 'token') values[p.name] = params[p.name] ?? '';
  values.sign = signRequest(session.key, op.name, Object.fromEntries(op.params.filter((p) => p.name !== 'sign').map((p) => [p.name, values[p.name] ?? ''])));
  return buildRequest(form, op, values);
}

export function send(baseUrl: string, request: RawRequest, options: { onData?: (chunk: Buffer) => void; keepBody?: boolean } = {}): Promise<Answer> {
  const url = new URL(request.path, baseUrl);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: request.method, headers: request.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      const keep = options.keepBody !== false;
      res.on('data', (chunk: Buffer) => {
        options.onData?.(chunk);
        if (keep) chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(request.body);
  });
}

/** The result element of an answer in any form (inside <OpResult> for SOAP, the document otherwise). */
export function resultOf(body: string): string {
  const soap = /<(\w+)Result>([\s\S]*)<\/\1Result>/.exec(body);
  return soap ? soap[2] : body.replace(/^<\?xml[^>]*\?>\s*/, '');
}

export const attribute = (xml: string, name: string): string | undefined => new RegExp(`\\b${name}="([^"]*)"`).exec(xml)?.[1];

/** The result code of an answer (0 = success), or NaN when it has none. */
export function resultCode(body: string): number {
  return Number(attribute(resultOf(body), 'code') ?? NaN);
}

/** Calls and checks: throws unless the service answered 200 with code 0. */
export async function callOk(baseUrl: string, request: RawRequest): Promise<Answer> {
  const answer = await send(baseUrl, request);
  const text = answer.body.toString('utf8');
  if (answer.status !== 200 || resultCode(text) !== 0) throw new Error(`${request.method} ${request.path.slice(0, 60)}: ${answer.status} ${text.slice(0, 500)}`);
  return answer;
}

export async function login(baseUrl: string, account: string, password: string): Promise<Session> {
  const op = operation('OAuthService', 'Login');
  const answer = await send(baseUrl, buildRequest('post', op, { uid: account, pwd: password }));
  const xml = answer.body.toString('utf8');
  const token = />([^<]*)<\/token>/.exec(xml)?.[1];
  const uid = attribute(xml, 'uid');
  const key = attribute(xml, 'key');
  if (!token || token === '0' || !uid || !key) throw new Error(`Login of ${account} refused: ${xml}`);
  return { uid: Number(uid), token, key, expires: attribute(xml, 'expires') };
}

/** A session by APILogin (no password hash: many sessions cost nothing). */
export async function apiLogin(baseUrl: string, apiKey: string): Promise<Session> {
  const answer = await send(baseUrl, buildRequest('post', operation('OAuthService', 'APILogin'), { sid: apiKey }));
  const xml = answer.body.toString('utf8');
  const token = />([^<]*)<\/token>/.exec(xml)?.[1];
  const uid = attribute(xml, 'uid');
  const key = attribute(xml, 'key');
  if (!token || token === '0' || !uid || !key) throw new Error(`APILogin refused: ${xml}`);
  return { uid: Number(uid), token, key, expires: attribute(xml, 'expires') };
}

/** A signed call by HTTP POST that must succeed; answers the result element. */
export async function callSigned(baseUrl: string, session: Session, service: ServiceName, name: string, params: Readonly<Record<string, string | number>>): Promise<string> {
  const text = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const answer = await callOk(baseUrl, signedRequest('post', operation(service, name), session, text));
  return resultOf(answer.body.toString('utf8'));
}

/** Number of <folder …/> and <file …/> elements in a listing answer. */
export function countItems(body: string): number {
  let n = 0;
  for (let i = body.indexOf('<f'); i >= 0; i = body.indexOf('<f', i + 2)) {
    if (body.startsWith('<folder ', i) || body.startsWith('<file ', i)) n++;
  }
  return n;
}
