/**
 * The authorization matrix: every operation, with every parameter that names a folder or a file
 * (found from the catalog: corpus/id-params.ts), pointed at (1) another account's item, (2) an item
 * of the caller locked by encryption for the caller's session, (3) an item in the caller's bin,
 * (4) an id no item has. Each gets the answer docs/protocol.md decides (§10.3, §12, §14, §15);
 * "another's" and "missing" are answered alike (no existence oracle); and nothing of either account
 * changes. Where the documented answer is that the call is allowed and changes something (deleting
 * a locked item, restoring one from the bin), it is made on an item of its own, and nothing else changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type OperationSpec } from '../../src/catalog/operations';
import { FORMS, type Form } from '../helpers/requests';
import { idParams, type IdParam, type ItemKind } from './corpus/id-params';
import { callRequest, sendRaw, signFor, type ParamTexts } from './corpus/wire';
import { addFolder, addStoredFile, buildWorld, callOk, MISSING_ID, stateOf, worldState, type World } from './corpus/world';

type Case = 'another' | 'locked' | 'bin' | 'missing';
const CASES: readonly Case[] = ['another', 'locked', 'bin', 'missing'];

/**
 * What a call gets: a refusal code, or `allowed` (code 0) changing nothing (a rename to the same
 * name, a read, an unshare of what is not shared), or `changes` (code 0) on an item of its own.
 */
type Expected = { readonly refused: string } | { readonly allowed: 'no change' | 'changes' };

const refused = (code: string): Expected => ({ refused: code });
const NO_CHANGE: Expected = { allowed: 'no change' };

/**
 * The answers docs/protocol.md gives an item of the caller's that is locked: §14 (423 for listing,
 * downloading, adding to, moving into or out of it, encrypting again, sharing, e-mailing, linking,
 * cover images; a wrong password 403; Decrypt of a file inside an encrypted folder 409; the
 * ShareService sees only its share: 404) and §12 (restoring a live item: 409). Everything else is
 * allowed on a locked item: its name and place are not secret. The locked items are the folder
 * Vault and the file beneath it. An id-bearing parameter with no entry here fails the matrix:
 * decide its answer, document it, then add it.
 */
const LOCKED: Record<string, Expected> = {
  'FolderAndFileDelete.dirids': { allowed: 'changes' },
  'FolderAndFileDelete.fids': { allowed: 'changes' },
  'FolderDelete.dirids': { allowed: 'changes' },
  'FolderAndFileRestore.dirids': refused('409'),
  'FolderAndFileRestore.fids': refused('409'),
  'FolderShare.dirids': refused('423'),
  'FileShare.fids': refused('423'),
  'FolderEncrypt.dirid': refused('423'),
  'FileEncrypt.fid': refused('423'),
  'FileAdd.dirid': refused('423'),
  'FolderRename.dirid': NO_CHANGE,
  'ShareImageUpload.fid': refused('423'),
  'GetFolderEmailShareInfo.dirid': NO_CHANGE,
  'GetFileEmailShareInfo.fid': NO_CHANGE,
  'FolderEmailShare.dirid': refused('423'),
  'FolderAdd.dirid': refused('423'),
  'FileRename.fid': NO_CHANGE,
  'Move.dirids': NO_CHANGE,
  'Move.fids': refused('423'),
  'Move.todir': refused('423'),
  // Copy refuses every encrypted item and destination, locked or not (docs/protocol.md §10.8).
  'Copy.dirids': refused('423'),
  'Copy.fids': refused('423'),
  'Copy.todir': refused('423'),
  // NamesTaken answers a locked folder as its listing does (docs/protocol.md §10.9).
  'NamesTaken.dirid': refused('423'),
  'FileDownload.fid': refused('423'),
  'FilePreview.fid': refused('423'),
  // ZipDownload takes encrypted items only while the session has them unlocked (§13.3; zip-downloads.test.ts).
  'ZipDownload.dirids': refused('423'),
  'ZipDownload.fids': refused('423'),
  'Unshare.dirids': NO_CHANGE,
  'Unshare.fids': NO_CHANGE,
  'FileEmailShare.fid': refused('423'),
  'FileLink.fid': refused('423'),
  'FileUnlink.fid': NO_CHANGE,
  'Unlock.dirid': refused('403'),
  'Unlock.fid': refused('403'),
  // Lock of a locked item is the no-op it asks for (docs/protocol.md §14).
  'Lock.dirid': NO_CHANGE,
  'Lock.fid': NO_CHANGE,
  'Decrypt.dirid': refused('403'),
  // The locked file lies in an encrypted folder: Decrypt refuses it before the password (§14).
  'Decrypt.fid': refused('409'),
  'GetFiles.dir': refused('423'),
  'GetFilesWhitPath.dir': refused('423'),
  'ShareList.dir': refused('404'),
  'ShareDownload.fid': refused('404'),
  'ShareZipDownload.fids': refused('404'),
  'SharePreview.fid': refused('404'),
};

/** In the bin an item is not found (§10.3), except for restoring it, which is what the bin is for (§12.3). */
function inBin(entry: IdParam): Expected {
  return entry.op.name === 'FolderAndFileRestore' ? { allowed: 'changes' } : refused('404');
}

function expectedFor(entry: IdParam, which: Case): Expected | undefined {
  if (which === 'another' || which === 'missing') return refused('404');
  if (which === 'bin') return inBin(entry);
  return LOCKED[`${entry.op.name}.${entry.param.name}`];
}

let world: World;
let readme: { hash: string; size: number };
const names = new Map<number, string>();

beforeAll(async () => {
  world = await buildWorld();
  const { db } = world.app.app.services;
  const row = await db.selectFrom('files').select(['sha256', 'size']).where('id', '=', world.alices.rootFile).executeTakeFirstOrThrow();
  readme = { hash: row.sha256, size: row.size };
  for (const table of ['folders', 'files'] as const) {
    for (const item of await db.selectFrom(table).select(['id', 'name']).execute()) names.set(table === 'folders' ? item.id : -item.id, item.name);
  }
}, 120_000);
afterAll(() => world?.app.close());

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** Items made for one call that is expected to change them: the only rows that call may touch. */
interface Scratch {
  readonly folders: readonly number[];
  readonly files: readonly number[];
}
const NONE: Scratch = { folders: [], files: [] };
const fresh = () => Math.random().toString(36).slice(2, 8);

/** An item of this case for the parameter's kind; a fresh one of the caller's when the call is expected to change it. */
async function target(kind: ItemKind, which: Case, changes: boolean): Promise<{ id: number; scratch: Scratch }> {
  const { alices, bobs, owner, app } = world;
  const { services } = app.app;
  if (changes && which === 'locked') {
    const folder = await addFolder(world, owner, 0, `Locked ${fresh()}`);
    const file = await addStoredFile(services, owner.uid, folder, 'inside.txt');
    await callOk(world, owner, 'FileService', 'FolderEncrypt', { dirid: folder, password: 'fresh-pass', password_tip: 'fresh hint' });
    return { id: kind === 'folder' ? folder : file, scratch: { folders: [folder], files: [file] } };
  }
  if (changes && which === 'bin') {
    const id = kind === 'folder' ? await addFolder(world, owner, 0, `Binned ${fresh()}`) : await addStoredFile(services, owner.uid, 0, `binned-${fresh()}.txt`);
    await callOk(world, owner, 'FileService', 'FolderAndFileDelete', { dirids: kind === 'folder' ? String(id) : '', fids: kind === 'file' ? String(id) : '', is_real: 0 });
    return { id, scratch: kind === 'folder' ? { folders: [id], files: [] } : { folders: [], files: [id] } };
  }
  const ids: Record<Case, [number, number]> = {
    another: [bobs.folder, bobs.file],
    locked: [alices.lockedFolder, alices.lockedFile],
    bin: [alices.binnedFolder, alices.binnedFile],
    missing: [MISSING_ID, MISSING_ID],
  };
  return { id: ids[which][kind === 'folder' ? 0 : 1], scratch: NONE };
}

/**
 * The other parameters of a call: valid, about the caller's own items, so that only the probed id
 * decides the answer. A rename gives the item its own name (so that an allowed rename changes
 * nothing); Unlock and Decrypt a wrong password. A parameter name with no value here fails the matrix.
 */
function otherParams(op: OperationSpec, probed: IdParam, id: number): ParamTexts {
  const ownName = names.get(probed.kind === 'folder' ? id : -id) ?? 'Renamed';
  const values: Record<string, () => string> = {
    uid: () => String(world.alice.uid),
    token: () => world.alice.token,
    dirids: () => (probed.param.name === 'todir' ? String(world.alices.folder) : ''),
    fids: () => '',
    dirid: () => '0',
    fid: () => '0',
    todir: () => '0',
    is_real: () => '0',
    downpwd: () => '',
    downValue: () => '0',
    description: () => '',
    password: () => 'wrong-password',
    password_tip: () => 'a hint',
    newname: () => ownName,
    name: () => (op.name === 'FileAdd' ? 'probe.txt' : 'probe'),
    names: () => 'probe.txt/Docs',
    ext: () => 'txt',
    size: () => String(readme.size),
    hash: () => readme.hash,
    to: () => 'friend@example.com',
    ImagefileName: () => 'cover.png',
    byteFileStream: () => PNG.toString('base64'),
    code: () => world.alices.shareCode,
    order: () => 'name',
    desc: () => '0',
    dir: () => '0',
  };
  const texts: ParamTexts = {};
  for (const p of op.params) {
    if (p.name === 'sign' || p.name === probed.param.name) continue;
    const value = values[p.name];
    if (!value) throw new Error(`the authorization matrix has no value for parameter ${p.name} of ${op.name}`);
    texts[p.name] = value();
  }
  return texts;
}

/** The code and message of a layer-2 answer in any form: <result code msg>, or ShareImageUpload's ERROR <code> <msg>. */
function refusalOf(body: string): { code: string; msg: string } | null {
  const result = /<result code="(\d+)" msg="([^"]*)"/.exec(body);
  if (result) return { code: result[1], msg: result[2] };
  const error = /(?:<string xmlns="[^"]*">|<ShareImageUploadResult>)ERROR (\d{3}) ([^<]*)</.exec(body);
  if (error) return { code: error[1], msg: error[2] };
  return /(?:<string xmlns="[^"]*">|<ShareImageUploadResult>)[^<]+</.test(body) ? { code: '0', msg: '' } : null;
}

/** A state without the scratch items and the rows that refer to them: what an allowed change may touch. */
function without(state: Awaited<ReturnType<typeof stateOf>>, scratch: Scratch) {
  const folders = new Set(scratch.folders);
  const files = new Set(scratch.files);
  return {
    ...state,
    folders: state.folders.filter((f) => !folders.has(f.id)),
    files: state.files.filter((f) => !files.has(f.id)),
    keys: state.keys.filter((k) => !(k.item_type === 'folder' ? folders : files).has(k.item_id)),
  };
}

const matrix = idParams();
const answers = new Map<string, { code: string; msg: string; id: number }>();
let tried = 0;

describe('the id-bearing parameters of the catalog', () => {
  it('are found for every operation whose parameters name items, and every one has a documented answer for each case', () => {
    expect(matrix.length).toBeGreaterThan(0);
    for (const op of operations) {
      if (op.params.some((p) => /^(dirids?|fids?|todir|dir)$/.test(p.name))) expect(matrix.some((m) => m.op === op), op.name).toBe(true);
    }
    const undecided = matrix.flatMap((entry) => CASES.filter((which) => expectedFor(entry, which) === undefined).map((which) => `${entry.op.name}.${entry.param.name} (${which})`));
    expect(undecided).toEqual([]);
  });
});

describe.each(CASES)('an id that is %s', (which) => {
  matrix.forEach((entry, index) => {
    // The forms take turns: each parameter meets each form across the four cases.
    const form: Form = FORMS[(index + CASES.indexOf(which)) % FORMS.length];
    const expected = expectedFor(entry, which);
    const label = `${entry.op.name}.${entry.param.name} over ${form}: ${expected === undefined ? 'undecided' : 'refused' in expected ? expected.refused : `allowed, ${expected.allowed}`}`;
    it(label, async () => {
      expect(expected, 'no documented answer').toBeDefined();
      const changes = expected !== undefined && 'allowed' in expected && expected.allowed === 'changes';
      const { id, scratch } = await target(entry.kind, which, changes);
      const texts: ParamTexts = { ...otherParams(entry.op, entry, id), [entry.param.name]: String(id) };
      if (entry.op.params.some((p) => p.name === 'sign')) texts.sign = signFor(entry.op, world.alice.key, texts);
      const before = await worldState(world);
      const answer = await sendRaw(world.app.url, callRequest(entry.op, form, texts));
      tried++;
      expect(answer.status, answer.body).toBe(200);
      const got = refusalOf(answer.body);
      expect(got, answer.body).not.toBeNull();
      answers.set(`${which} ${entry.op.name}.${entry.param.name}`, { ...got!, id });
      expect(got!.code, got!.msg).toBe(expected && 'refused' in expected ? expected.refused : '0');
      const after = await worldState(world);
      expect(after.bob).toEqual(before.bob);
      if (changes) expect(without(after.alice, scratch)).toEqual(without(before.alice, scratch));
      else expect(after.alice).toEqual(before.alice);
    });
  });
});

describe('no existence oracle', () => {
  it.each(matrix.map((m) => [`${m.op.name}.${m.param.name}`] as const))("%s answers another account's id exactly as an id that does not exist", (key) => {
    const another = answers.get(`another ${key}`);
    const missing = answers.get(`missing ${key}`);
    expect(another && missing, 'both cases ran').toBeTruthy();
    expect(another!.msg.replace(String(another!.id), 'N')).toBe(missing!.msg.replace(String(missing!.id), 'N'));
    expect(another!.code).toBe(missing!.code);
  });
});

afterAll(() => {
  const params = new Set(matrix.map((m) => `${m.op.name}.${m.param.name}`)).size;
  const ops = new Set(matrix.map((m) => m.op.name)).size;
  console.log(`authorization matrix: ${ops} operations x ${params} id-bearing parameters x ${CASES.length} cases = ${tried} calls (${CASES.join(', ')})`);
});
