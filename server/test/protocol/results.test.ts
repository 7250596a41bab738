/**
 * Result documents (DECISIONS.md §2) as the protocol layer writes them, and the streaming of a
 * listing too large to buffer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation } from '../../src/catalog/operations';
import type { FileItem, FolderItem, Listing } from '../../src/operations/context';
import { writeResultElement } from '../../src/protocol/results';
import { StringSink, XmlWriter } from '../../src/protocol/xml-writer';
import { startProtocolServer, type ProtocolServer } from '../helpers/protocol-server';
import { callInForm, send } from '../helpers/requests';

const GetFiles = findOperation('UserService', 'GetFiles')!;
const time = new Date('2026-11-21T10:00:00.123Z');

const folder = (id: number, name: string): FolderItem => ({
  type: 'folder', id, dir: 0, name, size: 42, time, shared: false, linked: true, encrypted: false,
});
const file = (id: number, name: string): FileItem => ({
  type: 'file', id, dir: 3, name, ext: 'txt', size: 7, hash: 'ab'.repeat(32), time, shared: true, linked: false, encrypted: true, tip: 'a "tip" & <more>',
});

async function render(result: Listing, indent: boolean): Promise<string> {
  const sink = new StringSink();
  const writer = new XmlWriter(sink, { indent, emptyNamespaceOnTop: !indent });
  await writeResultElement(writer, GetFiles, { kind: 'result', result });
  await writer.flush();
  return sink.toString();
}

describe('a listing', () => {
  const listing: Listing = {
    kind: 'listing',
    count: 2,
    path: { value: '/A', dirs: [{ id: 0, name: '' }, { id: 3, name: 'A' }] },
    folders: [folder(5, 'B & C')],
    files: [file(9, 'x.txt')],
  };

  it('inside a SOAP result: one line, xmlns="" on the result element, attributes in order', async () => {
    expect(await render(listing, false)).toBe(
      '<result code="0" msg="" count="2" xmlns=""><path value="/A"><dir id="0" name="" /><dir id="3" name="A" /></path>' +
        '<folder id="5" dir="0" name="B &amp; C" size="42" time="2026-11-21T10:00:00Z" shared="0" linked="1" encrypted="0" />' +
        `<file id="9" dir="3" name="x.txt" ext="txt" size="7" hash="${'ab'.repeat(32)}" time="2026-11-21T10:00:00Z" shared="1" linked="0" encrypted="1" tip="a &quot;tip&quot; &amp; &lt;more&gt;" />` +
        '</result>',
    );
  });

  it('as an HTTP GET/POST document: two-space indentation', async () => {
    const text = await render(listing, true);
    expect(text.split('\n')).toEqual([
      '<result code="0" msg="" count="2">',
      '  <path value="/A">',
      '    <dir id="0" name="" />',
      '    <dir id="3" name="A" />',
      '  </path>',
      expect.stringMatching(/^ {2}<folder id="5" /),
      expect.stringMatching(/^ {2}<file id="9" /),
      '</result>',
    ]);
  });
});

describe('a listing of 100,000 items', () => {
  let server: ProtocolServer;
  const COUNT = 100_000;
  beforeAll(async () => {
    server = await startProtocolServer(() => ({
      kind: 'result',
      result: {
        kind: 'listing',
        count: COUNT,
        folders: [],
        files: (function* () {
          for (let i = 1; i <= COUNT; i++) yield file(i, `file ${i}.txt`);
        })(),
      },
    }));
  });
  afterAll(() => server.close());

  it('is streamed in chunks, complete, in order', async () => {
    const answer = await callInForm(server.url, 'soap11', GetFiles, { uid: 1, token: 't', dir: '0', order: 'name', desc: '0', sign: 's' });
    expect(answer.status).toBe(200);
    expect(answer.headers['transfer-encoding']).toBe('chunked');
    expect(answer.body.match(/<file /g)).toHaveLength(COUNT);
    expect(answer.body).toContain('name="file 100000.txt"');
    expect(answer.body.endsWith('</GetFilesResult></GetFilesResponse></soap:Body></soap:Envelope>')).toBe(true);
  });

  it('a small document is sent whole, with a Content-Length', async () => {
    const answer = await send(server.url, 'GET', '/OAuthService.asmx?WSDL', {});
    expect(answer.headers['content-length']).toBeDefined();
  });
});
