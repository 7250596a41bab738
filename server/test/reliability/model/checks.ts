/**
 * The service held against the model: every listing a client can read (GetFiles or
 * GetFilesWhitPath of a folder, GetRecycleFiles, GetShareFiles, GetLinkFiles) must hold exactly
 * the model's items (no lost item, no phantom), with their names, sizes, times, flags, paths and
 * share or link attributes, in the documented order for the order key and direction asked for.
 * A difference throws with both listings, line by line.
 */
import { send, type Form } from '../../helpers/requests';
import type { Answer, Attrs, ServiceClient } from './service-client';
import { RETENTION_MS, SORT_KEYS, sortItems, type ItemModel, type SortKey, type TreeModel } from './tree-model';

export interface View {
  readonly key: SortKey;
  readonly desc: boolean;
  /** GetFilesWhitPath instead of GetFiles (folder listings only). */
  readonly withPath: boolean;
  readonly form: Form;
}

export const ALL_ORDERS: ReadonlyArray<Pick<View, 'key' | 'desc'>> = SORT_KEYS.flatMap((key) => [
  { key, desc: false },
  { key, desc: true },
]);

export interface Stats {
  sequences: number;
  steps: number;
  /** Listings compared with the model, and other single checks (used bytes). */
  checks: number;
}

/** ISO 8601 UTC to the second, as `time`, `deleted` and `purge` are written. */
export const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const bit = (flag: boolean) => (flag ? '1' : '0');

/** The fields compared, in the order they are printed. Absent attributes print as ∅. */
const ITEM_FIELDS = ['id', 'dir', 'name', 'ext', 'size', 'hash', 'time', 'shared', 'linked', 'encrypted', 'tip', 'progress'];
const BIN_FIELDS = ['path', 'deleted', 'from', 'purge'];
const SHARE_FIELDS = ['path', 'code', 'url', 'downpwd', 'downValue', 'downloads', 'description', 'image'];
const LINK_FIELDS = ['path', 'url', 'hits'];

function line(type: string, attrs: Attrs, fields: readonly string[]): string {
  return `${type} ${fields.map((f) => `${f}=${f in attrs ? JSON.stringify(attrs[f]) : '∅'}`).join(' ')}`;
}

/** An item's attributes as a listing must write them. */
export function expectedAttrs(model: TreeModel, item: ItemModel): Attrs {
  const attrs: Attrs = {
    id: String(item.id),
    dir: String(item.parentId),
    name: item.name,
    size: String(model.sizeOf(item)),
    time: isoSeconds(item.time),
    shared: bit(item.share !== null),
    linked: bit(item.type === 'file' && item.link !== null),
    encrypted: bit(item.keyId !== null),
  };
  if (item.type === 'file') {
    attrs.ext = item.ext;
    attrs.hash = item.hash;
  }
  const tip = model.tipOf(item);
  if (tip !== undefined) attrs.tip = tip;
  return attrs;
}

export class Checker {
  readonly stats: Stats = { sequences: 0, steps: 0, checks: 0 };

  constructor(readonly client: () => ServiceClient) {}

  private get baseUrl(): string {
    return this.client().app.url;
  }

  /** Compares an answer's items with the expected ones, printing both when they differ. */
  private compare(what: string, answer: Answer, expected: Array<{ type: string; attrs: Attrs }>, extraFields: readonly string[]): void {
    this.stats.checks++;
    if (answer.code !== 0) throw new Error(`${what}: the service refused with ${answer.code} "${answer.msg}", the model expected a listing`);
    const fields = [...ITEM_FIELDS, ...extraFields];
    const want = expected.map((item) => line(item.type, item.attrs, fields));
    const got = answer.items.map((item) => line(item.type, item.attrs, fields));
    const count = Number(answer.result.count);
    if (want.join('\n') === got.join('\n') && count === want.length) return;
    const width = Math.max(want.length, got.length);
    const rows: string[] = [];
    for (let i = 0; i < width; i++) {
      const mark = want[i] === got[i] ? '  ' : '≠ ';
      rows.push(`${mark}model:   ${want[i] ?? '(none)'}`, `${mark}service: ${got[i] ?? '(none)'}`);
    }
    throw new Error(`${what} (over ${answer.form}) differs from the model (count=${count}, model has ${want.length}):\n${rows.join('\n')}`);
  }

  /** GetFiles (or GetFilesWhitPath) of a folder: its live children, or 423 when the folder is locked for the session. */
  async checkFolder(model: TreeModel, folderId: number, view: View): Promise<void> {
    const op = view.withPath ? 'GetFilesWhitPath' : 'GetFiles';
    const answer = await this.client().call(view.form, op, { dir: String(folderId), order: view.key, desc: view.desc ? '1' : '0' });
    const what = `${op}(dir=${folderId}, order=${view.key}, desc=${bit(view.desc)})`;
    const lock = folderId === 0 ? undefined : model.lockOf(folderId);
    if (lock) {
      this.stats.checks++;
      if (answer.code !== 423 || answer.result.id !== String(lock.id) || answer.result.type !== 'folder') {
        throw new Error(`${what}: the model expected 423 naming folder ${lock.id} (locked), the service answered:\n${answer.raw}`);
      }
      return;
    }
    const { folders, files } = model.children(folderId);
    const sorted = [
      ...sortItems(folders, view.key, view.desc, model, (f) => f.time),
      ...sortItems(files, view.key, view.desc, model, (f) => f.time),
    ];
    const folderPath = model.folderPath(folderId);
    const expected = sorted.map((item) => {
      const attrs = expectedAttrs(model, item);
      if (view.withPath) attrs.path = `${folderPath}/${item.name}`;
      return { type: item.type, attrs };
    });
    this.compare(what, answer, expected, view.withPath ? ['path'] : []);
    if (view.withPath) {
      const chain = model.chain(folderId);
      const want = JSON.stringify({ value: folderPath || '/', dirs: [{ id: '0', name: '' }, ...chain.map((f) => ({ id: String(f.id), name: f.name }))] });
      if (JSON.stringify(answer.path) !== want) throw new Error(`${what}: <path> is ${JSON.stringify(answer.path)}, the model expected ${want}`);
    }
  }

  /** GetRecycleFiles: the entries of the bin, with where they came from, sorted ("time" = deletion time). */
  async checkBin(model: TreeModel, view: View): Promise<void> {
    const answer = await this.client().call(view.form, 'GetRecycleFiles', { order: view.key, desc: view.desc ? '1' : '0' });
    const deletedAt = (item: ItemModel) => (item.place.kind === 'entry' ? item.place.deletedAt : 0);
    const sorted = [
      ...sortItems(model.itemsIn('entry', 'folder'), view.key, view.desc, model, deletedAt),
      ...sortItems(model.itemsIn('entry', 'file'), view.key, view.desc, model, deletedAt),
    ];
    const expected = sorted.map((item) => {
      const place = item.place as Extract<ItemModel['place'], { kind: 'entry' }>;
      const attrs = expectedAttrs(model, item);
      attrs.path = `${place.from === '/' ? '' : place.from}/${item.name}`;
      attrs.deleted = isoSeconds(place.deletedAt);
      attrs.from = place.from;
      attrs.purge = isoSeconds(place.deletedAt + RETENTION_MS);
      return { type: item.type, attrs };
    });
    this.compare(`GetRecycleFiles(order=${view.key}, desc=${bit(view.desc)})`, answer, expected, BIN_FIELDS);
  }

  /** GetShareFiles: the shared live items, with their paths and share attributes. */
  async checkShares(model: TreeModel, view: View): Promise<void> {
    const answer = await this.client().call(view.form, 'GetShareFiles', { order: view.key, desc: view.desc ? '1' : '0' });
    const shared = (type: 'folder' | 'file') => model.itemsIn('live', type).filter((item) => item.share !== null);
    const sorted = [
      ...sortItems(shared('folder'), view.key, view.desc, model, (f) => f.time),
      ...sortItems(shared('file'), view.key, view.desc, model, (f) => f.time),
    ];
    const expected = sorted.map((item) => {
      const share = item.share!;
      const attrs = expectedAttrs(model, item);
      Object.assign(attrs, {
        path: `${model.folderPath(item.parentId)}/${item.name}`,
        code: share.code,
        url: `${this.baseUrl}/s/${share.code}`,
        downpwd: share.downpwd,
        downValue: String(share.downValue),
        downloads: '0',
        description: share.description,
        image: '',
      });
      return { type: item.type, attrs };
    });
    this.compare(`GetShareFiles(order=${view.key}, desc=${bit(view.desc)})`, answer, expected, SHARE_FIELDS);
  }

  /** GetLinkFiles: the linked live files, with their paths, URLs (with the current name) and hits. */
  async checkLinks(model: TreeModel, view: View): Promise<void> {
    const answer = await this.client().call(view.form, 'GetLinkFiles', { order: view.key, desc: view.desc ? '1' : '0' });
    const linked = model.liveFiles().filter((f) => f.link !== null);
    const expected = sortItems(linked, view.key, view.desc, model, (f) => f.time).map((file) => {
      const attrs = expectedAttrs(model, file);
      Object.assign(attrs, {
        path: `${model.folderPath(file.parentId)}/${file.name}`,
        url: `${this.baseUrl}/l/${file.link}/${encodeURIComponent(file.name)}`,
        hits: '0',
      });
      return { type: 'file', attrs };
    });
    this.compare(`GetLinkFiles(order=${view.key}, desc=${bit(view.desc)})`, answer, expected, LINK_FIELDS);
    await this.probeLinks(model);
  }

  /**
   * Every direct link the model knows, by HEAD (which counts no hit): a live file's answers 200
   * with its size, or 423 while it or a folder above it is encrypted; a file in the bin, a removed
   * link and a file deleted for good answer 404 (protocol.md §12.1, §17).
   */
  async probeLinks(model: TreeModel): Promise<void> {
    const probes: Array<{ code: string; what: string; status: number; size?: number }> = model.deadLinks.map((code) => ({ code, what: 'a removed link', status: 404 }));
    for (const file of model.files.values()) {
      if (!file.link) continue;
      if (file.place.kind !== 'live') probes.push({ code: file.link, what: `the link of file ${file.id}, in the bin`, status: 404 });
      else if (model.isEncryptedOrBeneath(file)) probes.push({ code: file.link, what: `the link of file ${file.id}, encrypted`, status: 423 });
      else probes.push({ code: file.link, what: `the link of file ${file.id}`, status: 200, size: file.size });
    }
    for (const probe of probes) {
      this.stats.checks++;
      const answer = await send(this.baseUrl, 'HEAD', `/l/${probe.code}/x`, {});
      const length = answer.headers['content-length'];
      if (answer.status !== probe.status || (probe.size !== undefined && length !== String(probe.size))) {
        throw new Error(`HEAD /l/${probe.code}: ${probe.what} answered ${answer.status} (Content-Length ${length}), the model expected ${probe.status}${probe.size !== undefined ? ` with ${probe.size} bytes` : ''}`);
      }
    }
  }

  async checkUsedBytes(model: TreeModel): Promise<void> {
    this.stats.checks++;
    const used = await this.client().usedBytes();
    if (used !== model.usedBytes()) throw new Error(`used bytes are ${used}, the model counts ${model.usedBytes()} (every file, the bin included)`);
  }

  /** The listings of the given folders (and the folders above them) and the three account-wide listings. */
  async checkAround(model: TreeModel, folderIds: Iterable<number>, views: (i: number) => View): Promise<void> {
    const wanted = new Set<number>([0]);
    for (const id of folderIds) {
      if (!model.isLiveFolder(id)) continue;
      for (const f of model.chain(id)) wanted.add(f.id);
    }
    let i = 0;
    for (const id of [...wanted].sort((a, b) => a - b)) await this.checkFolder(model, id, views(i++));
    await this.checkBin(model, views(i++));
    await this.checkShares(model, views(i++));
    await this.checkLinks(model, views(i++));
  }

  /** Every live folder and every account-wide listing, each in one view. */
  async checkAll(model: TreeModel, views: (i: number) => View): Promise<void> {
    await this.checkAround(
      model,
      model.liveFolders().map((f) => f.id),
      views,
    );
    await this.checkUsedBytes(model);
  }

  /** The end of a sequence: every listing in every order and direction. */
  async checkEveryOrder(model: TreeModel, form: (i: number) => Form): Promise<void> {
    let i = 0;
    for (const order of ALL_ORDERS) {
      await this.checkAll(model, () => ({ ...order, withPath: i % 2 === 1, form: form(i++) }));
    }
  }
}
