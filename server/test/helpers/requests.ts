/**
 * Builds calls in each of the four forms, the way ordinary clients send them, and reads answers.
 */
import http from 'node:http';
import { operations, type OperationName, type OperationSpec } from '../../src/catalog/operations';

/** The catalog's operations by name (names are unique across services): `const { GetFiles } = ops`. */
export const ops = Object.fromEntries(operations.map((spec) => [spec.name, spec])) as unknown as Record<OperationName, OperationSpec>;

export type Form = 'soap11' | 'soap12' | 'get' | 'post';
export const FORMS: readonly Form[] = ['soap11', 'soap12', 'get', 'post'];

export type Value = string | number | bigint | Uint8Array | null;

export interface HttpAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers: http.IncomingHttpHeaders;
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function soapBody(op: OperationSpec, values: Record<string, Value>, namespace: string): string {
  let params = '';
  for (const param of op.params) {
    const value = values[param.name];
    if (value === undefined) continue;
    if (value === null) params += `<${param.name} xsi:nil="true" />`;
    else if (value instanceof Uint8Array) params += `<${param.name}>${Buffer.from(value).toString('base64')}</${param.name}>`;
    else params += `<${param.name}>${escapeXml(String(value))}</${param.name}>`;
  }
  return `<${op.name} xmlns="${namespace}">${params}</${op.name}>`;
}

export function soapEnvelope(version: '1.1' | '1.2', inner: string): string {
  const ns = version === '1.1' ? 'http://schemas.xmlsoap.org/soap/envelope/' : 'http://www.w3.org/2003/05/soap-envelope';
  return (
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
    `xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body>${inner}</soap:Body></soap:Envelope>`
  );
}

function formEncoded(op: OperationSpec, values: Record<string, Value>): string {
  const pairs: string[] = [];
  for (const param of op.params) {
    const value = values[param.name];
    if (value === undefined) continue;
    if (value instanceof Uint8Array) {
      for (const byte of value) pairs.push(`${param.name}=${byte}`);
    } else {
      pairs.push(`${param.name}=${encodeURIComponent(value === null ? '' : String(value))}`);
    }
  }
  return pairs.join('&');
}

export function send(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<HttpAnswer> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks).toString('utf8'),
          headers: res.headers,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Calls an operation in one of the four forms with the given parameter values (and any extra headers, e.g. X-Forwarded-For). */
export function callInForm(
  baseUrl: string,
  form: Form,
  op: OperationSpec,
  values: Record<string, Value>,
  namespace = 'http://tempuri.org/',
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const path = `/${op.service}.asmx`;
  switch (form) {
    case 'soap11':
      return send(baseUrl, 'POST', path, { ...headers, 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${namespace}${op.name}"` }, soapEnvelope('1.1', soapBody(op, values, namespace)));
    case 'soap12':
      return send(baseUrl, 'POST', path, { ...headers, 'Content-Type': 'application/soap+xml; charset=utf-8' }, soapEnvelope('1.2', soapBody(op, values, namespace)));
    case 'get':
      return send(baseUrl, 'GET', `${path}/${op.name}?${formEncoded(op, values)}`, headers);
    case 'post':
      return send(baseUrl, 'POST', `${path}/${op.name}`, { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' }, formEncoded(op, values));
  }
}

/** The result element of an answer in any form: the inside of <OpResult> for SOAP, the document for HTTP. */
export function resultXml(answer: HttpAnswer, op: OperationSpec): string {
  const soap = new RegExp(`<${op.name}Result>([\\s\\S]*)</${op.name}Result>`).exec(answer.body);
  if (soap) return soap[1];
  return answer.body.replace(/^<\?xml[^>]*\?>\n/, '');
}
