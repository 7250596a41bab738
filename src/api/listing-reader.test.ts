import { describe, expect, it } from 'vitest';
import { ApiError } from './errors';
import { ListingReader, attributeValue } from './listing-reader';
import { resultParsers, type Listing } from './results';
import { parseXml } from './transport';

const utf8 = new TextEncoder();

/** Reads a whole answer, handed to the reader in the given pieces of bytes. */
function read(pieces: readonly Uint8Array[]): ListingReader {
  const reader = new ListingReader();
  for (const piece of pieces) reader.push(piece);
  reader.end();
  return reader;
}

const readText = (text: string) => read([utf8.encode(text)]);

/** What the whole-document parser (fast-xml-parser, results.ts) makes of the same answer. */
function wholeDocument(text: string): Listing {
  const answer = parseXml(text);
  if (!answer) throw new Error('not XML');
  return resultParsers.listing(answer.element);
}

function protocolError(work: () => unknown): ApiError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('Protocol');
    return error as ApiError;
  }
  throw new Error('no error');
}

// What the service writes (server/src/protocol/asmx/xml-writer.ts): a declaration, two-space
// indentation, `<a x="1" />`, and &, <, >, ", tab, LF and CR escaped in attributes.
const PATH_LISTING = `<?xml version="1.0" encoding="utf-8"?>
<result code="0" msg="" count="4">
  <path value="/Docs &amp; more">
    <dir id="0" name="" />
    <dir id="1" name="Docs &amp; more" />
  </path>
  <folder id="2" dir="1" name="Q3 &amp; Q4 &lt;draft&gt;" size="21" time="2026-11-21T08:01:03Z" shared="1" linked="0" encrypted="1" tip="a &quot;hint&quot;&#xA;line two" path="/Docs &amp; more/Q3 &amp; Q4 &lt;draft&gt;" />
  <file id="2" dir="1" name="季度报告 😀.txt" ext="txt" size="21" hash="696123c9184755c8eac0e8e8efb05b8864e76c829101f48308e7cc54358888bf" time="2026-11-21T08:01:12Z" shared="0" linked="1" encrypted="0" path="/Docs &amp; more/季度报告 😀.txt" />
  <file id="7" dir="1" name="tab&#x9;cr&#xD;lf&#xA;apos&apos;dec&#38;" ext="" size="0" hash="" time="2026-11-21T08:01:13Z" shared="0" linked="0" encrypted="0" path="/x" />
  <file id="9" dir="1" name="007" ext="" size="5" hash="" time="2026-11-21T08:01:14Z" shared="0" linked="0" encrypted="0" path="/Docs &amp; more/007" />
</result>`;

describe('ListingReader', () => {
  it('reads a listing with its path into typed items, as the whole-document parser does', () => {
    const listing = readText(PATH_LISTING).listing(false);
    expect(listing).toEqual(wholeDocument(PATH_LISTING));
    expect(listing.path).toEqual({ value: '/Docs & more', dirs: [{ id: 0, name: '' }, { id: 1, name: 'Docs & more' }] });
    expect(listing.folders[0]).toMatchObject({ type: 'folder', id: 2, name: 'Q3 & Q4 <draft>', tip: 'a "hint"\nline two', shared: true, encrypted: true });
    expect(listing.files.map((file) => file.name)).toEqual(['季度报告 😀.txt', "tab\tcr\rlf\napos'dec&", '007']);
    expect(listing.count).toBe(4);
    expect(listing.partial).toBeUndefined();
  });

  it('gives the same listing whichever byte each piece ends on (inside tags, entities and UTF-8 characters)', () => {
    const bytes = utf8.encode(PATH_LISTING);
    const whole = readText(PATH_LISTING).listing(false);
    for (let cut = 1; cut < bytes.length; cut++) {
      const listing = read([bytes.subarray(0, cut), bytes.subarray(cut)]).listing(false);
      expect(listing, `cut at byte ${cut}`).toEqual(whole);
    }
  });

  it('gives the same listing when every byte comes on its own', () => {
    const bytes = utf8.encode(PATH_LISTING);
    const pieces = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    expect(read(pieces).listing(false)).toEqual(readText(PATH_LISTING).listing(false));
  });

  it('hands out the items read so far, with the announced count, while the answer arrives', () => {
    const bytes = utf8.encode(PATH_LISTING);
    const third = utf8.encode(PATH_LISTING.slice(0, PATH_LISTING.indexOf('<file id="7"'))).length;
    const reader = new ListingReader();
    reader.push(bytes.subarray(0, third));
    const partial = reader.listing(true);
    expect(partial.partial).toBe(true);
    expect(partial.count).toBe(4);
    expect(partial.folders.map((folder) => folder.id)).toEqual([2]);
    expect(partial.files.map((file) => file.id)).toEqual([2]);
    reader.push(bytes.subarray(third));
    reader.end();
    // What was handed out earlier does not change afterwards.
    expect(partial.files).toHaveLength(1);
    expect(reader.listing(false).files).toHaveLength(3);
  });

  it('reads an empty listing written as one element, and a truncated search', () => {
    expect(readText('<?xml version="1.0" encoding="utf-8"?>\n<result code="0" msg="" count="0" />').listing(false)).toEqual({
      count: 0,
      folders: [],
      files: [],
      truncated: false,
    });
    const search = readText('<result code="0" msg="" count="1" truncated="1"><file id="1" dir="0" name="a" ext="" size="1" hash="" time="" shared="0" linked="0" encrypted="0" /></result>');
    expect(search.listing(false)).toMatchObject({ count: 1, truncated: true });
  });

  it('counts the items read when the answer announces no count', () => {
    const listing = readText('<result code="0"><folder id="1" name="a" /><file id="2" name="b" /></result>').listing(false);
    expect(listing.count).toBe(2);
  });

  it('skips a byte order mark, comments and processing instructions, and takes single quotes', () => {
    const text = "\uFEFF<?xml version='1.0'?><!-- a comment --><result code='0' count='1'><?pi x?><file id='1' name='it&apos;s' /><!-- -> --></result>\n";
    expect(readText(text).listing(false).files[0].name).toBe("it's");
  });

  it('does not end a tag at a ">" inside a quoted value', () => {
    expect(readText('<result code="0"><file id="1" name="a>b" /></result>').listing(false).files[0].name).toBe('a>b');
  });

  it('stops at a refusal and keeps its attributes for the error', () => {
    const reader = readText('<?xml version="1.0" encoding="utf-8"?>\n<result code="423" msg="locked" id="5" tip="hint" type="folder" />');
    expect(reader.refused).toBe(true);
    expect(reader.settled).toBe(true);
    expect(reader.root).toEqual({ code: '423', msg: 'locked', id: '5', tip: 'hint', type: 'folder' });
  });

  it('refuses what a listing never holds: text, CDATA, a DTD, other elements, an unfinished answer', () => {
    expect(protocolError(() => readText('<result code="0">hello</result>')).message).toMatch(/text where elements were expected/);
    protocolError(() => readText('<result code="0"><![CDATA[x]]></result>'));
    protocolError(() => readText('<!DOCTYPE result [<!ENTITY e "x">]><result code="0" />'));
    expect(protocolError(() => readText('<result code="0"><item id="1" /></result>')).message).toMatch(/<item> in a listing/);
    expect(protocolError(() => readText('<result code="0"><file id="1" name="a" />')).message).toMatch(/ends before <\/result>/);
    expect(protocolError(() => readText('')).message).toMatch(/no XML element/);
    protocolError(() => readText('<result code="0"></result>trailing'));
    protocolError(() => readText('<result code="0"><file id="1" name="a" name="b" /></result>'));
    protocolError(() => readText('<result code="0"><file id=1 /></result>'));
  });

  it('refuses bytes that are not UTF-8, and an answer cut inside a UTF-8 character', () => {
    protocolError(() => read([new Uint8Array([0x3c, 0xff, 0x3e])]));
    const bytes = utf8.encode('<result code="0"><file id="1" name="é" /></result>');
    const inside = bytes.indexOf(0xc3) + 1;
    const reader = new ListingReader();
    reader.push(bytes.subarray(0, inside));
    protocolError(() => reader.end());
  });

  it('refuses an item without its id', () => {
    protocolError(() => readText('<result code="0"><file name="a" /></result>'));
  });
});

describe('attributeValue', () => {
  it('replaces the five predefined entities and character references, decimal and hexadecimal', () => {
    expect(attributeValue('&lt;&gt;&amp;&quot;&apos;')).toBe(`<>&"'`);
    expect(attributeValue('&#65;&#x42;&#x0043;')).toBe('ABC');
    expect(attributeValue('&#x1F600;&#128512;')).toBe('😀😀');
    expect(attributeValue('&amp;lt;')).toBe('&lt;');
  });

  it('keeps tabs and line ends written as references, and turns literal ones into spaces (CRLF as one)', () => {
    expect(attributeValue('a&#x9;b&#xA;c&#xD;d')).toBe('a\tb\nc\rd');
    expect(attributeValue('a\tb\nc\r\nd\re')).toBe('a b c d e');
  });

  it('refuses unknown entities, bare ampersands, a "<", and references to characters XML cannot hold', () => {
    for (const raw of ['&nbsp;', 'a & b', '&amp', '&#;', 'a<b', '&#0;', '&#x1;', '&#xFFFE;', '&#xD800;', '&#x110000;']) {
      protocolError(() => attributeValue(raw));
    }
  });
});
