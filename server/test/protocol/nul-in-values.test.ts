/**
 * NUL in a parameter value (docs/protocol.md §2.2): `%00` in an HTTP GET/POST value is refused with
 * 400 before any operation runs, on both engines, so that nothing is stored altered (PostgreSQL text
 * cannot hold U+0000). SOAP cannot carry a NUL at all: XML 1.0 has none, raw or as `&#0;`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callSigned, element, newSession, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { callInForm, ops, resultXml, send, soapEnvelope } from '../helpers/requests';

let app: TestApp;
let alice: Session;
let folderId = 0;

const { FolderAdd, FolderShare, FileSearch, Login, ShareImageUpload } = ops;

beforeAll(async () => {
  app = await startTestApp();
  alice = await newSession(app, 'alice');
  const added = await callSigned(app, 'post', FolderAdd, alice, { dirid: 0, name: 'Docs' });
  folderId = Number(element(resultXml(added, FolderAdd), 'folder')!.attrs.id);
});
afterAll(() => app.close());

async function sharesOf(): Promise<unknown[]> {
  return app.app.services.db.selectFrom('shares').selectAll().execute();
}

describe.each(['get', 'post'] as const)('%00 over HTTP %s', (form) => {
  it('in a share description: 400 naming the parameter, and no share is made', async () => {
    const answer = await callSigned(app, form, FolderShare, alice, { dirids: String(folderId), downpwd: '', downValue: 0, description: 'before\u0000after' });
    expect(answer.status).toBe(200);
    expect(element(resultXml(answer, FolderShare), 'result')!.attrs).toMatchObject({ code: '400', msg: 'description may not contain NUL characters' });
    expect(await sharesOf()).toEqual([]);
  });

  it('is refused before the token is checked: a NUL is a malformed call, whoever sends it', async () => {
    const answer = await callInForm(app.url, form, FileSearch, { uid: alice.uid, token: 'not-a-token', order: 'name', desc: '0', keyword: 'a\u0000', sign: 'x' });
    expect(element(resultXml(answer, FileSearch), 'result')!.attrs).toMatchObject({ code: '400', msg: 'keyword may not contain NUL characters' });
  });

  it('in a password: Login answers <token>0</token>, as it refuses every login', async () => {
    const answer = await callInForm(app.url, form, Login, { uid: 'alice', pwd: 'alice-password-1\u0000' });
    expect(element(resultXml(answer, Login), 'token')?.text).toBe('0');
  });

  it('in ShareImageUpload: the string ERROR 400', async () => {
    const answer = await callInForm(app.url, form, ShareImageUpload, { uid: alice.uid, token: alice.token, fid: 1, ImagefileName: 'a\u0000.png', byteFileStream: Uint8Array.from([137, 80]) });
    expect(resultXml(answer, ShareImageUpload)).toMatch(/<string [^>]*>ERROR 400 ImagefileName may not contain NUL characters<\/string>/);
  });

  it('0 bytes inside a byte array are data, not text: a PNG (which holds them) reaches the operation', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
    expect(png.includes(0)).toBe(true);
    const answer = await callInForm(app.url, form, ShareImageUpload, { uid: alice.uid, token: alice.token, fid: 987654321, ImagefileName: 'a.png', byteFileStream: png });
    expect(resultXml(answer, ShareImageUpload)).toMatch(/ERROR 404 /);
  });
});

describe('SOAP', () => {
  it('cannot carry a NUL: &#0; makes the document unreadable (400, empty body)', async () => {
    const call = `<FileSearch xmlns="http://tempuri.org/"><uid>${alice.uid}</uid><token>${alice.token}</token><order>name</order><desc>0</desc><keyword>a&#0;</keyword><sign>x</sign></FileSearch>`;
    const answer = await send(app.url, 'POST', '/UserService.asmx', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/FileSearch"' }, soapEnvelope('1.1', call));
    expect(answer.status).toBe(400);
    expect(answer.body).toBe('');
  });
});
