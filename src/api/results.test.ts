import { describe, expect, it } from 'vitest';
import { resultParsers } from './results';
import { parseXml } from './transport';

function topElement(text: string) {
  const answer = parseXml(text);
  if (!answer) throw new Error('not XML');
  return answer.element;
}

const LISTING = `<?xml version="1.0" encoding="utf-8"?>
<result code="0" msg="" count="3">
  <folder id="12" dir="0" name="Photos &amp; more" time="2026-11-20T08:00:00Z" size="3072" shared="1" linked="0" encrypted="0" />
  <file id="40" dir="0" name="007" ext="" size="10" hash="ab" time="2026-11-20T09:00:00Z" shared="0" linked="1" encrypted="0" />
  <file id="41" dir="0" name="secret.txt" ext="txt" size="5" hash="cd" time="2026-11-21T09:00:00Z" shared="0" linked="0" encrypted="1" tip="birthday" />
</result>`;

describe('result documents', () => {
  it('a listing parses into typed folders then files: numbers as numbers, 0/1 flags as booleans', () => {
    const listing = resultParsers.listing(topElement(LISTING));
    expect(listing).toEqual({
      count: 3,
      truncated: false,
      folders: [
        {
          type: 'folder',
          id: 12,
          dir: 0,
          name: 'Photos & more',
          time: '2026-11-20T08:00:00Z',
          size: 3072,
          shared: true,
          linked: false,
          encrypted: false,
        },
      ],
      files: [
        {
          type: 'file',
          id: 40,
          dir: 0,
          name: '007',
          ext: '',
          size: 10,
          hash: 'ab',
          time: '2026-11-20T09:00:00Z',
          shared: false,
          linked: true,
          encrypted: false,
        },
        {
          type: 'file',
          id: 41,
          dir: 0,
          name: 'secret.txt',
          ext: 'txt',
          size: 5,
          hash: 'cd',
          time: '2026-11-21T09:00:00Z',
          shared: false,
          linked: false,
          encrypted: true,
          tip: 'birthday',
        },
      ],
    });
  });

  it('entities are decoded once: &amp;lt; stays the text "&lt;"', () => {
    const listing = resultParsers.listing(
      topElement('<result code="0"><folder id="1" dir="0" name="a &amp;lt; b &#x4E2D;" time="" size="0" shared="0" linked="0" encrypted="0"/></result>'),
    );
    expect(listing.folders[0].name).toBe('a &lt; b 中');
  });

  it('a single item is still a list, and an empty listing has empty lists', () => {
    const one = resultParsers.listing(
      topElement('<result code="0" count="1"><file id="1" dir="0" name="a" ext="" size="0" hash="" time="" shared="0" linked="0" encrypted="0"/></result>'),
    );
    expect(one.files).toHaveLength(1);
    expect(one.folders).toEqual([]);
    expect(resultParsers.listing(topElement('<result code="0" msg="" count="0" />'))).toEqual({
      count: 0,
      folders: [],
      files: [],
      truncated: false,
    });
  });

  it('a path listing carries the path and its folders from the root', () => {
    const listing = resultParsers.pathListing(
      topElement(`<result code="0" count="0">
  <path value="/A/B"><dir id="0" name="" /><dir id="12" name="A" /><dir id="13" name="B" /></path>
</result>`),
    );
    expect(listing.path).toEqual({
      value: '/A/B',
      dirs: [
        { id: 0, name: '' },
        { id: 12, name: 'A' },
        { id: 13, name: 'B' },
      ],
    });
  });

  it('search results say when they were truncated, and recycle-bin, share and link attributes are typed', () => {
    const listing = resultParsers.listing(
      topElement(`<result code="0" count="1" truncated="1">
  <file id="5" dir="3" name="r.pdf" ext="pdf" size="1" hash="h" time="t" shared="1" linked="1" encrypted="0" path="/A/r.pdf"
        deleted="2026-11-01T00:00:00Z" from="/A" code="c0de" url="https://x/s/c0de" downpwd="ab12" downValue="5" downloads="2"
        description="it's &lt;ok&gt;&#xA;line 2 " image="https://x/i.png" hits="17" />
</result>`),
    );
    expect(listing.truncated).toBe(true);
    expect(listing.files[0]).toMatchObject({
      path: '/A/r.pdf',
      deleted: '2026-11-01T00:00:00Z',
      from: '/A',
      code: 'c0de',
      url: 'https://x/s/c0de',
      downpwd: 'ab12',
      downValue: 5,
      downloads: 2,
      description: "it's <ok>\nline 2 ",
      image: 'https://x/i.png',
      hits: 17,
    });
  });

  it('token, folder, url and empty results', () => {
    expect(resultParsers.token(topElement('<token uid="1001" key="K" expires="2026-11-22T10:00:00Z">TOKEN</token>'))).toEqual({
      token: 'TOKEN',
      uid: 1001,
      key: 'K',
      expires: '2026-11-22T10:00:00Z',
    });
    expect(
      resultParsers.folder(
        topElement('<result code="0" msg="">\n  <folder id="3" dir="0" name="B" time="t" size="0" shared="0" linked="0" encrypted="0" />\n</result>'),
      ),
    ).toMatchObject({ type: 'folder', id: 3, name: 'B' });
    expect(resultParsers.url(topElement('<result code="0" url="https://x/d/abc" expires="2026-11-22T10:05:00Z" />'))).toEqual({
      url: 'https://x/d/abc',
      expires: '2026-11-22T10:05:00Z',
    });
    expect(resultParsers.url(topElement('<result code="0" url="https://x/l/abc/a.txt" />'))).toEqual({ url: 'https://x/l/abc/a.txt' });
    expect(resultParsers.empty(topElement('<result code="0" msg="" />'))).toBeUndefined();
  });

  it('an item without an id is a protocol error, not a silently wrong item', () => {
    expect(() => resultParsers.listing(topElement('<result code="0"><file name="x"/></result>'))).toThrowError(
      expect.objectContaining({ code: 'Protocol' }),
    );
  });
});
