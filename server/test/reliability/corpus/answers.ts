/**
 * What an answer must be, per form, as DECISIONS.md §3 and docs/protocol.md §4 decide it, and the
 * check of an actual answer against it. Every check also holds for every answer: no stack trace,
 * nothing read from the server's files, no layer-3 incident.
 */
import type { OperationSpec } from '../../../src/catalog/operations';
import type { Form } from '../../helpers/requests';
import type { Answer } from './wire';

/** The refusal codes of DECISIONS.md §3, layer 2. */
export const REFUSAL_CODES = ['400', '401', '403', '404', '409', '413', '423', '429'] as const;

export type Expected =
  /** SOAP, layer 1: HTTP 400 with an empty body. */
  | { readonly kind: 'empty400' }
  /** SOAP, layer 1: a fault of the request's version, HTTP 500. */
  | { readonly kind: 'fault'; readonly code: 'Client' | 'Server'; readonly text: string | RegExp }
  /** HTTP GET/POST, layer 1: HTTP 500, text/plain, the message and a newline. */
  | { readonly kind: 'plain'; readonly text: string | RegExp }
  /** A bare status: 415 (SOAP without a usable content type), 431 (request line over Node's limit). */
  | { readonly kind: 'status'; readonly status: number }
  /** The ASP.NET-style HTML error page. */
  | { readonly kind: 'html'; readonly status: number; readonly text: string }
  /**
   * Layer 2: HTTP 200 and the operation's own result document, refused with one of `codes`; a
   * listing may also answer (code 0) when `readOk`. Login and APILogin refuse with <token>0</token>,
   * ShareImageUpload with the string `ERROR <code> …`.
   */
  | { readonly kind: 'refused'; readonly codes: readonly string[]; readonly readOk?: boolean };

export const refused = (...codes: string[]): Expected => ({ kind: 'refused', codes: codes.length > 0 ? codes : REFUSAL_CODES });

const isSoap = (form: Form) => form === 'soap11' || form === 'soap12';

/** The version a SOAP form answers in, and the fault code name it uses for Client/Server. */
function faultCodeText(form: Form, code: 'Client' | 'Server'): string {
  if (form === 'soap11') return `<faultcode>soap:${code}</faultcode>`;
  return `<soap:Value>soap:${code === 'Client' ? 'Sender' : 'Receiver'}</soap:Value>`;
}

const soapContentType = (form: Form) => (form === 'soap12' ? 'application/soap+xml; charset=utf-8' : 'text/xml; charset=utf-8');

function matches(text: string, pattern: string | RegExp): boolean {
  return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
}

/** Why an answer is not the expected one, or null when it is. */
export function mismatch(answer: Answer, expected: Expected, op: OperationSpec, form: Form): string | null {
  const body = answer.body;
  if (/\bat [\w.<>]+ \(|node_modules|\.ts:\d+:\d+/.test(body)) return 'the answer shows a stack trace';
  if (/root:x?:0:0:|\[boot loader\]|for 16-bit app support/.test(body)) return 'the answer holds a file of the server';
  if (/Internal error \(incident/.test(body)) return 'the answer is a layer-3 incident';
  switch (expected.kind) {
    case 'empty400':
      if (answer.status !== 400 || body !== '') return `expected an empty 400, got ${answer.status}`;
      return null;
    case 'status':
      return answer.status === expected.status ? null : `expected ${expected.status}, got ${answer.status}`;
    case 'html':
      if (answer.status !== expected.status || !answer.contentType.startsWith('text/html') || !body.includes(expected.text)) {
        return `expected an HTML ${expected.status} page "${expected.text}", got ${answer.status} ${answer.contentType}`;
      }
      return null;
    case 'fault':
      if (!isSoap(form)) return `a fault expected of a SOAP form, not ${form}`;
      if (answer.status !== 500 || answer.contentType !== soapContentType(form)) return `expected a SOAP fault (500, ${soapContentType(form)}), got ${answer.status} ${answer.contentType}`;
      if (!body.includes(faultCodeText(form, expected.code))) return `expected a ${expected.code} fault`;
      return matches(body, expected.text) ? null : `the fault does not say ${String(expected.text)}`;
    case 'plain':
      if (answer.status !== 500 || answer.contentType !== 'text/plain; charset=utf-8' || !body.endsWith('\n')) {
        return `expected a plain-text 500, got ${answer.status} ${answer.contentType}`;
      }
      return matches(body, expected.text) ? null : `the plain-text error does not say ${String(expected.text)}`;
    case 'refused': {
      const contentType = isSoap(form) ? soapContentType(form) : 'text/xml; charset=utf-8';
      if (answer.status !== 200 || answer.contentType !== contentType) return `expected a layer-2 answer (200, ${contentType}), got ${answer.status} ${answer.contentType}`;
      const code = layer2Code(body, op);
      if (code === null) return `the answer is not ${op.name}'s result document`;
      if (expected.codes.includes(code)) return null;
      if (code === '0' && expected.readOk) return null;
      return `expected code ${expected.codes.join('|')}${expected.readOk ? '|0' : ''}, got ${code}`;
    }
  }
}

/** The code of a layer-2 answer: <result code>, a refused <token>0</token> (as 'token0'), or ERROR <code>. */
export function layer2Code(body: string, op: OperationSpec): string | null {
  if (op.result === 'token') {
    if (/<token(?: [^>]*)?>0<\/token>/.test(body)) return 'token0';
    return /<token [^>]*uid="\d+"[^>]*>[^<]+<\/token>/.test(body) ? '0' : null;
  }
  if (op.result === 'string') {
    const error = /<(?:string xmlns="[^"]*"|ShareImageUploadResult)>ERROR (\d{3}) /.exec(body);
    if (error) return error[1];
    return /<(?:string xmlns="[^"]*"|ShareImageUploadResult)>[^<]*</.test(body) ? '0' : null;
  }
  const result = /<result code="(\d+)" msg="[^"]*"/.exec(body);
  return result ? result[1] : null;
}

/** A layer-2 expectation adapted to the operation's result kind: token operations refuse with <token>0</token>. */
export function forOperation(expected: Expected, op: OperationSpec): Expected {
  if (expected.kind !== 'refused' || op.result !== 'token') return expected;
  return { kind: 'refused', codes: ['token0'] };
}
