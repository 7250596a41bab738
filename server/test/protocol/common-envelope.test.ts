/**
 * The reader of the common SOAP envelope (protocol/asmx/common-envelope.ts) against the general reader
 * and binding (xml-reader.ts, binding.ts): on every SOAP request of the ASMX captures, on the
 * envelopes .NET, zeep and node-soap write, and on many thousands of random edits of them, whatever
 * the common reader accepts reads and binds exactly as the general path reads and binds it, and
 * what the general path refuses the common reader never accepts.
 */
import { describe, expect, it } from 'vitest';
import { operations, type OperationSpec } from '../../src/catalog/operations';
import { bindSoapParameters, SoapBase64Error, SoapValueError } from '../../src/protocol/asmx/binding';
import { bindCommonParameters, readCommonEnvelope } from '../../src/protocol/asmx/common-envelope';
import { readXml, type XmlElement } from '../../src/protocol/asmx/xml-reader';
import { captureNames, loadRequest } from '../helpers/captures';

const NS = 'http://tempuri.org/';
const LIMITS = { maxDepth: 32, maxElements: 10_000 };
const GetFiles = operations.find((op) => op.name === 'GetFiles')!;
const SIGN = 'e53eadb46140e4d4be7bd0e068e7e84e59e6b58657a460345eea3e857646c2bf';

/** What the general path makes of a document: the envelope's facts and the bound call, or the refusal. */
function general(text: string, op: OperationSpec) {
  let tree: XmlElement;
  try {
    tree = readXml(text, LIMITS);
  } catch {
    return { refused: 'xml' as const };
  }
  const body = tree.children.find((c) => c.ns === tree.ns && c.local === 'Body');
  const request = body?.children[0];
  const named = request && request.ns === NS && request.local === op.name;
  try {
    const call = bindSoapParameters(op, named ? request : null, NS, text);
    return { envelope: { ns: tree.ns, local: tree.local, request: request && { ns: request.ns, local: request.local } }, call };
  } catch (error) {
    if (error instanceof SoapValueError || error instanceof SoapBase64Error) return { refused: 'value' as const };
    throw error;
  }
}

/** What the common path makes of it: undefined when it leaves the document to the general path. */
function common(text: string, op: OperationSpec) {
  const envelope = readCommonEnvelope(text, LIMITS);
  if (!envelope) return undefined;
  const named = envelope.request && envelope.request.ns === NS && envelope.request.local === op.name;
  const call = named ? bindCommonParameters(op, envelope, NS) : bindCommonParameters(op, { ...envelope, params: [] }, NS);
  return { envelope: { ns: envelope.ns, local: envelope.local, request: envelope.request }, call };
}

/** Checks one document: the common path agrees with the general one whenever it answers. */
function agree(text: string, op: OperationSpec): 'common' | 'general' {
  const fast = common(text, op);
  if (!fast) return 'general';
  const slow = general(text, op);
  expect(slow.refused, `the general reader refuses what the common reader accepted:\n${text}`).not.toBe('xml');
  // A value that does not convert is left to the general path (fast.call undefined), which refuses it.
  if (fast.call === undefined) {
    expect(slow.refused, `the general path binds what the common path would not:\n${text}`).toBe('value');
    return 'general';
  }
  expect(slow.refused, `the general path refuses a value the common path bound:\n${text}`).toBeUndefined();
  expect(fast.envelope).toEqual(slow.envelope);
  expect(fast.call).toEqual(slow.call);
  return 'common';
}

const envelopes = {
  dotnet: `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetFiles xmlns="${NS}"><uid>1001</uid><token>tok-en_1</token><dir>12</dir><order>name</order><desc>0</desc><sign>${SIGN}</sign></GetFiles></soap:Body></soap:Envelope>`,
  zeep: `<?xml version='1.0' encoding='utf-8'?>\n<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body><ns0:GetFiles xmlns:ns0="${NS}"><ns0:uid>1001</ns0:uid><ns0:token>tok</ns0:token><ns0:dir>12</ns0:dir><ns0:order>name</ns0:order><ns0:desc>0</ns0:desc><ns0:sign>${SIGN}</ns0:sign></ns0:GetFiles></soap-env:Body></soap-env:Envelope>`,
  nodeSoap: `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:tns="${NS}"><soap:Header></soap:Header><soap:Body><tns:GetFiles><tns:uid>1001</tns:uid><tns:token>tok</tns:token><tns:dir>12</tns:dir><tns:order>name</tns:order><tns:desc>0</tns:desc><tns:sign>${SIGN}</tns:sign></tns:GetFiles></soap:Body></soap:Envelope>`,
  soap12: `<?xml version="1.0" encoding="utf-8"?>\n<soap12:Envelope xmlns:soap12="http://www.w3.org/2003/05/soap-envelope">\n  <soap12:Body>\n    <GetFiles xmlns="${NS}">\n      <uid>1001</uid>\n      <token>tok</token>\n      <dir>12</dir>\n      <order>name</order>\n      <desc>0</desc>\n      <sign>${SIGN}</sign>\n    </GetFiles>\n  </soap12:Body>\n</soap12:Envelope>\n`,
};

describe('the common envelope', () => {
  it.each(Object.entries(envelopes))('is read directly, as the general path reads it: %s', (_, text) => {
    expect(agree(text, GetFiles)).toBe('common');
  });

  it('reads every SOAP request of the ASMX captures as the general path does, and most ordinary calls directly', () => {
    const read = { direct: 0, general: 0 };
    const calls = { direct: 0, general: 0 };
    for (const group of ['01-docs', '02-calls', '03-bytes', '04-errors']) {
      for (const name of captureNames(group)) {
        const request = loadRequest(name);
        const contentType = request.headers.find(([header]) => header.toLowerCase() === 'content-type')?.[1] ?? '';
        if (request.method !== 'POST' || !/xml/.test(contentType)) continue;
        const text = request.body.toString('utf8');
        const op = operations.find((o) => new RegExp(`[<:]${o.name}[ >/]`).test(text)) ?? GetFiles;
        const how = agree(text, op) === 'common' ? 'direct' : 'general';
        read[how]++;
        if (group === '02-calls') calls[how]++;
      }
    }
    expect(read.direct + read.general).toBeGreaterThan(100);
    // The others hold entities, xsi:nil, headers, comments: the general reader's, on purpose.
    expect(calls.direct / (calls.direct + calls.general)).toBeGreaterThan(0.5);
  });

  it.each([
    ['a comment', envelopes.dotnet.replace('<soap:Body>', '<soap:Body><!-- hi -->')],
    ['CDATA', envelopes.dotnet.replace('<order>name</order>', '<order><![CDATA[name]]></order>')],
    ['an entity reference', envelopes.dotnet.replace('<order>name</order>', '<order>na&amp;me</order>')],
    ['a character reference', envelopes.dotnet.replace('<order>name</order>', '<order>&#110;ame</order>')],
    ['xsi:nil', envelopes.dotnet.replace('<token>tok-en_1</token>', '<token xsi:nil="true" />')],
    ['a header entry', envelopes.dotnet.replace('<soap:Body>', '<soap:Header><x:H xmlns:x="urn:x" soap:mustUnderstand="1"/></soap:Header><soap:Body>')],
    ['a carriage return', envelopes.dotnet.replace('<soap:Body>', '<soap:Body>\r\n')],
    ['a DTD', `<!DOCTYPE x [<!ENTITY a "b">]>${envelopes.dotnet.slice(envelopes.dotnet.indexOf('?>') + 2)}`],
    ['an attribute', envelopes.dotnet.replace('<GetFiles ', '<GetFiles soap:encodingStyle="x" ')],
    ['a parameter with elements', envelopes.dotnet.replace('<order>name</order>', '<order><b>name</b></order>')],
    ['text beside the parameters', envelopes.dotnet.replace('<desc>', 'words<desc>')],
    ['a name beyond ASCII', envelopes.dotnet.replace('<order>name</order>', '<ordér>name</ordér>')],
    ['a second request element', envelopes.dotnet.replace('</soap:Body>', '<GetFiles xmlns="urn:x"/></soap:Body>')],
    ['a control character', envelopes.dotnet.replace('<order>name</order>', '<order>na\u0001me</order>')],
    ['an undeclared prefix', envelopes.dotnet.replace('<GetFiles xmlns', '<q:GetFiles xmlns').replace('</GetFiles>', '</q:GetFiles>')],
  ])('leaves %s to the general reader', (_, text) => {
    expect(readCommonEnvelope(text, LIMITS)).toBeUndefined();
  });

  it('leaves a value that does not convert to the general path, which reports it', () => {
    const text = envelopes.dotnet.replace('<uid>1001</uid>', '<uid>ten</uid>');
    expect(readCommonEnvelope(text, LIMITS)).toBeDefined();
    expect(common(text, GetFiles)!.call).toBeUndefined();
    expect(general(text, GetFiles).refused).toBe('value');
  });

  it('leaves an envelope deeper than the depth limit allows to the general reader', () => {
    expect(readCommonEnvelope(envelopes.dotnet, { maxDepth: 3, maxElements: 10_000 })).toBeUndefined();
  });

  it('agrees with the general path on 20,000 random edits of the envelopes clients send', () => {
    // Edits made of the characters that matter to XML, at random places, with a fixed seed.
    let seed = 0x5eed;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pieces = ['<', '>', '/', ':', '=', '"', "'", ' ', '\n', '\r', '&', ';', '!', '?', 'x', 'xmlns', 'xmlns:a="urn:a"', 'a:', '-', '\u00e9', '<x/>', '</x>', ']]>', '\u0000', '1', 'Body', 'Envelope', 'soap:', NS];
    const bases = Object.values(envelopes);
    let direct = 0;
    for (let i = 0; i < 20_000; i++) {
      let text = bases[i % bases.length];
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length + 1);
        const cut = random(4) === 0 ? random(6) : 0;
        text = text.slice(0, at) + pieces[random(pieces.length)] + text.slice(at + cut);
      }
      if (agree(text, GetFiles) === 'common') direct++;
    }
    // The edits must not all be refused outright: a good share still reads directly.
    expect(direct).toBeGreaterThan(2_000);
  });
});
