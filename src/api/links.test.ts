import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { LINKS_SORT, currentLinkUrls, linkKeys, linkSummary } from './links';
import { resultParsers, type FileItem, type FolderItem } from './results';
import { parseXml } from './transport';

const GET_LINK_FILES = `<?xml version="1.0" encoding="utf-8"?>
<result code="0" msg="" count="2">
  <file id="1" dir="1" name="report.txt" ext="txt" size="21" hash="69" time="2026-11-21T08:45:11Z" shared="1" linked="1" encrypted="0" path="/Docs/report.txt" url="http://127.0.0.1:35509/l/t5N_x-a650-zzMquHnYyNg/report.txt" hits="3" />
  <file id="2" dir="0" name="a b.txt" ext="txt" size="4" hash="70" time="2026-11-21T08:46:11Z" shared="0" linked="1" encrypted="0" path="/a b.txt" url="http://127.0.0.1:35509/l/RlpSWjKeLtfPFAlGkzsN2g/a%20b.txt" hits="0" />
</result>`;

function linkListing() {
  const answer = parseXml(GET_LINK_FILES);
  if (!answer) throw new Error('not XML');
  return resultParsers.listing(answer.element);
}

const file = (id: number, linked: boolean): FileItem => ({
  type: 'file', id, dir: 0, name: `f${id}`, time: '', size: 0, shared: false, linked, encrypted: false, ext: '', hash: '',
});
const folder = (id: number): FolderItem => ({ type: 'folder', id, dir: 0, name: `d${id}`, time: '', size: 0, shared: false, linked: false, encrypted: false });

describe('direct links', () => {
  it('GetLinkFiles gives each file its link and the downloads counted (hits)', () => {
    const [report, spaced] = linkListing().files;
    expect(report).toMatchObject({ id: 1, path: '/Docs/report.txt', url: 'http://127.0.0.1:35509/l/t5N_x-a650-zzMquHnYyNg/report.txt', hits: 3 });
    expect(spaced).toMatchObject({ id: 2, hits: 0 });
  });

  it('a selection is summed up for the menu: files, linked files, folders (which cannot be linked)', () => {
    expect(linkSummary([])).toEqual({ files: 0, linked: 0, folders: 0 });
    expect(linkSummary([folder(1), folder(2)])).toEqual({ files: 0, linked: 0, folders: 2 });
    expect(linkSummary([folder(1), file(1, true), file(2, false)])).toEqual({ files: 2, linked: 1, folders: 1 });
    expect(linkSummary([file(1, true), file(2, true)])).toEqual({ files: 2, linked: 2, folders: 0 });
  });

  it('the current links of files are read from GetLinkFiles; a file whose link is gone has none', async () => {
    const client = new QueryClient();
    // A listing just fetched: no call goes out.
    client.setQueryData(linkKeys.list(LINKS_SORT), linkListing());
    const urls = await currentLinkUrls(client, [2, 7]);
    expect([...urls]).toEqual([[2, 'http://127.0.0.1:35509/l/RlpSWjKeLtfPFAlGkzsN2g/a%20b.txt']]);
  });

  it('each sort order is its own cache entry under the links key', () => {
    expect(linkKeys.list({ order: 'size', desc: true })).toEqual(['links', 'list', { order: 'size', desc: true }]);
    expect(linkKeys.list(LINKS_SORT).slice(0, 1)).toEqual(linkKeys.all);
  });
});
