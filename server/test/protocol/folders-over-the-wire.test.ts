/**
 * FolderAdd, FolderRename, FileRename and Move through the whole service (real SQLite file): the
 * result documents and refusals clients see, FolderAdd and FolderRename in each of the four forms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationSpec } from '../../src/catalog/operations';
import { addAccount, element, logIn, signedResult, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { FORMS, ops, type Form } from '../helpers/requests';
import { addFile } from '../helpers/tree';

const { FolderAdd, FolderRename, FileRename, Move } = ops;

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

/** The attributes of the first start tag `name`, whether or not the element has children. */
function startTag(xml: string, name: string): Record<string, string> | undefined {
  const match = new RegExp(`<${name}((?:\\s+[\\w:]+="[^"]*")*)\\s*/?>`).exec(xml);
  return match ? element(`<${name}${match[1]}/>`, name)!.attrs : undefined;
}

/** Calls a signed operation and reads the answer's <result> and, if any, its one item. */
async function call(form: Form, operation: OperationSpec, session: Session, params: Record<string, string | number>) {
  const { xml } = await signedResult(app, form, operation, session, params);
  return { xml, result: startTag(xml, 'result')!, folder: startTag(xml, 'folder'), file: startTag(xml, 'file') };
}

const ISO_SECOND = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe.each(FORMS)('over %s', (form) => {
  let alice: Session;
  beforeAll(async () => {
    alice = await login(form, 'alice', 'alice-password-1');
  });

  it('FolderAdd answers the new <folder/> with code 0', async () => {
    const { result, folder } = await call(form, FolderAdd, alice, { dirid: 0, name: `Photos ${form}` });
    expect(result).toMatchObject({ code: '0', msg: '' });
    expect(folder).toMatchObject({ dir: '0', name: `Photos ${form}`, size: '0', shared: '0', linked: '0', encrypted: '0' });
    expect(folder!.id).toMatch(/^[1-9]\d*$/);
    expect(folder!.time).toMatch(ISO_SECOND);
    expect(folder).not.toHaveProperty('tip');
  });

  it("FolderAdd keeps a name with &, ' and other scripts intact", async () => {
    const name = `Tom & Jerry's Файлы é ${form}`;
    const { folder } = await call(form, FolderAdd, alice, { dirid: 0, name });
    expect(folder!.name).toBe(name);
  });

  it('FolderAdd inside a folder answers it with that parent', async () => {
    const parent = (await call(form, FolderAdd, alice, { dirid: 0, name: `Parent ${form}` })).folder!;
    const { folder } = await call(form, FolderAdd, alice, { dirid: parent.id, name: 'Child' });
    expect(folder!.dir).toBe(parent.id);
  });

  it('FolderAdd with a taken name answers 409 saying which', async () => {
    await call(form, FolderAdd, alice, { dirid: 0, name: `Taken ${form}` });
    const { xml, result } = await call(form, FolderAdd, alice, { dirid: 0, name: `TAKEN ${form}` });
    expect(result).toMatchObject({ code: '409', msg: `a folder named "Taken ${form}" already exists in this folder`, reason: 'name-taken' });
    expect(xml).not.toContain('<folder');
  });

  it('FolderAdd with an invalid name answers 400', async () => {
    const { result } = await call(form, FolderAdd, alice, { dirid: 0, name: 'a|b' });
    expect(result).toMatchObject({ code: '400', msg: 'name may not contain "|"' });
  });

  it('FolderRename answers the renamed <folder/>', async () => {
    const created = (await call(form, FolderAdd, alice, { dirid: 0, name: `report ${form}` })).folder!;
    const { result, folder } = await call(form, FolderRename, alice, { dirid: created.id, newname: `Report ${form}` });
    expect(result.code).toBe('0');
    expect(folder).toMatchObject({ id: created.id, dir: '0', name: `Report ${form}`, size: '0' });
    expect(folder!.time).toMatch(ISO_SECOND);
  });

  it('FolderRename to a taken name answers 409', async () => {
    const first = (await call(form, FolderAdd, alice, { dirid: 0, name: `first ${form}` })).folder!;
    await call(form, FolderAdd, alice, { dirid: 0, name: `second ${form}` });
    const { result } = await call(form, FolderRename, alice, { dirid: first.id, newname: `Second ${form}` });
    expect(result).toMatchObject({ code: '409', msg: `a folder named "second ${form}" already exists in this folder` });
  });

  it("FolderRename of another account's folder answers 404", async () => {
    const bob = await login(form, 'bob', 'bob-password-1');
    const bobs = (await call(form, FolderAdd, bob, { dirid: 0, name: `bobs ${form}` })).folder!;
    const { result } = await call(form, FolderRename, alice, { dirid: bobs.id, newname: 'mine now' });
    expect(result.code).toBe('404');
  });
});

describe('files and moves (HTTP POST)', () => {
  let alice: Session;
  beforeAll(async () => {
    alice = await login('post', 'alice', 'alice-password-1');
  });

  it('FileRename answers the renamed <file/> with its new ext', async () => {
    const added = await addFile(app.app.services, aliceId, 0, 'notes.txt', 42);
    const { result, file } = await call('post', FileRename, alice, { fid: added.id, newname: 'Notes.MD' });
    expect(result.code).toBe('0');
    expect(file).toMatchObject({ id: String(added.id), dir: '0', name: 'Notes.MD', ext: 'md', size: '42', hash: added.hash });
  });

  it('Move answers an empty result, and the folder holds what moved, with its size', async () => {
    const target = (await call('post', FolderAdd, alice, { dirid: 0, name: 'Move target' })).folder!;
    const sub = (await call('post', FolderAdd, alice, { dirid: 0, name: 'Move sub' })).folder!;
    const f = await addFile(app.app.services, aliceId, 0, 'moving.bin', 100);
    const { xml, result } = await call('post', Move, alice, { dirids: sub.id, fids: ` ${f.id} `, todir: target.id });
    expect(result).toMatchObject({ code: '0', msg: '' });
    expect(xml).not.toContain('<folder');
    // Renaming with the same name answers the folder as it is: its size shows what moved in.
    const { folder } = await call('post', FolderRename, alice, { dirid: target.id, newname: 'Move target' });
    expect(folder!.size).toBe('100');
  });

  it('Move of a folder into its own subfolder answers 409', async () => {
    const outer = (await call('post', FolderAdd, alice, { dirid: 0, name: 'Outer' })).folder!;
    const inner = (await call('post', FolderAdd, alice, { dirid: outer.id, name: 'Inner' })).folder!;
    const { result } = await call('post', Move, alice, { dirids: outer.id, fids: '', todir: inner.id });
    expect(result).toMatchObject({ code: '409', msg: 'cannot move a folder into itself or its own subfolder', reason: 'into-itself' });
  });

  it("Move with another account's id answers 404", async () => {
    const bobsFile = await addFile(app.app.services, bobId, 0, 'bobs.txt', 1);
    const { result } = await call('post', Move, alice, { dirids: '', fids: String(bobsFile.id), todir: 0 });
    expect(result.code).toBe('404');
  });

  it('Move with both lists empty answers 400', async () => {
    const { result } = await call('post', Move, alice, { dirids: '', fids: '', todir: 0 });
    expect(result).toMatchObject({ code: '400', msg: 'dirids and fids are both empty: name at least one item' });
  });
});
