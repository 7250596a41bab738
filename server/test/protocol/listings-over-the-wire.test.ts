/**
 * The listing operations through the whole service (real SQLite file, real HTTP), as a client
 * sees them: GetFiles in all four call forms, and the other listings' documents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameKey, naturalSortKey } from '../../src/operations/tree/names';
import { addAccount, callSigned, element, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { callInForm, FORMS, ops, resultXml, type Form } from '../helpers/requests';

const { Login, GetFiles, GetFilesWhitPath, FileSearch, GetRecycleFiles } = ops;

let app: TestApp;
let aliceId: number;
let docsId: number;
let reportId: number;

/** Every element named `name` in an answer, with its attributes, in document order. */
function elements(xml: string, name: string): Array<Record<string, string>> {
  return [...xml.matchAll(new RegExp(`<${name}((?:\\s+[\\w:]+="[^"]*")*)\\s*/?>`, 'g'))].map((match) =>
    Object.fromEntries([...match[1].matchAll(/([\w:]+)="([^"]*)"/g)].map((a) => [a[1], a[2].replace(/&amp;/g, '&')])),
  );
}

/** The attributes of the <result> start tag (the shared element() helper reads childless elements only). */
function resultOf(xml: string): Record<string, string> {
  return elements(xml, 'result')[0];
}

async function insertTree(): Promise<void> {
  const { db } = app.app.services;
  const content = await db
    .insertInto('content')
    .values({ sha256: 'cd'.repeat(32), size: 10, storage_key: 'test/cd', created_at: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  const item = (name: string, updated: string) => ({
    account_id: aliceId,
    name,
    name_key: nameKey(name),
    sort_key: naturalSortKey(name),
    created_at: Date.parse(updated),
    updated_at: Date.parse(updated),
  });
  docsId = (await db.insertInto('folders').values({ ...item('Docs', '2026-02-01T10:00:00Z'), parent_id: 0, size: 10 }).returning('id').executeTakeFirstOrThrow()).id;
  const file = (name: string, folder: number, extra = {}) => ({
    ...item(name, '2026-02-02T10:00:00Z'),
    folder_id: folder,
    ext: name.split('.').pop()!.toLowerCase(),
    sha256: 'cd'.repeat(32),
    content_id: content.id,
    size: 10,
    ...extra,
  });
  reportId = (await db.insertInto('files').values(file('季度报告 & notes.docx', docsId)).returning('id').executeTakeFirstOrThrow()).id;
  await db.insertInto('files').values([file('file10.txt', 0), file('file2.txt', 0)]).execute();
  await db
    .insertInto('files')
    .values(file('gone.txt', docsId, { deleted_at: Date.parse('2026-02-03T00:00:00Z'), deleted_from: '/Docs' }))
    .execute();
}

async function login(form: Form): Promise<Session> {
  const answer = await callInForm(app.url, form, Login, { uid: 'alice', pwd: 'alice-password-1' });
  const token = element(resultXml(answer, Login), 'token');
  if (!token || token.text === '0') throw new Error(`login refused: ${answer.body}`);
  return { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key };
}

beforeAll(async () => {
  app = await startTestApp();
  aliceId = await addAccount(app, 'alice', 'alice-password-1');
  await insertTree();
});
afterAll(() => app.close());

describe.each(FORMS)('GetFiles over %s', (form) => {
  it('answers count, then the folders, then the files in natural order', async () => {
    const session = await login(form);
    const answer = await callSigned(app, form, GetFiles, session, { dir: '0', order: 'name', desc: '0' });
    expect(answer.status).toBe(200);
    const xml = resultXml(answer, GetFiles);
    expect(resultOf(xml)).toMatchObject({ code: '0', msg: '', count: '3' });
    expect(elements(xml, 'folder')).toEqual([
      { id: String(docsId), dir: '0', name: 'Docs', size: '10', time: '2026-02-01T10:00:00Z', shared: '0', linked: '0', encrypted: '0' },
    ]);
    expect(elements(xml, 'file').map((file) => file.name)).toEqual(['file2.txt', 'file10.txt']);
    expect(xml.indexOf('<folder ')).toBeLessThan(xml.indexOf('<file '));
  });

  it('a folder of another account, or none, answers code 404', async () => {
    const session = await login(form);
    const answer = await callSigned(app, form, GetFiles, session, { dir: '987654', order: 'name', desc: '0' });
    expect(resultOf(resultXml(answer, GetFiles))).toMatchObject({ code: '404', msg: 'folder not found' });
  });

  it('a bad order answers code 400 naming the allowed values', async () => {
    const session = await login(form);
    const answer = await callSigned(app, form, GetFiles, session, { dir: '0', order: 'NAME', desc: '0' });
    const result = resultOf(resultXml(answer, GetFiles));
    expect(result?.code).toBe('400');
    expect(result?.msg).toContain('name, time, size, share, link');
  });
});

describe('the other listings over the wire', () => {
  it('GetFilesWhitPath starts with <path> and gives items their path', async () => {
    const session = await login('soap11');
    const answer = await callSigned(app, 'soap11', GetFilesWhitPath, session, { dir: String(docsId), order: 'name', desc: '0' });
    const xml = resultXml(answer, GetFilesWhitPath);
    expect(xml).toMatch(/^<result code="0" msg="" count="1" xmlns=""><path value="\/Docs"><dir id="0" name="" \/><dir id="\d+" name="Docs" \/><\/path><file /);
    expect(elements(xml, 'file')[0]).toMatchObject({ id: String(reportId), path: '/Docs/季度报告 & notes.docx' });
  });

  it.each(['get', 'soap12'] as const)('FileSearch over %s finds "报告" with its path', async (form) => {
    const session = await login(form);
    const answer = await callSigned(app, form, FileSearch, session, { order: 'name', desc: '0', keyword: '报告' });
    const xml = resultXml(answer, FileSearch);
    expect(resultOf(xml)).toMatchObject({ code: '0', count: '1' });
    expect(resultOf(xml).truncated).toBeUndefined();
    expect(elements(xml, 'file')).toEqual([expect.objectContaining({ name: '季度报告 & notes.docx', ext: 'docx', path: '/Docs/季度报告 & notes.docx' })]);
  });

  it('FileSearch with an empty keyword answers code 400', async () => {
    const session = await login('post');
    const answer = await callSigned(app, 'post', FileSearch, session, { order: 'name', desc: '0', keyword: '' });
    expect(resultOf(resultXml(answer, FileSearch))).toMatchObject({ code: '400', msg: 'keyword is empty' });
  });

  it('GetRecycleFiles gives deleted, from, purge and path', async () => {
    const session = await login('post');
    const answer = await callSigned(app, 'post', GetRecycleFiles, session, { order: 'time', desc: '1' });
    const xml = resultXml(answer, GetRecycleFiles);
    expect(resultOf(xml)).toMatchObject({ code: '0', count: '1' });
    expect(elements(xml, 'file')).toEqual([
      expect.objectContaining({
        name: 'gone.txt',
        path: '/Docs/gone.txt',
        deleted: '2026-02-03T00:00:00Z',
        from: '/Docs',
        purge: '2026-03-05T00:00:00Z',
      }),
    ]);
  });
});
