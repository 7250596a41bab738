/**
 * Result documents (DECISIONS.md §2) as the protocol layer writes them, and the streaming of a
 * listing too large to buffer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itemAttributes, resultElements } from '../../src/catalog/results';
import type { BatchedItemSource, FileItem, FolderItem, Listing } from '../../src/operations/context';
import { isoTime, writeResultElement } from '../../src/protocol/asmx/results';
import { StringSink, XmlWriter, escapeAttribute } from '../../src/protocol/asmx/xml-writer';
import { startProtocolServer, type ProtocolServer } from '../helpers/protocol-server';
import { callInForm, ops, send } from '../helpers/requests';

const { GetFiles } = ops;
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

describe('a long listing written to a client that never makes it wait', () => {
  it('gives the event loop back as it goes: a timer set before writing runs before the writing ends', async () => {
    // 100,000 items into a sink that never asks to wait: without pauses, all in one turn.
    const files = Array.from({ length: 100_000 }, (_, i) => file(i + 1, `file ${i}.txt`));
    let writing = true;
    let timerRanWhileWriting: boolean | undefined;
    setTimeout(() => (timerRanWhileWriting = writing), 0);
    const text = await render({ kind: 'listing', count: files.length, folders: [], files }, false);
    writing = false;
    expect(timerRanWhileWriting).toBe(true);
    expect(text.match(/<file /g)).toHaveLength(100_000);
  });
});

describe('the items and e-mails written', () => {
  const attributeNames = (text: string, element: string) =>
    [...(new RegExp(`<${element} ([^>]*)/>`).exec(text)?.[1] ?? '').matchAll(/(\w+)="/g)].map((match) => match[1]);
  const catalogOrder = (element: 'folder' | 'file', group?: string) =>
    itemAttributes.filter((spec) => (!('only' in spec) || spec.only === element) && (!('group' in spec) || spec.group === group)).map((spec) => spec.name);
  const bin = { deleted: time, from: '/A', purge: time };
  const share = { code: 'c', url: 'u', downpwd: '', downValue: 0, downloads: 1, description: '', image: '' };

  it('carry every attribute the catalog names for them, in the catalog\'s order (the client is generated from it)', async () => {
    const full = { path: '/A/x', tip: '', progress: 5 };
    const written = async (item: FolderItem | FileItem) =>
      attributeNames(await render({ kind: 'listing', count: 1, ...(item.type === 'folder' ? { folders: [item], files: [] } : { folders: [], files: [item] }) }, false), item.type);
    expect(await written({ ...folder(1, 'a'), ...full, encrypted: true, bin })).toEqual(catalogOrder('folder', 'bin'));
    expect(await written({ ...folder(1, 'a'), ...full, encrypted: true, share })).toEqual(catalogOrder('folder', 'share'));
    expect(await written({ ...file(2, 'b'), path: '/b', link: { url: 'l', hits: 3 } })).toEqual(catalogOrder('file', 'link'));
  });

  it('e-mail recipients carry the catalog\'s attributes in its order', async () => {
    const sink = new StringSink();
    const writer = new XmlWriter(sink, { indent: false, emptyNamespaceOnTop: true });
    const info = { kind: 'emailShareInfo' as const, count: 1, item: file(2, 'b'), emails: [{ to: 'a@b.c', time, status: 'failed' as const, error: 'no' }] };
    await writeResultElement(writer, ops.GetFileEmailShareInfo, { kind: 'result', result: info });
    await writer.flush();
    expect(attributeNames(sink.toString(), 'email')).toEqual(resultElements.email.map((spec) => spec.name));
  });
});

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

describe('times', () => {
  /** What every time in a result document is: toISOString without its milliseconds. */
  const reference = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

  it.each([
    ['the epoch', 0],
    ['milliseconds are cut, not rounded', Date.parse('2026-11-21T10:00:00.999Z')],
    ['the last second of a day', Date.parse('2026-12-31T23:59:59.999Z')],
    ['the first second of a day', Date.parse('2027-01-01T00:00:00.000Z')],
    ['a leap day', Date.parse('2028-02-29T12:34:56.789Z')],
    ['a millisecond before 1970: the second that holds it', -1],
    ['a day and a millisecond before 1970', -86_400_001],
    ['year 10000, written +010000', Date.parse('+010000-01-01T00:00:01.500Z')],
    ['year 0', Date.parse('0000-06-15T08:09:10.000Z')],
  ])('%s', (_, ms) => {
    expect(isoTime(new Date(ms))).toBe(reference(new Date(ms)));
  });

  it('agrees with toISOString over many instants, days apart and seconds apart', () => {
    let ms = Date.parse('1969-12-25T00:00:00Z');
    for (let i = 0; i < 5_000; i++) {
      ms += (i % 7 === 0 ? 86_400_000 : 0) + ((i * 7_919_123) % 3_600_000);
      expect(isoTime(new Date(ms))).toBe(reference(new Date(ms)));
    }
  });

  it('an invalid date is refused as toISOString refuses it', () => {
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe('attribute values', () => {
  it.each([
    ['plain text, as it is', 'report 2026.pdf', 'report 2026.pdf'],
    ['markup and quotes, escaped', 'a & b < c > "d"', 'a &amp; b &lt; c &gt; &quot;d&quot;'],
    ['tab, newline and carriage return, as character references', 'a\tb\nc\rd', 'a&#x9;b&#xA;c&#xD;d'],
    ['a surrogate pair (an emoji), as it is', 'smile 😀.txt', 'smile 😀.txt'],
    ['a lone surrogate and other characters XML cannot carry, replaced', 'a\uD800b\u0001c\uFFFE', 'a\uFFFDb\uFFFDc\uFFFD'],
  ])('%s', (_, value, written) => {
    expect(escapeAttribute(value)).toBe(written);
  });
});

describe('a listing read by batches', () => {
  /** A source that hands its items out in batches, as the streamed listings of the database do. */
  function batched<T>(batches: T[][]): BatchedItemSource<T> {
    return {
      async *batches() {
        for (const batch of batches) yield batch;
      },
      async *[Symbol.asyncIterator]() {
        for (const batch of batches) yield* batch;
      },
    };
  }

  it('is written as the same items given as arrays', async () => {
    const folders = [folder(5, 'B & C'), folder(6, 'D')];
    const files = Array.from({ length: 2_500 }, (_, i) => file(10 + i, `f${i}.txt`));
    const asArrays: Listing = { kind: 'listing', count: 2_502, folders, files };
    const asBatches: Listing = {
      kind: 'listing',
      count: 2_502,
      folders: batched([folders]),
      files: batched([files.slice(0, 1_000), [], files.slice(1_000, 2_000), files.slice(2_000)]),
    };
    for (const indent of [false, true]) expect(await render(asBatches, indent)).toBe(await render(asArrays, indent));
  });
});
