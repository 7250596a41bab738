/**
 * Every refused request of the captures, replayed: the same status, content type and body as ASMX,
 * with .NET's wording where Mono left its placeholders ("Missing parameter: {0}.").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notImplemented } from '../../src/operations/errors';
import { loadRequest, loadResponse, replay } from '../helpers/captures';
import { startProtocolServer, type ProtocolServer } from '../helpers/protocol-server';

let server: ProtocolServer;
beforeAll(async () => {
  server = await startProtocolServer((call) => ({ kind: 'refusal', refusal: notImplemented(call.op.name) }));
});
afterAll(() => server.close());

const SAME = Symbol('the capture body');
type Expected = { body: string | typeof SAME; contentType?: string };

const convert = (value: string, type: string, inner: string) =>
  `Cannot convert ${value} to ${type}.\nParameter name: type ---> ${inner}\n`;
const FORMAT = 'Input string was not in a correct format.';
const soap11Fault = (code: string, message: string) =>
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" ' +
  'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body><soap:Fault>' +
  `<faultcode>soap:${code}</faultcode><faultstring>${message}</faultstring><detail /></soap:Fault></soap:Body></soap:Envelope>`;
const soap12Fault = (code: string, message: string) =>
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" ' +
  'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body><soap:Fault>' +
  `<soap:Code><soap:Value>soap:${code}</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="en">${message}</soap:Text></soap:Reason>` +
  '<soap:Detail /></soap:Fault></soap:Body></soap:Envelope>';

const cases: Record<string, Expected> = {
  '04-errors/decimal-long-get': { body: convert('1.5', 'System.Int64', FORMAT) },
  '04-errors/dtd-internal-entity-soap11': { body: SAME },
  '04-errors/dtd-only-soap11': { body: SAME },
  '04-errors/empty-body-soap11': { body: SAME },
  '04-errors/empty-body-soap12': { body: SAME },
  '04-errors/empty-long-get': { body: convert('', 'System.Int64', FORMAT) },
  '04-errors/empty-long-soap11': { body: SAME },
  '04-errors/empty-soapaction-soap11': { body: soap11Fault('Client', 'Server did not recognize the value of HTTP Header SOAPAction: .') },
  '04-errors/entity-bomb-3-levels-soap11': { body: SAME },
  '04-errors/malformed-soap11': { body: SAME },
  '04-errors/malformed-soap11-notxml': { body: SAME },
  '04-errors/malformed-soap12': { body: SAME },
  '04-errors/missing-all-params-get': { body: 'Missing parameter: uid.\n' },
  '04-errors/missing-param-get': { body: 'Missing parameter: uid.\n' },
  '04-errors/missing-param-post': { body: 'Missing parameter: uid.\n' },
  '04-errors/missing-string-param-get': { body: 'Missing parameter: hash.\n' },
  '04-errors/missing-string-param-post': { body: 'Missing parameter: hash.\n' },
  '04-errors/nonnumeric-long-get': { body: convert('abc', 'System.Int64', FORMAT) },
  '04-errors/nonnumeric-long-post': { body: convert('abc', 'System.Int64', FORMAT) },
  '04-errors/nonnumeric-long-soap11': { body: SAME },
  '04-errors/nonnumeric-long-soap12': { body: SAME },
  '04-errors/not-envelope-soap11': {
    body: loadResponse('04-errors/not-envelope-soap11')
      .body.toString('utf8')
      .replace('{0}', 'http://tempuri.org/')
      .replace('{1}', 'http://schemas.xmlsoap.org/soap/envelope/'),
  },
  '04-errors/outofrange-int-get': { body: convert('2147483648', 'System.Int32', 'Value was either too large or too small for an Int32.') },
  '04-errors/outofrange-int-soap11': { body: SAME },
  '04-errors/outofrange-long-get': {
    body: convert('9223372036854775808', 'System.Int64', 'Value was either too large or too small for an Int64.'),
  },
  '04-errors/outofrange-long-soap11': { body: SAME },
  '04-errors/post-form-to-soap-path': { body: SAME },
  '04-errors/post-no-content-type-op-path': { body: 'Request format is invalid: .\n' },
  '04-errors/post-no-content-type-soap-path': { body: SAME },
  '04-errors/post-soap-to-op-path': { body: 'Request format is invalid: text/xml; charset=utf-8.\n' },
  '04-errors/soap11-envelope-as-soap12': { body: SAME },
  '04-errors/soapaction-other-ns-soap11': {
    body: soap11Fault('Client', 'Server did not recognize the value of HTTP Header SOAPAction: urn:other/FileAdd.'),
  },
  '04-errors/unknown-op-element-soap11': {
    body: soap11Fault('Client', 'Server did not recognize the value of HTTP Header SOAPAction: http://tempuri.org/Nope.'),
  },
  '04-errors/unknown-op-element-soap12': { body: SAME },
  '04-errors/unknown-op-element-soap12-action': {
    body: soap12Fault('Sender', "Unable to handle request. The action 'http://tempuri.org/Nope' was not recognized."),
  },
  '04-errors/unknown-op-get': { body: 'Nope Web Service method name is not valid.\n' },
  '04-errors/unknown-op-post': { body: 'Nope Web Service method name is not valid.\n' },
  '04-errors/unknown-soapaction-soap11': {
    body: soap11Fault('Client', 'Server did not recognize the value of HTTP Header SOAPAction: http://tempuri.org/Nope.'),
  },
  '04-errors/xxe-external-entity-soap11': { body: SAME },
  '04-errors/xxe-external-entity-soap12': { body: SAME },
  '02-calls/FolderAndFileDelete-get-path-case': {
    body:
      "Invalid method name 'folderandfiledelete', method names are case sensitive. The method name 'FolderAndFileDelete' " +
      'with the same name but different casing was found.\nParameter name: methodName\n',
  },
  '02-calls/FolderAndFileDelete-post-then-query': { body: 'Missing parameter: uid.\n' },
  '02-calls/FileSearch-soap11-header-mustunderstand': {
    body:
      '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" ' +
      'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body><soap:Fault>' +
      '<faultcode>soap:MustUnderstand</faultcode><faultstring>SOAP header Auth was not understood.</faultstring></soap:Fault></soap:Body></soap:Envelope>',
  },
  '03-bytes/get-csv': { body: convert('1,2,3', 'System.Byte', FORMAT) },
  '03-bytes/get-empty': { body: convert('', 'System.Byte', FORMAT) },
  '03-bytes/post-empty': { body: convert('', 'System.Byte', FORMAT) },
  '03-bytes/get-hex': { body: convert('0x89', 'System.Byte', FORMAT) },
  '03-bytes/get-out-of-range': { body: convert('256', 'System.Byte', 'Value was either too large or too small for an unsigned byte.') },
  // ASMX throws a NullReferenceException here; we name the missing parameter instead.
  '03-bytes/get-missing': { body: 'Missing parameter: byteFileStream.\n' },
  '03-bytes/post-missing': { body: 'Missing parameter: byteFileStream.\n' },
  '03-bytes/get-indexed': { body: 'Missing parameter: byteFileStream.\n' },
  '03-bytes/post-multipart': { body: 'Request format is invalid: multipart/form-data; boundary=XyZ.\n' },
  '03-bytes/soap11-bad-base64': { body: SAME },
};

describe('refused requests of the captures get the ASMX answer', () => {
  for (const [name, expected] of Object.entries(cases)) {
    it(`${name}`, async () => {
      const capture = loadResponse(name);
      const ours = await replay(server.url, loadRequest(name));
      expect(ours.status).toBe(capture.status);
      expect(ours.headers.get('content-type')).toBe(expected.contentType ?? capture.headers.get('content-type'));
      expect(ours.headers.get('cache-control')).toBe(capture.headers.get('cache-control'));
      const body = expected.body === SAME ? capture.body.toString('utf8') : expected.body;
      expect(ours.body.toString('utf8')).toBe(body);
      expect(server.calls).toHaveLength(0);
    });
  }
});

describe('requests that never reach a service', () => {
  const pages: Array<[string, number]> = [
    ['04-errors/unknown-asmx-get', 404],
    ['04-errors/unknown-asmx-wsdl', 404],
    ['04-errors/delete-soap-path', 405],
    ['04-errors/put-soap-path', 405],
    ['04-errors/wrong-content-type', 500],
    ['04-errors/put-op-path', 500],
    ['02-calls/FolderAndFileDelete-head', 500],
  ];
  for (const [name, status] of pages) {
    it(`${name} answers ${status}`, async () => {
      const ours = await replay(server.url, loadRequest(name));
      expect(ours.status).toBe(status);
      expect(loadResponse(name).status).toBe(status);
      expect(server.calls).toHaveLength(0);
    });
  }

  it('GET on a service path with a SOAP body serves the help page, as ASMX does', async () => {
    const ours = await replay(server.url, loadRequest('04-errors/get-on-soap-path-with-body'));
    expect(ours.status).toBe(200);
    expect(ours.headers.get('content-type')).toMatch(/^text\/html/);
    expect(ours.body.toString()).toContain('FileAdd');
  });
});
