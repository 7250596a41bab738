/**
 * The steps of the model-based tests, as fast-check commands: each one calls the real service in
 * one of the four forms, works out on a copy of the model what the documents say the answer must
 * be (success, or a refusal with its code, after which nothing may have changed), compares, keeps
 * the copy when the call succeeded, and then holds the service's listings to the model.
 *
 * Steps name their items by where the model has them ("the 3rd live folder", "an entry of the
 * bin", "another account's file", "an id nobody has"), never by id, so that a sequence keeps its
 * meaning while fast-check shrinks it to the shortest one that still fails.
 */
import fc from 'fast-check';
import { extensionOf } from '../../../src/operations/tree/names';
import { FORMS, type Form } from '../../helpers/requests';
import { expectedAttrs, type Checker, type View } from './checks';
import type { Answer, ServiceClient } from './service-client';
import { Refusal, SORT_KEYS, TreeModel, type ItemModel } from './tree-model';

export interface ModelBox {
  tree: TreeModel;
}

export interface Real {
  readonly client: ServiceClient;
  readonly checker: Checker;
  /** Another account's folder and file: every id-taking call must answer them 404. */
  readonly foreign: { readonly folderId: number; readonly fileId: number };
  /** Sets the service's clock (ms). */
  setClock(ms: number): void;
  /** Every how many steps all folders are listed, not only those the step touched. */
  readonly fullCheckEvery: number;
  step: number;
  /** The steps run so far in this sequence, with the ids they resolved to. */
  readonly trace: string[];
  /** The model's ids of encryption keys. */
  nextKeyId: number;
}

export type Cmd = fc.AsyncCommand<ModelBox, Real>;

// ---- What steps are made of ---------------------------------------------------------------------

type Pool = 'root' | 'live' | 'entry' | 'beneath' | 'encrypted' | 'foreign' | 'missing' | 'inside';
export interface Pick {
  readonly pool: Pool;
  readonly n: number;
}

const MISSING_ID = 987_654;

const showPick = (p: Pick) => (p.pool === 'root' ? 'root' : p.pool === 'missing' ? 'missing' : `${p.pool}#${p.n}`);

function nth<T>(list: readonly T[], n: number): T | undefined {
  return list.length === 0 ? undefined : list[n % list.length];
}

/**
 * The folder a pick names. An empty pool falls back to the live folders, and then to the root
 * where a parent is meant (`orRoot`) or to an id nobody has: early in a sequence most steps still
 * do something.
 */
function folderOf(model: TreeModel, real: Real, pick: Pick, orRoot: boolean, inside?: number): number {
  const live = model.liveFolders();
  const fallback = () => nth(live, pick.n)?.id ?? (orRoot ? 0 : MISSING_ID);
  switch (pick.pool) {
    case 'root':
      return 0;
    case 'foreign':
      return real.foreign.folderId;
    case 'missing':
      return MISSING_ID;
    case 'encrypted':
      return nth(live.filter((f) => f.keyId !== null), pick.n)?.id ?? fallback();
    case 'inside':
      return nth(inside === undefined ? [] : live.filter((f) => model.isWithin(f.id, inside)), pick.n)?.id ?? fallback();
    default:
      return nth(model.itemsIn(pick.pool, 'folder'), pick.n)?.id ?? fallback();
  }
}

/** The file a pick names; an empty pool falls back to the live files, then to an id nobody has. */
function fileOf(model: TreeModel, real: Real, pick: Pick): number {
  const live = model.liveFiles();
  const fallback = () => nth(live, pick.n)?.id ?? MISSING_ID;
  switch (pick.pool) {
    case 'foreign':
      return real.foreign.fileId;
    case 'missing':
      return MISSING_ID;
    case 'root':
    case 'inside':
      return fallback();
    case 'encrypted':
      return nth(live.filter((f) => f.keyId !== null), pick.n)?.id ?? fallback();
    default:
      return nth(model.itemsIn(pick.pool, 'file'), pick.n)?.id ?? fallback();
  }
}

const unique = (ids: number[]) => [...new Set(ids)];

/**
 * The picks of a batch (Move, deletes, restores, Unshare) whose pool has items, so that a batch is
 * refused because of an id chosen to be wrong (another account's, a missing one, one in the
 * wrong place), not because the tree is still empty.
 */
function batchOf(model: TreeModel, real: Real, folders: readonly Pick[], files: readonly Pick[]): { dirids: number[]; fids: number[] } {
  let [folderPicks, filePicks] = [present(model, folders, 'folder'), present(model, files, 'file')];
  // Nothing left of a batch that named items: name them anyway (a refusal), rather than send two empty lists.
  if (folderPicks.length + filePicks.length === 0) [folderPicks, filePicks] = [[...folders], [...files]];
  return {
    dirids: unique(folderPicks.map((p) => folderOf(model, real, p, false))),
    fids: unique(filePicks.map((p) => fileOf(model, real, p))),
  };
}

function present(model: TreeModel, picks: readonly Pick[], type: 'folder' | 'file'): Pick[] {
  return picks.filter((p) => {
    if (p.pool === 'foreign' || p.pool === 'missing') return true;
    if (p.pool === 'encrypted') return (type === 'folder' ? model.liveFolders() : model.liveFiles()).some((item) => item.keyId !== null);
    if (p.pool === 'root' || p.pool === 'inside') return false;
    return model.itemsIn(p.pool, type).length > 0;
  });
}

/** Names: collisions by letter case and normalization, natural order, scripts beyond the BMP, and refused ones. */
export const FOLDER_NAMES = ['Docs', 'docs', 'Photos', 'file2', 'file10', 'file02', 'Q3 & Q4', 'Ｆｕｌｌ', '😀 smile', 'Файл', 'файл', 'e\u0301', 'é', 'a', 'x (restored)'];
export const FILE_NAMES = ['report.txt', 'Report.TXT', 'report (1).txt', 'notes', 'a.tar.gz', 'file2.md', 'file10.md', 'file02.md', '季度报告.docx', '😀.png', 'Ｆｕｌｌ.txt', 'e\u0301.txt', 'é.txt', '.profile', 'readme.'];
export const INVALID_NAMES = ['', 'a/b', ' lead', 'trail ', '..', 'why?', '\u202egnp.exe', '\u200b', 'a\u2028b'];

/** File contents: small, some of equal size, some added many times. */
export const CONTENTS = [Buffer.from('x'), Buffer.from('hello world'), Buffer.from('HELLO WORLD'), Buffer.alloc(100, 7), Buffer.alloc(1000, 'abc')];
const sha256Of = new Map<Buffer, string>();

/** What the last call answered, for the trace of a run. */
let lastAnswer = '';

/** How often each operation answered each code, for the summary ("FileAdd 0", "Move 409", …). */
export const outcomes = new Map<string, number>();

// ---- One step -----------------------------------------------------------------------------------

interface StepBase {
  readonly form: Form;
  /** 0: the service's clock stands still for this step (equal times), 1: one second later. */
  readonly tick: 0 | 1;
  /** Chooses the order, direction, form and GetFiles/GetFilesWhitPath of the checks after the step. */
  readonly view: number;
  /** Run even when the tree has nothing the step is about (an empty bin for a restore): then it is refused. */
  readonly evenIfPointless: boolean;
}

const stepBase = {
  form: fc.constantFrom(...FORMS),
  tick: fc.constantFrom<0 | 1>(0, 1, 1),
  view: fc.nat(1_000_000),
  evenIfPointless: fc.constantFrom(false, false, false, false, false, true),
};

const hasLive = (model: TreeModel, type: 'folder' | 'file') => model.itemsIn('live', type).length > 0;

function viewsOf(seed: number): (i: number) => View {
  return (i) => ({
    key: SORT_KEYS[(seed + i * 3) % SORT_KEYS.length],
    desc: ((seed >> 3) + i) % 2 === 1,
    withPath: ((seed >> 5) + i) % 3 === 0,
    form: FORMS[((seed >> 7) + i) % FORMS.length],
  });
}

/**
 * Runs `apply` on a copy of the model: its Refusal is the code the service must have answered,
 * and the model is left as it was; otherwise the service must have succeeded, and the copy
 * becomes the model. Returns what `apply` returned, or undefined after a refusal.
 */
function expectOutcome<T>(box: ModelBox, answer: Answer, what: string, apply: (draft: TreeModel) => T): T | undefined {
  const outcome = `${answer.op} ${answer.code}`;
  lastAnswer = `${answer.code}${answer.msg ? ` "${answer.msg}"` : ''}`;
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  const draft = box.tree.clone();
  let result: T | undefined;
  let refusal: Refusal | undefined;
  try {
    result = apply(draft);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    refusal = error;
  }
  const expected = refusal?.code ?? 0;
  if (answer.code !== expected) {
    throw new Error(
      `${what} over ${answer.form}: the service answered ${answer.code} "${answer.msg}", the model expected ` +
        `${refusal ? `${refusal.code} (${refusal.message})` : 'success'}\n${answer.raw}`,
    );
  }
  if (!refusal) box.tree = draft;
  return result;
}

/** The id of the item an answer holds; -1 when it holds none (the model's expectation then fails). */
const answeredId = (answer: Answer) => (answer.code === 0 && answer.items[0] ? Number(answer.items[0].attrs.id) : -1);

/** The item an answer holds must be the model's. `fileAdd`: a new file is answered before a job encrypts it (encryption.md §5). */
function requireAnsweredItem(what: string, answer: Answer, model: TreeModel, item: ItemModel, fileAdd = false): void {
  const got = answer.items[0]?.attrs ?? {};
  const want = expectedAttrs(model, item);
  if (fileAdd) {
    want.encrypted = '0';
    delete want.tip;
  }
  const wrong = Object.keys(want).filter((k) => got[k] !== want[k]);
  if (wrong.length > 0) throw new Error(`${what}: the answered item differs in ${wrong.join(', ')}: model ${JSON.stringify(want)}, service ${JSON.stringify(got)}`);
}

abstract class Step implements Cmd {
  constructor(readonly base: StepBase) {}

  /** The ids the step resolved to in this run, for the report of a failure. */
  protected resolved = '';

  /** fast-check runs a step only when this holds on the model, so that most steps find what they are about. */
  check(box: Readonly<ModelBox>): boolean {
    return this.base.evenIfPointless || this.applies(box.tree);
  }

  /** Whether the tree has what the step is about. */
  protected applies(_model: TreeModel): boolean {
    return true;
  }

  async run(box: ModelBox, real: Real): Promise<void> {
    box.tree.now += this.base.tick * 1000;
    real.setClock(box.tree.now);
    this.resolved = '';
    lastAnswer = '';
    const at = real.trace.push(`${this.toString()} …`) - 1;
    try {
      const touched = await this.act(box, real);
      real.trace[at] = `${this.toString()}${this.resolved ? ` → ${this.resolved}` : ''}${lastAnswer ? ` ⇒ ${lastAnswer}` : ''}`;
      if (process.env.FSS_RELIABILITY_TRACE) console.log(`step ${at + 1}: ${real.trace[at]}`);
      // Files added or moved into encrypted folders are encrypted by a background job (encryption.md §4).
      if (box.tree.keys.size > 0) await real.client.settleEncryptionJobs();
      real.step++;
      real.checker.stats.steps++;
      const views = viewsOf(this.base.view);
      if (real.step % real.fullCheckEvery === 0) await real.checker.checkAll(box.tree, views);
      else await real.checker.checkAround(box.tree, touched, views);
    } catch (error) {
      // The ids each step resolved to in this run: fast-check's own report names the steps only.
      real.trace[at] = `${this.toString()}${this.resolved ? ` → ${this.resolved}` : ''}   <- failed here`;
      const steps = real.trace.map((line, i) => `  ${i + 1}. ${line}`).join('\n');
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${message}\n\nThe steps of this run, with the ids they resolved to:\n${steps}`, { cause: error });
    }
  }

  /** Calls the service, checks the answer against the model; returns the folders whose listings may have changed. */
  protected abstract act(box: ModelBox, real: Real): Promise<number[]>;

  protected abstract describe(): string;

  toString(): string {
    return `${this.describe()} [${this.base.form}${this.base.tick ? ', +1s' : ''}]`;
  }
}

// ---- The steps ----------------------------------------------------------------------------------

class FolderAdd extends Step {
  constructor(
    base: StepBase,
    readonly parent: Pick,
    readonly name: string,
  ) {
    super(base);
  }
  describe() {
    return `FolderAdd(${showPick(this.parent)}, ${JSON.stringify(this.name)})`;
  }
  async act(box: ModelBox, real: Real) {
    const dirid = folderOf(box.tree, real, this.parent, true);
    this.resolved = `dirid=${dirid}`;
    const answer = await real.client.call(this.base.form, 'FolderAdd', { dirid, name: this.name });
    const folder = expectOutcome(box, answer, this.describe(), (m) => m.folderAdd(dirid, this.name, () => answeredId(answer)));
    if (folder) requireAnsweredItem(this.describe(), answer, box.tree, folder);
    return [dirid];
  }
}

class FileAdd extends Step {
  constructor(
    base: StepBase,
    readonly parent: Pick,
    readonly name: string,
    readonly content: number,
    readonly ext: 'as-named' | 'upper' | 'wrong',
    readonly instant: boolean,
  ) {
    super(base);
  }
  describe() {
    return `FileAdd(${showPick(this.parent)}, ${JSON.stringify(this.name)}, content#${this.content}, ext ${this.ext}${this.instant ? ', without upload if owned' : ''})`;
  }
  async act(box: ModelBox, real: Real) {
    const bytes = CONTENTS[this.content];
    let hash = sha256Of.get(bytes);
    const owned = hash !== undefined && box.tree.ownsPlaintext(hash, bytes.length);
    if (!this.instant || !owned) {
      const uploaded = await real.client.upload(bytes);
      if (hash !== undefined && uploaded !== hash) throw new Error(`the upload's hash changed: ${uploaded}, was ${hash}`);
      hash = uploaded;
      sha256Of.set(bytes, hash);
    }
    const dirid = folderOf(box.tree, real, this.parent, true);
    const named = extensionOf(this.name.normalize('NFC'));
    const ext = this.ext === 'as-named' ? named : this.ext === 'upper' ? named.toUpperCase() : `${named}x`;
    this.resolved = `dirid=${dirid}${owned && this.instant ? ', no upload' : ''}`;
    const answer = await real.client.call(this.base.form, 'FileAdd', { name: this.name, ext, size: bytes.length, dirid, hash: hash! });
    const file = expectOutcome(box, answer, this.describe(), (m) => m.fileAdd(dirid, this.name, ext, bytes.length, hash!, () => answeredId(answer)));
    if (file) requireAnsweredItem(this.describe(), answer, box.tree, file, true);
    return [dirid];
  }
}

class Rename extends Step {
  constructor(
    base: StepBase,
    readonly type: 'folder' | 'file',
    readonly target: Pick,
    readonly name: string,
  ) {
    super(base);
  }
  protected override applies(model: TreeModel) {
    return hasLive(model, this.type);
  }
  describe() {
    return `${this.type === 'folder' ? 'FolderRename' : 'FileRename'}(${showPick(this.target)}, ${JSON.stringify(this.name)})`;
  }
  async act(box: ModelBox, real: Real) {
    const before = box.tree;
    if (this.type === 'folder') {
      const dirid = folderOf(before, real, this.target, false);
      this.resolved = `dirid=${dirid}`;
      const answer = await real.client.call(this.base.form, 'FolderRename', { dirid, newname: this.name });
      const folder = expectOutcome(box, answer, this.describe(), (m) => m.folderRename(dirid, this.name));
      if (folder) requireAnsweredItem(this.describe(), answer, box.tree, folder);
      return [before.folders.get(dirid)?.parentId ?? 0];
    }
    const fid = fileOf(before, real, this.target);
    this.resolved = `fid=${fid}`;
    const answer = await real.client.call(this.base.form, 'FileRename', { fid, newname: this.name });
    const file = expectOutcome(box, answer, this.describe(), (m) => m.fileRename(fid, this.name));
    if (file) requireAnsweredItem(this.describe(), answer, box.tree, file);
    return [before.files.get(fid)?.parentId ?? 0];
  }
}

/** The parents of the given items as they were before the step: their listings change. */
function parentsOf(model: TreeModel, folderIds: readonly number[], fileIds: readonly number[]): number[] {
  return [...folderIds.map((id) => model.folders.get(id)?.parentId ?? 0), ...fileIds.map((id) => model.files.get(id)?.parentId ?? 0)];
}

/** Move and Copy: a batch of items and a destination folder. */
abstract class BatchInto extends Step {
  protected abstract readonly op: 'Move' | 'Copy';
  constructor(
    base: StepBase,
    readonly folders: readonly Pick[],
    readonly files: readonly Pick[],
    readonly destination: Pick,
  ) {
    super(base);
  }
  protected override applies(model: TreeModel) {
    return hasLive(model, 'folder') || hasLive(model, 'file');
  }
  describe() {
    return `${this.op}(dirids=[${this.folders.map(showPick)}], fids=[${this.files.map(showPick)}], todir=${showPick(this.destination)}${this.destination.pool === 'inside' ? ' of the first folder' : ''})`;
  }
  /** The batch and destination as the model resolves them now, sent to the service. */
  protected async send(box: ModelBox, real: Real) {
    const before = box.tree;
    const { dirids, fids } = batchOf(before, real, this.folders, this.files);
    const todir = folderOf(before, real, this.destination, true, dirids[0]);
    this.resolved = `dirids=${dirids} fids=${fids} todir=${todir}`;
    const answer = await real.client.call(this.base.form, this.op, { dirids: dirids.join(','), fids: fids.join(','), todir });
    return { before, dirids, fids, todir, answer };
  }
}

class Move extends BatchInto {
  protected readonly op = 'Move';
  async act(box: ModelBox, real: Real) {
    const { before, dirids, fids, todir, answer } = await this.send(box, real);
    expectOutcome(box, answer, this.describe(), (m) => m.move(dirids, fids, todir));
    return [...parentsOf(before, dirids, fids), todir];
  }
}

class Copy extends BatchInto {
  protected readonly op = 'Copy';
  async act(box: ModelBox, real: Real) {
    const { dirids, fids, todir, answer } = await this.send(box, real);
    let provisional = 0;
    const made = expectOutcome(box, answer, this.describe(), (m) => m.copy(dirids, fids, todir, () => --provisional)) ?? [];
    // Copy answers no ids: each copy is found by its name in its parent's listing, parents first.
    const listed = new Map<number, Answer['items']>();
    const madeFolders: number[] = [];
    for (const item of made) {
      // A parent made by this copy has its service id by now (renumber moved its children's parentId).
      const parentId = item.parentId;
      if (!listed.has(parentId)) listed.set(parentId, (await real.client.call('post', 'GetFiles', { dir: parentId, order: 'name', desc: 0 })).items);
      const found = listed.get(parentId)!.find((entry) => entry.type === item.type && entry.attrs.name === item.name);
      if (!found) throw new Error(`${this.describe()}: the copy ${item.type} "${item.name}" is not listed in folder ${parentId}`);
      box.tree.renumber(item.id, Number(found.attrs.id));
      if (item.type === 'folder') madeFolders.push(Number(found.attrs.id));
    }
    return [todir, ...madeFolders];
  }
}

class Delete extends Step {
  constructor(
    base: StepBase,
    readonly folders: readonly Pick[],
    readonly files: readonly Pick[],
    readonly isReal: 0 | 1 | 2,
  ) {
    super(base);
  }
  protected override applies(model: TreeModel) {
    return model.items().length > 0;
  }
  describe() {
    return `FolderAndFileDelete(dirids=[${this.folders.map(showPick)}], fids=[${this.files.map(showPick)}], is_real=${this.isReal})`;
  }
  async act(box: ModelBox, real: Real) {
    const before = box.tree;
    const { dirids, fids } = batchOf(before, real, this.folders, this.files);
    this.resolved = `dirids=${dirids} fids=${fids}`;
    const answer = await real.client.call(this.base.form, 'FolderAndFileDelete', { dirids: dirids.join(','), fids: fids.join(','), is_real: this.isReal });
    expectOutcome(box, answer, this.describe(), (m) => {
      if (this.isReal === 2) throw new Refusal(400, 'is_real must be 0 or 1');
      if (this.isReal === 0) m.toBin(dirids, fids);
      else m.deleteForGood(dirids, fids);
    });
    return parentsOf(before, dirids, fids);
  }
}

class Restore extends Step {
  constructor(
    base: StepBase,
    readonly folders: readonly Pick[],
    readonly files: readonly Pick[],
  ) {
    super(base);
  }
  protected override applies(model: TreeModel) {
    return model.items().some((item) => item.place.kind === 'entry');
  }
  describe() {
    return `FolderAndFileRestore(dirids=[${this.folders.map(showPick)}], fids=[${this.files.map(showPick)}])`;
  }
  async act(box: ModelBox, real: Real) {
    const before = box.tree;
    const { dirids, fids } = batchOf(before, real, this.folders, this.files);
    this.resolved = `dirids=${dirids} fids=${fids}`;
    const answer = await real.client.call(this.base.form, 'FolderAndFileRestore', { dirids: dirids.join(','), fids: fids.join(',') });
    const restored = expectOutcome(box, answer, this.describe(), (m) => m.restore(dirids, fids));
    if (!restored) return [];
    // The answer says where each went: the folders in the order of dirids, then the files.
    const model = box.tree;
    const want = restored.map((item) => {
      const { id, dir, name, size, encrypted, tip } = expectedAttrs(model, item);
      return JSON.stringify({ type: item.type, id, dir, name, size, encrypted, tip, path: `${model.folderPath(item.parentId)}/${item.name}` });
    });
    const got = answer.items.map(({ type, attrs: { id, dir, name, size, encrypted, tip, path } }) => JSON.stringify({ type, id, dir, name, size, encrypted, tip, path }));
    if (want.join('\n') !== got.join('\n') || Number(answer.result.count) !== want.length) {
      throw new Error(`${this.describe()}: the answer says\n${got.join('\n')}\nthe model expected\n${want.join('\n')}`);
    }
    return restored.map((item) => item.parentId);
  }
}

class RecycleEmpty extends Step {
  describe() {
    return 'RecycleEmpty()';
  }
  async act(box: ModelBox, real: Real) {
    const answer = await real.client.call(this.base.form, 'RecycleEmpty', {});
    expectOutcome(box, answer, this.describe(), (m) => m.recycleEmpty());
    return [];
  }
}

const DOWNPWDS = ['', 'ab12', 'x'];
const DESCRIPTIONS = ['', "it's (ok)!", 'Q3 & <Q4> "notes"'];

class Share extends Step {
  constructor(
    base: StepBase,
    readonly type: 'folder' | 'file',
    readonly targets: readonly Pick[],
    readonly downpwd: number,
    readonly downValue: number,
    readonly description: number,
  ) {
    super(base);
  }
  protected override applies(model: TreeModel) {
    return hasLive(model, this.type);
  }
  describe() {
    const settings = `downpwd=${JSON.stringify(DOWNPWDS[this.downpwd])}, downValue=${this.downValue}, description=${JSON.stringify(DESCRIPTIONS[this.description])}`;
    return `${this.type === 'folder' ? 'FolderShare' : 'FileShare'}([${this.targets.map(showPick)}], ${settings})`;
  }
  async act(box: ModelBox, real: Real) {
    const before = box.tree;
    const ids = unique(this.targets.map((p) => (this.type === 'folder' ? folderOf(before, real, p, false) : fileOf(before, real, p))));
    this.resolved = `ids=${ids}`;
    const settings = { downpwd: DOWNPWDS[this.downpwd], downValue: this.downValue, description: DESCRIPTIONS[this.description] };
    const op = this.type === 'folder' ? 'FolderShare' : 'FileShare';
    const answer = await real.client.call(this.base.form, op, { [this.type === 'folder' ? 'dirids' : 'fids']: ids.join(','), ...settings });
    const codeOf = (id: number) => answer.items.find((item) => item.attrs.id === String(id))?.attrs.code ?? '(none answered)';
    expectOutcome(box, answer, this.describe(), (m) => m.share(this.type, ids, settings, codeOf));
    if (answer.code === 0) {
      // An item shared again keeps its code (sharing.md): the answer says the model's code.
      for (const id of ids) {
        const item = this.type === 'folder' ? box.tree.folders.get(id)! : box.tree.files.get(id)!;
        if (codeOf(id) !== item.share!.code) throw new Error(`${this.describe()}: ${this.type} ${id} answered code ${codeOf(id)}, its share has ${item.share!.code}`);
      }
    }
    return parentsOf(before, this.type === 'folder' ? ids : [], this.type === 'file' ? ids : []);
  }
}

class Unshare extends Step {
  constructor(
    base: StepBase,
    readonly folders: readonly Pick[],
    readonly files: readonly Pick[],
  ) {
    super(base);
  }
  protected override applies(model: TreeModel) {
    return model.items().some((item) => item.place.kind === 'live' && item.share !== null);
  }
  describe() {
    return `Unshare(dirids=[${this.folders.map(showPick)}], fids=[${this.files.map(showPick)}])`;
  }
  async act(box: ModelBox, real: Real) {
    const before = box.tree;
    const { dirids, fids } = batchOf(before, real, this.folders, this.files);
    this.resolved = `dirids=${dirids} fids=${fids}`;
    const answer = await real.client.call(this.base.form, 'Unshare', { dirids: dirids.join(','), fids: fids.join(',') });
    expectOutcome(box, answer, this.describe(), (m) => m.unshare(dirids, fids));
    return parentsOf(before, dirids, fids);
  }
}

class Link extends Step {
  constructor(
    base: StepBase,
    readonly target: Pick,
    readonly unlink: boolean,
  ) {
    super(base);
  }
  protected override applies(model: TreeModel) {
    return hasLive(model, 'file');
  }
  describe() {
    return `${this.unlink ? 'FileUnlink' : 'FileLink'}(${showPick(this.target)})`;
  }
  async act(box: ModelBox, real: Real) {
    const before = box.tree;
    const fid = fileOf(before, real, this.target);
    this.resolved = `fid=${fid}`;
    if (this.unlink) {
      const answer = await real.client.call(this.base.form, 'FileUnlink', { fid });
      expectOutcome(box, answer, this.describe(), (m) => m.fileUnlink(fid));
    } else {
      const answer = await real.client.call(this.base.form, 'FileLink', { fid });
      const answeredCode = /\/l\/([A-Za-z0-9_-]{22})\//.exec(answer.result.url ?? '')?.[1] ?? '(none answered)';
      const code = expectOutcome(box, answer, this.describe(), (m) => m.fileLink(fid, () => answeredCode));
      if (code !== undefined) {
        const file = box.tree.files.get(fid)!;
        const url = `${real.client.app.url}/l/${code}/${encodeURIComponent(file.name)}`;
        if (answer.result.url !== url) throw new Error(`${this.describe()}: answered ${answer.result.url}, the model expected ${url} (a linked file keeps its link)`);
      }
    }
    return parentsOf(before, [], [fid]);
  }
}

const PASSWORDS = ['pass-one', 'Zweites Passwort', 'ab'];

class FolderEncrypt extends Step {
  constructor(
    base: StepBase,
    readonly target: Pick,
    readonly password: number,
    readonly tipHasPassword: boolean,
  ) {
    super(base);
  }
  protected override applies(model: TreeModel) {
    return hasLive(model, 'folder');
  }
  describe() {
    return `FolderEncrypt(${showPick(this.target)}, password=${JSON.stringify(PASSWORDS[this.password])}, tip ${this.tipHasPassword ? 'containing the password' : 'fine'})`;
  }
  async act(box: ModelBox, real: Real) {
    const before = box.tree;
    const dirid = folderOf(before, real, this.target, false);
    const password = PASSWORDS[this.password];
    const keyId = real.nextKeyId++;
    const tip = this.tipHasPassword ? `it is ${password.toUpperCase()}` : `hint ${keyId}`;
    this.resolved = `dirid=${dirid}`;
    const answer = await real.client.call(this.base.form, 'FolderEncrypt', { dirid, password, password_tip: tip });
    expectOutcome(box, answer, this.describe(), (m) => m.folderEncrypt(dirid, password, tip, keyId));
    return parentsOf(before, [dirid], []).concat(dirid);
  }
}

class Unlock extends Step {
  constructor(
    base: StepBase,
    readonly target: Pick,
    readonly rightPassword: boolean,
  ) {
    super(base);
  }
  protected override applies(model: TreeModel) {
    return model.liveFolders().some((f) => f.keyId !== null);
  }
  describe() {
    return `Unlock(${showPick(this.target)}, ${this.rightPassword ? 'the right password' : 'a wrong password'})`;
  }
  async act(box: ModelBox, real: Real) {
    const before = box.tree;
    const dirid = folderOf(before, real, this.target, false);
    const keyId = before.folders.get(dirid)?.keyId ?? null;
    const key = keyId === null ? undefined : before.keys.get(keyId);
    // Wrong passwords stay below the throttle (5 per item, 20 per account: protocol.md §14), which these steps do not model.
    const mayBeWrong = keyId === null || ((before.wrongPasswords.get(keyId) ?? 0) < 3 && before.wrongPasswordsOfAccount < 15);
    const password = key && (this.rightPassword || !mayBeWrong) ? key.password : 'not-the-password';
    this.resolved = `dirid=${dirid}${password === key?.password ? '' : ' (wrong)'}`;
    const answer = await real.client.call(this.base.form, 'Unlock', { dirid, fid: 0, password });
    expectOutcome(box, answer, this.describe(), (m) => m.unlockFolder(dirid, password));
    return [dirid];
  }
}

class Relogin extends Step {
  describe() {
    return 'Logout + Login (a new token: nothing unlocked)';
  }
  async act(box: ModelBox, real: Real) {
    await real.client.relogin(this.base.form);
    box.tree.relogin();
    return box.tree.liveFolders().filter((f) => f.keyId !== null).map((f) => f.id);
  }
}

// ---- The arbitraries ----------------------------------------------------------------------------

const n = fc.nat(50);
const pick = (weights: Partial<Record<Pool, number>>) =>
  fc.record({
    pool: fc.oneof(...Object.entries(weights).map(([pool, weight]) => ({ arbitrary: fc.constant(pool as Pool), weight }))),
    n,
  });

const folderName = fc.oneof({ arbitrary: fc.constantFrom(...FOLDER_NAMES), weight: 16 }, { arbitrary: fc.constantFrom(...FILE_NAMES), weight: 2 }, { arbitrary: fc.constantFrom(...INVALID_NAMES), weight: 1 });
const fileName = fc.oneof({ arbitrary: fc.constantFrom(...FILE_NAMES), weight: 16 }, { arbitrary: fc.constantFrom(...FOLDER_NAMES), weight: 2 }, { arbitrary: fc.constantFrom(...INVALID_NAMES), weight: 1 });

const parentPick = pick({ root: 5, live: 10, encrypted: 1, entry: 1, foreign: 1, missing: 1 });
const itemPick = pick({ live: 20, encrypted: 2, entry: 1, beneath: 1, foreign: 1, missing: 1 });
const batchPick = pick({ live: 30, encrypted: 1, entry: 1, beneath: 1, foreign: 1, missing: 1 });
const deletePick = pick({ live: 25, entry: 6, encrypted: 1, beneath: 1, foreign: 1, missing: 1 });
const binPick = pick({ entry: 30, live: 1, beneath: 2, foreign: 1, missing: 1 });
const destinationPick = pick({ root: 4, live: 10, encrypted: 1, inside: 2, entry: 1, foreign: 1, missing: 1 });
const upTo = (arb: fc.Arbitrary<Pick>, max: number) => fc.array(arb, { maxLength: max });

/** Every step, weighted: the tree-building ones most, encryption (scrypt: costly) least. */
export const commandArbitrary: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 20, arbitrary: fc.record({ base: fc.record(stepBase), parent: parentPick, name: folderName }).map((a) => new FolderAdd(a.base, a.parent, a.name)) },
  {
    weight: 20,
    arbitrary: fc
      .record({
        base: fc.record(stepBase),
        parent: parentPick,
        name: fileName,
        content: fc.nat(CONTENTS.length - 1),
        ext: fc.oneof({ arbitrary: fc.constant<'as-named'>('as-named'), weight: 12 }, { arbitrary: fc.constant<'upper'>('upper'), weight: 3 }, { arbitrary: fc.constant<'wrong'>('wrong'), weight: 1 }),
        instant: fc.boolean(),
      })
      .map((a) => new FileAdd(a.base, a.parent, a.name, a.content, a.ext, a.instant)),
  },
  { weight: 5, arbitrary: fc.record({ base: fc.record(stepBase), target: itemPick, name: folderName }).map((a) => new Rename(a.base, 'folder', a.target, a.name)) },
  { weight: 5, arbitrary: fc.record({ base: fc.record(stepBase), target: itemPick, name: fileName }).map((a) => new Rename(a.base, 'file', a.target, a.name)) },
  {
    weight: 8,
    arbitrary: fc
      .record({ base: fc.record(stepBase), folders: upTo(batchPick, 2), files: upTo(batchPick, 2), destination: destinationPick })
      .map((a) => new Move(a.base, a.folders, a.files, a.destination)),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({ base: fc.record(stepBase), folders: upTo(batchPick, 2), files: upTo(batchPick, 2), destination: destinationPick })
      .map((a) => new Copy(a.base, a.folders, a.files, a.destination)),
  },
  {
    weight: 9,
    arbitrary: fc
      .record({ base: fc.record(stepBase), folders: upTo(deletePick, 2), files: upTo(deletePick, 2), isReal: fc.constantFrom<0 | 1 | 2>(0, 0, 0, 0, 0, 0, 1, 1, 1, 2) })
      .map((a) => new Delete(a.base, a.folders, a.files, a.isReal)),
  },
  { weight: 6, arbitrary: fc.record({ base: fc.record(stepBase), folders: upTo(binPick, 2), files: upTo(binPick, 2) }).map((a) => new Restore(a.base, a.folders, a.files)) },
  { weight: 1, arbitrary: fc.record(stepBase).map((base) => new RecycleEmpty(base)) },
  {
    weight: 4,
    arbitrary: fc
      .record({
        base: fc.record(stepBase),
        type: fc.constantFrom<'folder' | 'file'>('folder', 'file'),
        targets: fc.array(itemPick, { minLength: 1, maxLength: 2 }),
        downpwd: fc.constantFrom(0, 0, 1, 2),
        downValue: fc.nat(5),
        description: fc.nat(DESCRIPTIONS.length - 1),
      })
      .map((a) => new Share(a.base, a.type, a.targets, a.downpwd, a.downValue, a.description)),
  },
  { weight: 2, arbitrary: fc.record({ base: fc.record(stepBase), folders: upTo(batchPick, 1), files: upTo(batchPick, 1) }).map((a) => new Unshare(a.base, a.folders, a.files)) },
  { weight: 4, arbitrary: fc.record({ base: fc.record(stepBase), target: itemPick, unlink: fc.boolean() }).map((a) => new Link(a.base, a.target, a.unlink)) },
  {
    weight: 3,
    arbitrary: fc
      .record({ base: fc.record(stepBase), target: pick({ live: 10, encrypted: 1, entry: 1, missing: 1 }), password: fc.constantFrom(0, 0, 0, 1, 1, 1, 2), tipHasPassword: fc.constantFrom(false, false, false, false, false, false, true) })
      .map((a) => new FolderEncrypt(a.base, a.target, a.password, a.tipHasPassword)),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({ base: fc.record(stepBase), target: pick({ encrypted: 8, live: 1, missing: 1 }), rightPassword: fc.boolean() })
      .map((a) => new Unlock(a.base, a.target, a.rightPassword)),
  },
  { weight: 1, arbitrary: fc.record(stepBase).map((base) => new Relogin(base)) },
);
