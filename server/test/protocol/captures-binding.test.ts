/**
 * Every call the ASMX captures hold, replayed against our protocol layer: the parameters must
 * arrive as ASMX bound them (the capture stubs echoed them), and the answer's envelope must agree
 * with the capture byte for byte around the result element.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoundCall } from '../../src/protocol/asmx/binding';
import type { Outcome } from '../../src/protocol/asmx/results';
import { notImplemented } from '../../src/operations/errors';
import { captureNames, echoedParameters, loadRequest, loadResponse, replay, type RawResponse } from '../helpers/captures';
import { startProtocolServer, type ProtocolServer } from '../helpers/protocol-server';

let server: ProtocolServer;

/** What the stand-in answers: ShareImageUpload the stub's "len=N", Login a refusal, others 501. */
function stubAnswer(call: BoundCall): Outcome {
  if (call.op.result === 'string') {
    const bytes = call.values.byteFileStream as Buffer | null;
    return { kind: 'result', result: { kind: 'string', value: `len=${bytes?.length ?? 0}` } };
  }
  if (call.op.result === 'token') return { kind: 'result', result: { kind: 'tokenRefused' } };
  return { kind: 'refusal', refusal: notImplemented(call.op.name) };
}

beforeAll(async () => {
  server = await startProtocolServer(stubAnswer);
});
afterAll(() => server.close());

/** Where we bind differently from the Mono capture, on purpose (ASMX-WIRE.md "Parameters", "We differ"). */
const intendedValues: Record<string, Record<string, string | null>> = {
  // %uXXXX is decoded in the query string too (Mono leaves it; .NET's own proxies send it).
  '02-calls/FileAdd-get-percent-u': { name: '季度报告 & 总结.docx' },
  // text/xml without a charset is read as UTF-8, not ASCII.
  '02-calls/FileSearch-soap11-ctype-nocharset': { keyword: '报告 & 总结' },
  // xsi:nil is null (Mono's stub saw ""); an empty element is "".
  '02-calls/FolderAndFileDelete-soap11-empty-and-nil': { fids: null },
};

/** Captured calls ASMX answered with 200 that we answer otherwise, on purpose. */
const refusedByUs = new Set(['04-errors/soapaction-mismatch-soap11']);

/** Captured calls ASMX refused only because of its request validation, which we do not have. */
const acceptedByUs = new Set([
  '04-errors/request-validation-get',
  '04-errors/request-validation-post',
  '04-errors/request-validation-get-amphash',
  // byte[] in HTTP GET/POST also accepts one base64 value (ASMX-WIRE.md "We differ").
  '03-bytes/get-base64-single',
  '03-bytes/post-base64-single',
]);

const httpStatus = (name: string) => loadResponse(name).status;

const bindingCases = [
  ...captureNames('02-calls').filter((n) => httpStatus(n) === 200),
  ...captureNames('03-bytes').filter((n) => httpStatus(n) === 200),
  ...captureNames('04-errors').filter((n) => httpStatus(n) === 200 && !n.includes('get-on-soap-path')),
  ...acceptedByUs,
].filter((n) => !refusedByUs.has(n));

/** The capture's echo of a parameter, with the stub's pretty-printing of empty values undone. */
function expectedText(name: string, echoed: string | null): string | null {
  if (echoed !== null && /^\n\s*$/.test(echoed)) return '';
  return echoed;
}

function actualText(value: unknown): string | null {
  if (value === null) return null;
  if (Buffer.isBuffer(value)) return `len=${value.length}`;
  return String(value);
}

/** The body with the result element taken out: what must agree byte for byte. */
function frame(body: string): string {
  return body
    .replace(/<(\w+)Result>[\s\S]*<\/\1Result>/, '<$1Result>…</$1Result>')
    .replace(/(<\?xml version="1.0" encoding="utf-8"\?>\r?\n)[\s\S]*$/, '$1…');
}

function requestParameters(name: string): { sent: Map<string, string | null>; op: string } {
  const response = loadResponse(name);
  const body = response.body.toString('utf8');
  const op = /op="(\w+)"/.exec(body)?.[1] ?? /<(\w+)Result>|<string /.exec(body)?.[1] ?? 'ShareImageUpload';
  return { sent: echoedParameters(response), op };
}

describe('calls from the captures bind as ASMX binds them', () => {
  for (const name of bindingCases) {
    it(`${name}: parameters arrive with their values and types`, async () => {
      server.calls.length = 0;
      const ours = await replay(server.url, loadRequest(name));
      expect(ours.status, ours.body.toString()).toBe(200);
      expect(server.calls).toHaveLength(1);
      const call = server.calls[0];
      const { sent, op } = requestParameters(name);
      if (sent.size > 0) expect(call.op.name).toBe(op);
      for (const [param, echoed] of sent) {
        const intended = intendedValues[name] ?? {};
        const wanted = param in intended ? intended[param] : expectedText(param, echoed);
        expect(actualText(call.values[param]), `${param}`).toBe(wanted);
      }
      for (const param of call.op.params) {
        const value = call.values[param.name];
        const type = param.type === 'long' ? 'bigint' : param.type === 'int' ? 'number' : null;
        if (type) expect(typeof value, param.name).toBe(type);
      }
    });
  }
});

describe('answers agree with the captures byte for byte around the result', () => {
  const framed = bindingCases.filter((n) => !acceptedByUs.has(n));
  for (const name of framed) {
    it(`${name}: status, content type, cache control and envelope`, async () => {
      const capture = loadResponse(name);
      const ours = await replay(server.url, loadRequest(name));
      expectSameFrame(ours, capture);
    });
  }
});

function expectSameFrame(ours: RawResponse, capture: RawResponse): void {
  expect(ours.status).toBe(capture.status);
  expect(ours.headers.get('content-type')).toBe(capture.headers.get('content-type'));
  expect(ours.headers.get('cache-control')).toBe(capture.headers.get('cache-control'));
  expect(frame(ours.body.toString('utf8'))).toBe(frame(capture.body.toString('utf8')));
}

describe('results the stand-in shares with the capture stubs are identical to the byte', () => {
  const whole = bindingCases.filter((n) => /ShareImageUpload|03-bytes/.test(n) && httpStatus(n) === 200);
  for (const name of [...whole, '02-calls/Login-badpwd-soap11', '02-calls/Login-badpwd-get']) {
    it(`${name}: the whole body`, async () => {
      const capture = loadResponse(name);
      const ours = await replay(server.url, loadRequest(name));
      expect(ours.body.toString('utf8')).toBe(capture.body.toString('utf8'));
      expect(ours.headers.get('content-length')).toBe(capture.headers.get('content-length'));
    });
  }
});

describe('where we bind differently on purpose', () => {
  it('a single base64 value for a byte array is decoded', async () => {
    for (const name of ['03-bytes/get-base64-single', '03-bytes/post-base64-single']) {
      server.calls.length = 0;
      const ours = await replay(server.url, loadRequest(name));
      expect(ours.status).toBe(200);
      expect((server.calls[0].values.byteFileStream as Buffer).equals(Buffer.from('iVBORw0KGgo=', 'base64'))).toBe(true);
    }
  });

  it('a SOAPAction naming one operation with a body holding another is a client fault', async () => {
    server.calls.length = 0;
    const ours = await replay(server.url, loadRequest('04-errors/soapaction-mismatch-soap11'));
    expect(ours.status).toBe(500);
    expect(ours.body.toString()).toContain('<faultcode>soap:Client</faultcode>');
    expect(ours.body.toString()).toContain('names the operation FolderRename but the body holds FileAdd');
    expect(server.calls).toHaveLength(0);
  });
});
