/**
 * The safety headers of every kind of answer (docs/security.md, docs/protocol.md §13.2):
 *
 * - every answer, whatever route and status, says `X-Content-Type-Options: nosniff`: no browser
 *   ever guesses that a download, a service answer or an error is a script or a page;
 * - the web app's pages (index.html for any client route, the share page with its link preview,
 *   the page shown before the app is built) carry the app's Content-Security-Policy (scripts,
 *   styles and connections from this origin only, no inline script, no plugins, never framed),
 *   `X-Frame-Options: DENY` for browsers that predate frame-ancestors, and a Referrer-Policy that
 *   keeps the page's URL (a share code, an extraction code in `?pwd=`) from other sites;
 * - every other HTML answer (help pages, error pages) cannot be framed either, and what users
 *   uploaded (downloads, direct links, cover images) is never a page of this origin: a sandboxing
 *   CSP, and downloads are attachments named by RFC 6266.
 *
 * One list of routes, one request of each kind, over HTTP against the whole service.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, type OperationSpec, type ServiceName } from '../../src/catalog/operations';
import { APP_SECURITY_HEADERS } from '../../src/protocol/web/web-app';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { callInForm, resultXml, send, soapEnvelope, type HttpAnswer } from '../helpers/requests';
import { insertTestFile, sha256Of, storeTestContent } from '../helpers/stored-files';

const op = (service: ServiceName, name: string): OperationSpec => findOperation(service, name)!;
const GetFiles = op('UserService', 'GetFiles');
const FileShare = op('FileService', 'FileShare');
const FileDownload = op('FileService', 'FileDownload');
const FilePreview = op('FileService', 'FilePreview');
const FileLink = op('FileService', 'FileLink');
const ShareImageUpload = op('FileService', 'ShareImageUpload');

/** A 1×1 transparent PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** The built app's shape, as `vite build` writes it: no inline script or style, hashed assets. */
const INDEX_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <title>Files</title>
    <script type="module" crossorigin src="/assets/index-abc123.js"></script>
    <link rel="stylesheet" crossorigin href="/assets/index-abc123.css">
  </head>
  <body><div id="root"></div></body>
</html>
`;

let app: TestApp;
let webRoot: string;
let alice: Session;
/** What the routes below need: made once, by the calls a client makes. */
const made = { shareCode: '', imagePath: '', downloadPath: '', htmlDownloadPath: '', linkPath: '', uploadPath: '', etag: '', previewPath: '', htmlPreviewPath: '' };
/** The answer of `/` before the app was built (taken before index.html is written). */
let notBuilt: HttpAnswer;

beforeAll(async () => {
  webRoot = await mkdtemp(path.join(os.tmpdir(), 'fss-web-'));
  app = await startTestApp({ FSS_WEB_ROOT: webRoot });
  notBuilt = await send(app.url, 'GET', '/', {});
  await mkdir(path.join(webRoot, 'assets'));
  await writeFile(path.join(webRoot, 'index.html'), INDEX_HTML);
  await writeFile(path.join(webRoot, 'assets', 'index-abc123.js'), 'console.log("app")\n');
  await writeFile(path.join(webRoot, 'assets', 'index-abc123.css'), 'body{margin:0}\n');

  const aliceId = await addAccount(app, 'alice', 'alice-password-1');
  alice = await logIn(app, 'post', 'alice', 'alice-password-1');
  const file = async (name: string, bytes: string) => {
    const { contentId } = await storeTestContent(app.app.services, bytes);
    return insertTestFile(app.app.services, { accountId: aliceId, name, contentId, sha256: sha256Of(bytes), size: Buffer.byteLength(bytes) });
  };
  const report = await file('report 2026 – été.txt', 'the report');
  const page = await file('page.html', '<script>alert(document.cookie)</script>');
  // Enough files for a listing over 64 KiB: it is streamed in chunks (http-common.ts answerXmlStream).
  for (let i = 0; i < 500; i++) await file(`bulk file number ${String(i).padStart(4, '0')} with a long name.txt`, `bulk ${i}`);

  const shared = await callSigned(app, 'post', FileShare, alice, { fids: String(report), downpwd: '', downValue: 0, description: 'Quarterly' });
  made.shareCode = element(resultXml(shared, FileShare), 'file')!.attrs.code;
  const image = await callInForm(app.url, 'post', ShareImageUpload, { uid: alice.uid, token: alice.token, fid: report, ImagefileName: 'cover.png', byteFileStream: PNG });
  made.imagePath = new URL(element(resultXml(image, ShareImageUpload), 'string')!.text).pathname;
  const urlOf = async (operation: OperationSpec, fid: number) =>
    new URL(element(resultXml(await callSigned(app, 'post', operation, alice, { fid }), operation), 'result')!.attrs.url).pathname;
  made.downloadPath = await urlOf(FileDownload, report);
  made.htmlDownloadPath = await urlOf(FileDownload, page);
  made.linkPath = await urlOf(FileLink, report);
  made.previewPath = await urlOf(FilePreview, report);
  made.htmlPreviewPath = await urlOf(FilePreview, page);
  made.etag = String((await send(app.url, 'HEAD', made.downloadPath, {})).headers.etag);
  const upload = await send(app.url, 'POST', '/upload/', { 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${alice.token}`, 'Upload-Length': '5' });
  made.uploadPath = new URL(String(upload.headers.location)).pathname;
}, 120_000);
afterAll(async () => {
  await app.close();
  await rm(webRoot, { recursive: true, force: true });
});

interface Route {
  /** What kind of answer this is, for the test's name. */
  readonly kind: string;
  readonly status: number;
  request(): Promise<HttpAnswer>;
}

const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
const tus = (extra: Record<string, string> = {}) => ({ 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${alice.token}`, ...extra });
const loginBody = 'uid=alice&pwd=alice-password-1';
const soapLogin = `<Login xmlns="http://tempuri.org/"><uid>alice</uid><pwd>alice-password-1</pwd></Login>`;

/** The app's pages: the CSP, X-Frame-Options and Referrer-Policy of the app. */
const appPages: readonly Route[] = [
  { kind: 'the app at /', status: 200, request: () => send(app.url, 'GET', '/', {}) },
  { kind: 'the app at a client route (/folder/12)', status: 200, request: () => send(app.url, 'GET', '/folder/12', {}) },
  { kind: 'the app at a client route, HEAD', status: 200, request: () => send(app.url, 'HEAD', '/search', {}) },
  { kind: 'a share page with its link preview', status: 200, request: () => send(app.url, 'GET', `/s/${made.shareCode}`, {}) },
  { kind: 'a share page of an unknown code', status: 200, request: () => send(app.url, 'GET', '/s/AAAAAAAAAAAAAAAAAAAAAA', {}) },
  { kind: 'the page shown before the app is built', status: 200, request: async () => notBuilt },
];

/** Every other kind of answer. */
const otherRoutes: readonly Route[] = [
  // The web app's files and refusals.
  { kind: 'a hashed script of the app', status: 200, request: () => send(app.url, 'GET', '/assets/index-abc123.js', {}) },
  { kind: 'a hashed stylesheet of the app', status: 200, request: () => send(app.url, 'GET', '/assets/index-abc123.css', {}) },
  { kind: 'a missing file of the app (404)', status: 404, request: () => send(app.url, 'GET', '/assets/missing.js', {}) },
  { kind: 'a POST to an app route (405)', status: 405, request: () => send(app.url, 'POST', '/folder/1', form, 'x=1') },
  { kind: 'an app path that cannot be decoded (400)', status: 400, request: () => send(app.url, 'GET', '/%E0%A4%A', {}) },
  // The services: documents, answers in the four forms, and their errors.
  { kind: 'a service help page', status: 200, request: () => send(app.url, 'GET', '/FileService.asmx', {}) },
  { kind: 'an operation help page', status: 200, request: () => send(app.url, 'GET', '/OAuthService.asmx?op=Login', {}) },
  { kind: 'an operation help page of an unknown operation (404)', status: 404, request: () => send(app.url, 'GET', '/OAuthService.asmx?op=Nope', {}) },
  { kind: 'a WSDL', status: 200, request: () => send(app.url, 'GET', '/FileService.asmx?WSDL', {}) },
  { kind: 'a disco document', status: 200, request: () => send(app.url, 'GET', '/FileService.asmx?disco', {}) },
  { kind: 'an unknown service (404 page)', status: 404, request: () => send(app.url, 'GET', '/NoSuchService.asmx', {}) },
  { kind: 'a service path with a wrong method (405 page)', status: 405, request: () => send(app.url, 'PUT', '/FileService.asmx', {}) },
  {
    kind: 'a SOAP 1.1 answer',
    status: 200,
    request: () => send(app.url, 'POST', '/OAuthService.asmx', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/Login"' }, soapEnvelope('1.1', soapLogin)),
  },
  {
    kind: 'a SOAP 1.2 answer',
    status: 200,
    request: () => send(app.url, 'POST', '/OAuthService.asmx', { 'Content-Type': 'application/soap+xml; charset=utf-8' }, soapEnvelope('1.2', soapLogin)),
  },
  {
    kind: 'a SOAP fault for a malformed envelope (400)',
    status: 400,
    request: () => send(app.url, 'POST', '/OAuthService.asmx', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/Login"' }, '<not-soap'),
  },
  {
    kind: 'a SOAP fault for an unknown action (500)',
    status: 500,
    request: () => send(app.url, 'POST', '/OAuthService.asmx', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/Nope"' }, soapEnvelope('1.1', soapLogin)),
  },
  { kind: 'a SOAP POST without a content type (415)', status: 415, request: () => send(app.url, 'POST', '/OAuthService.asmx', {}, '') },
  { kind: 'an HTTP GET answer', status: 200, request: () => send(app.url, 'GET', `/OAuthService.asmx/Login?${loginBody}`, {}) },
  { kind: 'an HTTP POST answer', status: 200, request: () => send(app.url, 'POST', '/OAuthService.asmx/Login', form, loginBody) },
  { kind: 'an HTTP GET error (500 text)', status: 500, request: () => send(app.url, 'GET', '/OAuthService.asmx/NoSuchOperation', {}) },
  { kind: 'an HTTP HEAD of an operation (500)', status: 500, request: () => send(app.url, 'HEAD', '/OAuthService.asmx/Login', {}) },
  { kind: 'a refusal of a signed call (401)', status: 200, request: () => send(app.url, 'GET', '/UserService.asmx/GetFiles?uid=1&token=x&dir=0&order=name&desc=0&sign=0', {}) },
  { kind: 'a listing streamed in chunks (over 64 KiB)', status: 200, request: () => callSigned(app, 'post', GetFiles, alice, { dir: '0', order: 'name', desc: '0' }) },
  // Uploads (tus).
  { kind: 'an upload created (201)', status: 201, request: () => send(app.url, 'POST', '/upload/', tus({ 'Upload-Length': '3' })) },
  { kind: 'an upload offset (HEAD)', status: 200, request: () => send(app.url, 'HEAD', made.uploadPath, tus()) },
  {
    kind: 'an upload chunk (PATCH, 204)',
    status: 204,
    request: () => send(app.url, 'PATCH', made.uploadPath, tus({ 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }), Buffer.from('ab')),
  },
  { kind: 'the upload options (OPTIONS)', status: 204, request: () => send(app.url, 'OPTIONS', '/upload/', { 'Tus-Resumable': '1.0.0' }) },
  { kind: 'an upload without a token (401)', status: 401, request: () => send(app.url, 'POST', '/upload/', { 'Tus-Resumable': '1.0.0', 'Upload-Length': '3' }) },
  { kind: 'an upload with a wrong method (405)', status: 405, request: () => send(app.url, 'GET', '/upload/', tus()) },
  // Download URLs.
  { kind: 'a download', status: 200, request: () => send(app.url, 'GET', made.downloadPath, {}) },
  { kind: 'a download of an HTML file', status: 200, request: () => send(app.url, 'GET', made.htmlDownloadPath, {}) },
  { kind: 'a download, HEAD', status: 200, request: () => send(app.url, 'HEAD', made.downloadPath, {}) },
  { kind: 'a download of a range (206)', status: 206, request: () => send(app.url, 'GET', made.downloadPath, { Range: 'bytes=0-2' }) },
  { kind: 'a download not modified (304)', status: 304, request: () => send(app.url, 'GET', made.downloadPath, { 'If-None-Match': made.etag }) },
  { kind: 'a download of a range past the end (416)', status: 416, request: () => send(app.url, 'GET', made.downloadPath, { Range: 'bytes=999-' }) },
  { kind: 'a download URL that is not genuine (403)', status: 403, request: () => send(app.url, 'GET', '/d/forged/name.txt', {}) },
  { kind: 'a download with a wrong method (405)', status: 405, request: () => send(app.url, 'POST', made.downloadPath, {}) },
  { kind: 'a preview', status: 200, request: () => send(app.url, 'GET', made.previewPath, {}) },
  { kind: 'a preview of an HTML file (as text)', status: 200, request: () => send(app.url, 'GET', made.htmlPreviewPath, {}) },
  { kind: 'a preview URL that is not genuine (403)', status: 403, request: () => send(app.url, 'GET', '/v/forged/name.txt', {}) },
  // Direct links and cover images.
  { kind: 'a direct link', status: 200, request: () => send(app.url, 'GET', made.linkPath, {}) },
  { kind: 'an unknown direct link (404)', status: 404, request: () => send(app.url, 'GET', '/l/AAAAAAAAAAAAAAAAAAAAAA/x.txt', {}) },
  { kind: 'a cover image', status: 200, request: () => send(app.url, 'GET', made.imagePath, {}) },
  { kind: 'an unknown cover image (404)', status: 404, request: () => send(app.url, 'GET', '/s/image/1/AAAAAAAAAAAAAAAAAAAAAA', {}) },
];

describe('X-Content-Type-Options: nosniff on every answer', () => {
  it.each([...appPages, ...otherRoutes].map((route) => [route.kind, route] as const))('%s', async (_kind, route) => {
    const answer = await route.request();
    expect(answer.status).toBe(route.status);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });
});

/** The directives of a Content-Security-Policy header, by name. */
function directives(header: string | string[] | undefined): Map<string, string[]> {
  const policy = new Map<string, string[]>();
  for (const part of String(header ?? '').split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) policy.set(name.toLowerCase(), sources);
  }
  return policy;
}

describe("the web app's pages", () => {
  it.each(appPages.map((route) => [route.kind, route] as const))('%s: the CSP, X-Frame-Options DENY and a Referrer-Policy', async (_kind, route) => {
    const answer = await route.request();
    expect(answer.contentType).toBe('text/html; charset=utf-8');
    const csp = directives(answer.headers['content-security-policy']);
    expect(csp.get('default-src')).toEqual(["'self'"]);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    expect(csp.get('style-src')).toEqual(["'self'"]);
    expect(csp.get('connect-src')).toEqual(["'self'"]);
    expect(csp.get('img-src')).toEqual(["'self'", 'data:', 'blob:']);
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('base-uri')).toEqual(["'self'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(answer.headers['x-frame-options']).toBe('DENY');
    expect(answer.headers['referrer-policy']).toBe('same-origin');
  });

  it('the policy the app is served with is the one exported for it (APP_SECURITY_HEADERS)', async () => {
    const answer = await send(app.url, 'GET', '/', {});
    for (const [name, value] of Object.entries(APP_SECURITY_HEADERS)) expect(answer.headers[name.toLowerCase()]).toBe(value);
  });

  it("the app's own index.html has no inline script, which the policy would refuse", async () => {
    const template = await readFile(fileURLToPath(new URL('../../../index.html', import.meta.url)), 'utf8');
    for (const script of template.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)) {
      expect(script[0]).toMatch(/\ssrc="/);
      expect(script[1].trim()).toBe('');
    }
    expect(template).not.toMatch(/<style\b|\sstyle="|\son[a-z]+="/i);
  });

  it('a share page keeps its link preview (Open Graph tags) under the policy, and is never stored or indexed', async () => {
    const answer = await send(app.url, 'GET', `/s/${made.shareCode}`, {});
    expect(answer.body).toContain('<meta property="og:title" content="report 2026 – été.txt" />');
    expect(answer.body).toContain(`<meta property="og:url" content="${app.url}/s/${made.shareCode}" />`);
    expect(answer.body).toContain(`<meta property="og:image" content="${app.url}${made.imagePath}" />`);
    expect(answer.body).toContain('<script type="module" crossorigin src="/assets/index-abc123.js"></script>');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['x-robots-tag']).toBe('noindex');
  });
});

describe('every other answer', () => {
  it.each(otherRoutes.map((route) => [route.kind, route] as const))('%s: an HTML answer cannot be framed or run as a page of this origin', async (_kind, route) => {
    const answer = await route.request();
    // A document a browser could show: HTML with a body (an empty HEAD answer shows nothing).
    if (!answer.contentType.startsWith('text/html') || Number(answer.headers['content-length']) === 0) return;
    const csp = directives(answer.headers['content-security-policy']);
    const framable = !csp.get('frame-ancestors')?.includes("'none'") && !csp.has('sandbox');
    expect(framable).toBe(false);
    expect(csp.get('script-src') ?? csp.get('default-src')).not.toContain("'unsafe-inline'");
  });

  it('what users uploaded is never a page of this origin: downloads, links, previews and cover images are sandboxed', async () => {
    for (const path of [made.downloadPath, made.htmlDownloadPath, made.linkPath, made.imagePath, made.previewPath, made.htmlPreviewPath]) {
      const answer = await send(app.url, 'GET', path, {});
      expect(answer.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('downloads and direct links are attachments, named in ASCII and exactly in UTF-8 (RFC 6266)', async () => {
    for (const path of [made.downloadPath, made.linkPath]) {
      const answer = await send(app.url, 'GET', path, {});
      expect(answer.headers['content-disposition']).toBe(
        `attachment; filename="report 2026 _ ete.txt"; filename*=UTF-8''report%202026%20%E2%80%93%20%C3%A9t%C3%A9.txt`,
      );
      expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    }
    const html = await send(app.url, 'GET', made.htmlDownloadPath, {});
    expect(html.headers['content-disposition']).toBe(`attachment; filename="page.html"; filename*=UTF-8''page.html`);
  });
});
