/**
 * Link previews of share pages (protocol/web/share-preview.ts, docs/sharing.md §7): GET /s/{code}
 * answers the web app's index.html with a <title> and Open Graph / Twitter tags built from the
 * share: the item for an open share, nothing of it for a share with an extraction code, a generic
 * preview otherwise; every value HTML-escaped; lookups throttled exactly like ShareOpen.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationSpec } from '../../src/catalog/operations';
import { escapeHtml, formatPreviewSize, withPreview } from '../../src/protocol/web/share-preview';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { callInForm, ops, resultXml, send, type HttpAnswer, type Value } from '../helpers/requests';
import { addFile, addFolder } from '../helpers/tree';

const { FileShare, FolderShare, FolderAndFileDelete, ShareImageUpload, ShareOpen } = ops;

/** A 1×1 transparent PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

const INDEX_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <title>Files</title>
    <script type="module" crossorigin src="/assets/index-abc.js"></script>
  </head>
  <body>
    <div id="root"></div>
  </body>
</html>
`;

let webRoot: string;

async function withWebRoot(env: NodeJS.ProcessEnv = {}): Promise<{ app: TestApp; accountId: number; session: Session }> {
  const app = await startTestApp({ FSS_WEB_ROOT: webRoot, ...env });
  const accountId = await addAccount(app, 'alice', 'alice-password-1');
  const session = await logIn(app, 'post', 'alice', 'alice-password-1');
  return { app, accountId, session };
}

beforeAll(async () => {
  webRoot = await mkdtemp(path.join(os.tmpdir(), 'fss-web-'));
  await writeFile(path.join(webRoot, 'index.html'), INDEX_HTML);
});
afterAll(() => rm(webRoot, { recursive: true, force: true }));

/** The content of every <meta> in the page, by its name or property. */
function metaTags(html: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const match of html.matchAll(/<meta (name|property)="([^"]+)" content="([^"]*)" \/>/g)) {
    tags[match[2]] = match[3].replace(/&#(\d+);/g, (_all, code: string) => String.fromCharCode(Number(code)));
  }
  return tags;
}

const titleOf = (html: string) => /<title>([^<]*)<\/title>/.exec(html)?.[1].replace(/&#(\d+);/g, (_all, code: string) => String.fromCharCode(Number(code)));

describe('share page previews', () => {
  let app: TestApp;
  let accountId: number;
  let session: Session;

  beforeAll(async () => {
    ({ app, accountId, session } = await withWebRoot());
  });
  afterAll(() => app.close());

  async function share(operation: OperationSpec, ids: Record<string, string>, settings: { downpwd?: string; description?: string } = {}): Promise<{ code: string; url: string }> {
    const params: Record<string, Value> = { ...ids, downpwd: settings.downpwd ?? '', downValue: 0, description: settings.description ?? '' };
    const answer = await callSigned(app, 'post', operation, session, params);
    const xml = resultXml(answer, operation);
    const item = element(xml, operation === FolderShare ? 'folder' : 'file');
    if (!item?.attrs.code) throw new Error(`share failed: ${xml}`);
    return { code: item.attrs.code, url: item.attrs.url };
  }

  const page = (code: string, method = 'GET'): Promise<HttpAnswer> => send(app.url, method, `/s/${code}`, {});

  it('an open file share: the name, its size, the description and the cover image, with the app still there', async () => {
    const file = await addFile(app.app.services, accountId, 0, 'Holiday photos.zip', 1536 * 1024);
    const { code, url } = await share(FileShare, { fids: String(file.id) }, { description: 'All of them,\n  from the lake.' });
    const image = /<string[^>]*>([^<]*)<\/string>/.exec(
      (await callInForm(app.url, 'post', ShareImageUpload, { uid: session.uid, token: session.token, fid: file.id, ImagefileName: 'c.png', byteFileStream: PNG.toString('base64') })).body,
    )?.[1];
    expect(image).toMatch(new RegExp(`^${app.url}/s/image/[0-9]+/`));

    const answer = await page(code);
    expect(answer.status).toBe(200);
    expect(answer.contentType).toBe('text/html; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['x-robots-tag']).toBe('noindex');
    expect(answer.headers['content-security-policy']).toContain("script-src 'self'");
    expect(answer.body).toContain('<script type="module" crossorigin src="/assets/index-abc.js"></script>');
    expect(answer.body).toContain('<div id="root"></div>');
    expect(answer.body.match(/<title>/g)).toHaveLength(1);

    expect(titleOf(answer.body)).toBe('Holiday photos.zip · Files');
    expect(metaTags(answer.body)).toEqual({
      robots: 'noindex',
      description: 'Shared file · 1.5 MB — All of them, from the lake.',
      'og:site_name': 'Files',
      'og:type': 'website',
      'og:title': 'Holiday photos.zip',
      'og:description': 'Shared file · 1.5 MB — All of them, from the lake.',
      'og:url': url,
      'og:image': image,
      'og:image:alt': 'Cover image of Holiday photos.zip',
      'twitter:card': 'summary_large_image',
    });
    // The tags sit in <head>.
    expect(answer.body.indexOf('og:title')).toBeLessThan(answer.body.indexOf('</head>'));
  });

  it('an open folder share without a cover: a summary card with the name and the size', async () => {
    const folder = await addFolder(app.app.services, accountId, 0, 'Reports 2026');
    await addFile(app.app.services, accountId, folder.id, 'q1.pdf', 2048);
    const { code } = await share(FolderShare, { dirids: String(folder.id) });
    const tags = metaTags((await page(code)).body);
    expect(tags['og:title']).toBe('Reports 2026');
    expect(tags['og:description']).toBe('Shared folder · 2 KB');
    expect(tags['twitter:card']).toBe('summary');
    expect(tags['og:image']).toBeUndefined();
  });

  it('a share with an extraction code reveals nothing of the item, even when the link carries the code', async () => {
    const file = await addFile(app.app.services, accountId, 0, 'secret plans.docx', 100);
    const { code, url } = await share(FileShare, { fids: String(file.id) }, { downpwd: 'ab12', description: 'the secret description' });
    await callInForm(app.url, 'post', ShareImageUpload, { uid: session.uid, token: session.token, fid: file.id, ImagefileName: 'c.png', byteFileStream: PNG.toString('base64') });

    for (const answer of [await page(code), await send(app.url, 'GET', `/s/${code}?pwd=ab12`, {})]) {
      expect(answer.status).toBe(200);
      expect(answer.body).not.toMatch(/secret|\/image\//);
      expect(titleOf(answer.body)).toBe('Shared files · Files');
      const tags = metaTags(answer.body);
      expect(tags['og:title']).toBe('Shared files — extraction code required');
      expect(tags['og:description']).toBe('Open the link and enter the extraction code to see what is shared.');
      expect(tags['og:url']).toBe(url);
      expect(tags.robots).toBe('noindex');
    }
  });

  it('an unknown code, a malformed one, and a share whose item is in the bin: the generic preview, still the app with 200', async () => {
    const file = await addFile(app.app.services, accountId, 0, 'binned.txt', 10);
    const { code } = await share(FileShare, { fids: String(file.id) });
    await callSigned(app, 'post', FolderAndFileDelete, session, { dirids: '', fids: String(file.id), is_real: 0 });

    for (const shareCode of [code, 'AAAAAAAAAAAAAAAAAAAAAA', 'not-a-code<>']) {
      const answer = await page(encodeURIComponent(shareCode));
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('<div id="root"></div>');
      expect(answer.body).not.toContain('binned');
      expect(titleOf(answer.body)).toBe('Shared files · Files');
      const tags = metaTags(answer.body);
      expect(tags['og:title']).toBe('Shared files');
      expect(tags['og:url']).toBe(`${app.url}/s/${encodeURIComponent(shareCode)}`);
      expect(tags.robots).toBe('noindex');
    }
  });

  it('escapes names and descriptions: markup in them stays text', async () => {
    // Names cannot hold < > " (docs/protocol.md): & and ' can.
    const name = `Tom & Jerry's &amp; notes.txt`;
    const file = await addFile(app.app.services, accountId, 0, name, 1);
    const { code } = await share(FileShare, { fids: String(file.id) }, { description: '</title><script>alert(1)</script>' });
    const { body } = await page(code);
    expect(body).not.toContain('<script>alert(1)</script>');
    expect(body).not.toContain("Jerry's &amp;");
    expect(titleOf(body)).toBe(`${name} · Files`);
    expect(metaTags(body)['og:title']).toBe(name);
    expect(metaTags(body)['og:description']).toBe('Shared file · 1 B — </title><script>alert(1)</script>');
  });

  it('HEAD answers the headers of the page without a body; other paths under a share code are no page of the app (404)', async () => {
    const file = await addFile(app.app.services, accountId, 0, 'head.txt', 1);
    const { code } = await share(FileShare, { fids: String(file.id) });
    const head = await page(code, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['cache-control']).toBe('no-store');
    expect(Number(head.headers['content-length'])).toBeGreaterThan(INDEX_HTML.length);

    const other = await send(app.url, 'GET', `/s/${code}/elsewhere`, {});
    expect(other.status).toBe(404);
    expect(other.body).not.toContain(INDEX_HTML);
    expect((await send(app.url, 'GET', '/folder/12', {})).body).toBe(INDEX_HTML);
  });
});

describe('share page previews and throttling', () => {
  let app: TestApp;
  let accountId: number;
  let session: Session;

  beforeAll(async () => {
    ({ app, accountId, session } = await withWebRoot());
  });
  afterAll(() => app.close());

  it('previews of a share with an extraction code are not counted; unknown codes are, exactly like ShareOpen', async () => {
    const file = await addFile(app.app.services, accountId, 0, 'guarded.txt', 1);
    const answer = await callSigned(app, 'post', FileShare, session, { fids: String(file.id), downpwd: 'right1', downValue: 0, description: '' });
    const code = element(resultXml(answer, FileShare), 'file')!.attrs.code;

    // Far more previews than any counter allows: none of them is a failure.
    for (let i = 0; i < 35; i++) expect(metaTags((await send(app.url, 'GET', `/s/${code}`, {})).body)['og:title']).toBe('Shared files — extraction code required');
    const opened = resultXml(await callInForm(app.url, 'post', ShareOpen, { code, downpwd: 'right1' }), ShareOpen);
    expect(element(opened, 'result')!.attrs.code).toBe('0');

    // Unknown codes: 30 previews block the address (shareRules.address), and ShareOpen then says 429.
    for (let i = 0; i < 30; i++) await send(app.url, 'GET', `/s/${String(i).padStart(22, 'x')}`, {});
    const blocked = element(resultXml(await callInForm(app.url, 'post', ShareOpen, { code, downpwd: 'right1' }), ShareOpen), 'result')!.attrs;
    expect(blocked.code).toBe('429');
    expect(Number(blocked.retryAfter)).toBeGreaterThan(0);
    // And a blocked address gets the generic preview, even of an open share.
    const open = await addFile(app.app.services, accountId, 0, 'open.txt', 1);
    const openShare = element(resultXml(await callSigned(app, 'post', FileShare, session, { fids: String(open.id), downpwd: '', downValue: 0, description: '' }), FileShare), 'file')!.attrs.code;
    const preview = await send(app.url, 'GET', `/s/${openShare}`, {});
    expect(preview.status).toBe(200);
    expect(metaTags(preview.body)['og:title']).toBe('Shared files');
  });
});

describe('withPreview', () => {
  it('adds a <title> when the page has none, and leaves a page without </head> alone', () => {
    const preview = { title: 'x & y', ogTitle: 'x', description: 'd', url: 'http://h/s/c' };
    expect(withPreview('<html><head></head><body></body></html>', preview)).toContain('<title>x &#38; y</title>\n  </head>');
    expect(withPreview('<p>no head</p>', preview)).toBe('<p>no head</p>');
  });

  it('escapes the five characters that matter in HTML text and attributes', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;');
  });

  it('formats sizes as the app does', () => {
    expect([0, 1023, 1536, 10 * 1024 * 1024, 150 * 1024 ** 3].map(formatPreviewSize)).toEqual(['0 B', '1,023 B', '1.5 KB', '10 MB', '150 GB']);
  });
});
