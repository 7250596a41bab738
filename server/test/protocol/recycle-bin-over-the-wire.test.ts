/**
 * The recycle bin through the whole service (real SQLite file): FolderAndFileDelete and
 * FolderAndFileRestore in each of the four forms, FolderDelete and RecycleEmpty, and the refusals
 * clients see.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationSpec } from '../../src/catalog/operations';
import { addAccount, element, logIn, signedResult, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { FORMS, ops, type Form } from '../helpers/requests';
import { addFile } from '../helpers/tree';

const { FolderAdd, FolderAndFileDelete, FolderDelete, FolderAndFileRestore, RecycleEmpty, GetRecycleFiles } = ops;

let app: TestApp;
let aliceId: number;
let bobId: number;

beforeAll(async () => {
  app = await startTestApp();
  aliceId = await addAccount(app, 'alice', 'alice-password-1');
  bobId = await addAccount(app, 'bob', 'bob-password-1');
});
afterAll(() => app.close());

const login = (form: Form, uid: string, pwd: string): Promise<Session> => logIn(app, form, uid, pwd);

/** The attributes of every element `name` in the answer (items are empty elements). */
function all(xml: string, name: string): Array<Record<string, string>> {
  return [...xml.matchAll(new RegExp(`<${name}((?:\\s+[\\w:]+="[^"]*")*)\\s*/>`, 'g'))].map((m) => element(`<${name}${m[1]}/>`, name)!.attrs);
}

/** The attributes of the <result> start tag. */
function resultOf(xml: string): Record<string, string> {
  const match = /<result((?:\s+[\w:]+="[^"]*")*)\s*\/?>/.exec(xml);
  return element(`<result${match![1]}/>`, 'result')!.attrs;
}

/** Calls a signed operation and reads the answer's <result>, folders and files. */
async function call(form: Form, operation: OperationSpec, session: Session, params: Record<string, string | number>) {
  const { xml } = await signedResult(app, form, operation, session, params);
  return { xml, result: resultOf(xml), folders: all(xml, 'folder'), files: all(xml, 'file') };
}

const ISO_SECOND = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe.each(FORMS)('over %s', (form) => {
  let alice: Session;
  beforeAll(async () => {
    alice = await login(form, 'alice', 'alice-password-1');
  });

  it('FolderAndFileDelete with is_real=0 answers an empty result, and the bin lists what went, with where from', async () => {
    const folder = (await call(form, FolderAdd, alice, { dirid: 0, name: `Old ${form}` })).folders[0];
    const inside = await addFile(app.app.services, aliceId, Number(folder.id), 'inside.txt', 10);
    const loose = await addFile(app.app.services, aliceId, 0, `loose ${form}.txt`, 3);

    const { xml, result } = await call(form, FolderAndFileDelete, alice, { dirids: folder.id, fids: ` ${loose.id} `, is_real: 0 });
    expect(result).toMatchObject({ code: '0', msg: '' });
    expect(xml).not.toContain('<folder');

    const bin = await call(form, GetRecycleFiles, alice, { order: 'name', desc: '0' });
    const binned = bin.folders.find((f) => f.id === folder.id);
    expect(binned).toMatchObject({ name: `Old ${form}`, size: '10', from: '/' });
    expect(binned!.deleted).toMatch(ISO_SECOND);
    expect(bin.files.find((f) => f.id === String(loose.id))).toMatchObject({ name: `loose ${form}.txt`, from: '/' });
    // What lies beneath a binned folder is not an entry of its own.
    expect(bin.files.some((f) => f.id === String(inside.id))).toBe(false);
  });

  it('FolderAndFileRestore answers where each item went, with its path; a taken name gets " (restored)"', async () => {
    const folder = (await call(form, FolderAdd, alice, { dirid: 0, name: `Back ${form}` })).folders[0];
    const file = await addFile(app.app.services, aliceId, Number(folder.id), 'report.pdf', 7);
    const rootFile = await addFile(app.app.services, aliceId, 0, `notes ${form}.txt`, 2);
    await call(form, FolderAndFileDelete, alice, { dirids: '', fids: String(file.id), is_real: 0 });
    await call(form, FolderAndFileDelete, alice, { dirids: folder.id, fids: String(rootFile.id), is_real: 0 });
    await call(form, FolderAdd, alice, { dirid: 0, name: `back ${form}` });

    const { result, folders, files } = await call(form, FolderAndFileRestore, alice, { dirids: folder.id, fids: `${file.id},${rootFile.id}` });

    expect(result).toMatchObject({ code: '0', msg: '', count: '3' });
    expect(folders).toEqual([expect.objectContaining({ id: folder.id, dir: '0', name: `Back ${form} (restored)`, path: `/Back ${form} (restored)` })]);
    expect(files).toEqual([
      expect.objectContaining({ id: String(file.id), dir: folder.id, name: 'report.pdf', ext: 'pdf', size: '7', path: `/Back ${form} (restored)/report.pdf` }),
      expect.objectContaining({ id: String(rootFile.id), dir: '0', name: `notes ${form}.txt`, path: `/notes ${form}.txt` }),
    ]);
    expect(folders[0]).not.toHaveProperty('deleted');
  });

  it('FolderAndFileRestore of an item that is not in the bin answers 409', async () => {
    const live = await addFile(app.app.services, aliceId, 0, `live ${form}.txt`, 1);
    const { xml, result } = await call(form, FolderAndFileRestore, alice, { dirids: '', fids: String(live.id) });
    expect(result).toMatchObject({ code: '409', msg: `file ${live.id} is not in the recycle bin` });
    expect(xml).not.toContain('<file');
  });

  it('FolderAndFileDelete with is_real=1 deletes for good, from the tree or from the bin', async () => {
    const live = await addFile(app.app.services, aliceId, 0, `gone ${form}.txt`, 4);
    const binned = await addFile(app.app.services, aliceId, 0, `binned ${form}.txt`, 5);
    await call(form, FolderAndFileDelete, alice, { dirids: '', fids: String(binned.id), is_real: 0 });
    const { result } = await call(form, FolderAndFileDelete, alice, { dirids: '', fids: `${live.id},${binned.id}`, is_real: 1 });
    expect(result).toMatchObject({ code: '0', msg: '' });
    const rows = await app.app.services.db.selectFrom('files').select('id').where('id', 'in', [live.id, binned.id]).execute();
    expect(rows).toEqual([]);
  });
});

describe('refusals and the other operations (HTTP POST)', () => {
  let alice: Session;
  beforeAll(async () => {
    alice = await login('post', 'alice', 'alice-password-1');
  });

  it('is_real other than 0 or 1 answers 400', async () => {
    const f = await addFile(app.app.services, aliceId, 0, 'is-real.txt', 1);
    const { result } = await call('post', FolderAndFileDelete, alice, { dirids: '', fids: String(f.id), is_real: 2 });
    expect(result).toMatchObject({ code: '400', msg: 'is_real must be 0 (to the recycle bin) or 1 (delete permanently)' });
  });

  it("another account's ids answer 404, and nothing of theirs changes", async () => {
    const bobs = await addFile(app.app.services, bobId, 0, 'bobs.txt', 1);
    for (const isReal of [0, 1]) {
      const { result } = await call('post', FolderAndFileDelete, alice, { dirids: '', fids: String(bobs.id), is_real: isReal });
      expect(result.code).toBe('404');
    }
    expect((await call('post', FolderAndFileRestore, alice, { dirids: '', fids: String(bobs.id) })).result.code).toBe('404');
    const row = await app.app.services.db.selectFrom('files').select(['deleted_at']).where('id', '=', bobs.id).executeTakeFirst();
    expect(row).toEqual({ deleted_at: null });
  });

  it('FolderDelete deletes folders; an empty dirids answers 400', async () => {
    const folder = (await call('post', FolderAdd, alice, { dirid: 0, name: 'FolderDelete me' })).folders[0];
    expect((await call('post', FolderDelete, alice, { dirids: folder.id, is_real: 0 })).result).toMatchObject({ code: '0', msg: '' });
    expect((await call('post', FolderDelete, alice, { dirids: '', is_real: 0 })).result.code).toBe('400');
  });

  it('RecycleEmpty empties the bin and answers an empty result', async () => {
    const f = await addFile(app.app.services, aliceId, 0, 'empty me.txt', 1);
    await call('post', FolderAndFileDelete, alice, { dirids: '', fids: String(f.id), is_real: 0 });
    expect((await call('post', RecycleEmpty, alice, {})).result).toMatchObject({ code: '0', msg: '' });
    const bin = await call('post', GetRecycleFiles, alice, { order: 'name', desc: '0' });
    expect(bin.result).toMatchObject({ code: '0', count: '0' });
  });
});
