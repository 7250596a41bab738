/**
 * The model of one account's tree that the model-based tests hold the service to: folders and
 * files with their places (live, an entry of the bin, or beneath a folder in the bin), names,
 * sizes, times, shares, links and encryption marks, and what each operation must answer.
 *
 * It is written from the documents (docs/protocol.md §10–17, docs/encryption.md,
 * shared/design/DECISIONS.md), never from the service's code: where the service keeps counters
 * (folder sizes, used bytes) or walks the tree, the model recomputes from the whole tree, so that
 * a counter the service forgot to move shows up as a difference. Each operation either changes
 * the model and returns, or throws a Refusal with the documented code and changes nothing (the
 * commands run it on a clone and keep the clone only on success).
 */
import { extensionOf, nameKey, naturalSortKey } from '../../../src/operations/tree/names';
import type { SortKey } from '../../../src/catalog/results';

/** A refusal the model expects: the `code` of `<result code="…">`. */
export class Refusal extends Error {
  constructor(
    readonly code: number,
    why: string,
  ) {
    super(`${code} ${why}`);
  }
}

export type Place =
  | { readonly kind: 'live' }
  /** Deleted directly: listed by GetRecycleFiles. `from` is the parent's path at that moment. */
  | { readonly kind: 'entry'; readonly deletedAt: number; readonly from: string }
  /** Went to the bin with the folder entry `under`. */
  | { readonly kind: 'beneath'; readonly under: number };

export interface ShareState {
  readonly code: string;
  readonly downpwd: string;
  readonly downValue: number;
  readonly description: string;
}

interface ItemBase {
  readonly id: number;
  name: string;
  /** updated_at, whole seconds in ms: the `time` attribute and the "time" order. */
  time: number;
  place: Place;
  share: ShareState | null;
  /** The model's id of the key the item is encrypted with (a folder: its mark); null = plaintext. */
  keyId: number | null;
}

export interface FolderModel extends ItemBase {
  readonly type: 'folder';
  parentId: number;
}

export interface FileModel extends ItemBase {
  readonly type: 'file';
  parentId: number;
  ext: string;
  readonly size: number;
  readonly hash: string;
  link: string | null;
}

export type ItemModel = FolderModel | FileModel;

export interface KeyModel {
  readonly password: string;
  readonly tip: string;
}

export const MAX_NAME_LENGTH = 255;
const FORBIDDEN = /[/\\:*?"<>|\u0000-\u001f\u007f-\u009f]/;
/** Bidi controls, line and paragraph separators, noncharacters: refused anywhere in a name. */
const DECEPTIVE = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufdd0-\ufdef\ufffe\uffff\u{1fffe}\u{1ffff}]/u;
/** A name of nothing but these shows nothing, and is refused (the model knows a few of them). */
const INVISIBLE_ONLY = /^[\s\u200b-\u200d\u2060\u00ad\ufe0f\u2800]+$/u;
export const RETENTION_MS = 30 * 86_400_000;

/** DECISIONS.md §7 / protocol.md §10.1: the name in NFC, or the 400 it gets. */
export function checkedName(raw: string): string {
  const name = raw.normalize('NFC');
  if (
    name === '' ||
    [...name].length > MAX_NAME_LENGTH ||
    FORBIDDEN.test(name) ||
    DECEPTIVE.test(name) ||
    name === '.' ||
    name === '..' ||
    name.trim() !== name ||
    INVISIBLE_ONLY.test(name)
  ) {
    throw new Refusal(400, `invalid name ${JSON.stringify(raw)}`);
  }
  return name;
}

/**
 * "report.pdf" + " (1)" → "report (1).pdf"; folders and names without extension take it at the
 * end, except that a file name's trailing dots stay last ("notes." → "notes (1)."), so that the
 * new name has the same extension (none) as the old one (protocol.md §10.5).
 */
function withSuffix(name: string, suffix: string, isFile: boolean): string {
  const ext = isFile ? extensionOf(name) : '';
  // The extension keeps its letter case: "Report.TXT" → "Report (1).TXT".
  if (ext) return `${name.slice(0, name.length - ext.length - 1)}${suffix}${name.slice(name.length - ext.length - 1)}`;
  const dots = isFile ? name.length - name.replace(/\.+$/, '').length : 0;
  return dots > 0 && dots < name.length ? `${name.slice(0, -dots)}${suffix}${name.slice(-dots)}` : `${name}${suffix}`;
}

/** Code point order, as the database compares sort keys (JavaScript's < compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

export { SORT_KEYS, type SortKey } from '../../../src/catalog/results';

export class TreeModel {
  folders = new Map<number, FolderModel>();
  files = new Map<number, FileModel>();
  keys = new Map<number, KeyModel>();
  /** Keys the current session has unlocked (a new login starts with none). */
  unlocked = new Set<number>();
  /** Wrong passwords given per key, and for the account: the test stays below the throttle. */
  wrongPasswords = new Map<number, number>();
  wrongPasswordsOfAccount = 0;
  /** Codes of direct links that were removed (FileUnlink, or their file deleted for good): they must answer 404. */
  deadLinks: string[] = [];
  /** The service's clock during the next call, in ms (whole seconds). */
  now: number;

  constructor(now: number) {
    this.now = now;
  }

  clone(): TreeModel {
    const copy = new TreeModel(this.now);
    for (const [id, f] of this.folders) copy.folders.set(id, { ...f });
    for (const [id, f] of this.files) copy.files.set(id, { ...f });
    copy.keys = new Map(this.keys);
    copy.unlocked = new Set(this.unlocked);
    copy.wrongPasswords = new Map(this.wrongPasswords);
    copy.wrongPasswordsOfAccount = this.wrongPasswordsOfAccount;
    copy.deadLinks = [...this.deadLinks];
    return copy;
  }

  // ---- Reading the model ------------------------------------------------------------------------

  items(): ItemModel[] {
    return [...this.folders.values(), ...this.files.values()];
  }

  liveFolders(): FolderModel[] {
    return [...this.folders.values()].filter((f) => f.place.kind === 'live').sort((a, b) => a.id - b.id);
  }

  liveFiles(): FileModel[] {
    return [...this.files.values()].filter((f) => f.place.kind === 'live').sort((a, b) => a.id - b.id);
  }

  itemsIn(kind: Place['kind'], type: 'folder' | 'file'): ItemModel[] {
    const all: ItemModel[] = type === 'folder' ? [...this.folders.values()] : [...this.files.values()];
    return all.filter((item) => item.place.kind === kind).sort((a, b) => a.id - b.id);
  }

  isLiveFolder(id: number): boolean {
    return this.folders.get(id)?.place.kind === 'live';
  }

  /** The live folders and files directly in a live folder (0 = the root). */
  children(folderId: number): { folders: FolderModel[]; files: FileModel[] } {
    return {
      folders: [...this.folders.values()].filter((f) => f.place.kind === 'live' && f.parentId === folderId),
      files: [...this.files.values()].filter((f) => f.place.kind === 'live' && f.parentId === folderId),
    };
  }

  /** A live folder's chain from the root-most folder down to it; [] for the root. */
  chain(folderId: number): FolderModel[] {
    const out: FolderModel[] = [];
    for (let at = folderId; at !== 0; at = this.folders.get(at)!.parentId) out.unshift(this.folders.get(at)!);
    return out;
  }

  /** The absolute path of a live folder: "" for the root, "/A/B" otherwise. */
  folderPath(folderId: number): string {
    return this.chain(folderId)
      .map((f) => `/${f.name}`)
      .join('');
  }

  /** Whether `folderId` is `ancestorId` or lies beneath it (by parent ids, whatever their place). */
  isWithin(folderId: number, ancestorId: number): boolean {
    for (let at = folderId; at !== 0; at = this.folders.get(at)?.parentId ?? 0) if (at === ancestorId) return true;
    return false;
  }

  /** A folder's size: the live files beneath a live folder; what comes back with a folder in the bin. */
  folderSize(folder: FolderModel): number {
    let total = 0;
    for (const file of this.files.values()) {
      if (folder.place.kind === 'live') {
        if (file.place.kind === 'live' && this.isWithin(file.parentId, folder.id)) total += file.size;
      } else if (file.place.kind === 'beneath' && file.place.under === folder.id) {
        total += file.size;
      }
    }
    return total;
  }

  sizeOf(item: ItemModel): number {
    return item.type === 'file' ? item.size : this.folderSize(item);
  }

  /** Every file of the account counts, in the bin too (protocol.md §10.6). */
  usedBytes(): number {
    let total = 0;
    for (const file of this.files.values()) total += file.size;
    return total;
  }

  /** The live item of a folder that has this name (compared as names are), if any. */
  holderOf(folderId: number, name: string): ItemModel | undefined {
    const key = nameKey(name);
    const { folders, files } = this.children(folderId);
    return [...folders, ...files].find((item) => nameKey(item.name) === key);
  }

  /** The root-most folder on the way to a live folder (itself included) whose key this session has not unlocked. */
  lockOf(folderId: number): FolderModel | undefined {
    return this.chain(folderId).find((f) => f.keyId !== null && !this.unlocked.has(f.keyId));
  }

  /** Whether an item is encrypted or lies beneath an encrypted folder: sharing and links refuse it (423). */
  isEncryptedOrBeneath(item: ItemModel): boolean {
    if (item.keyId !== null) return true;
    return this.chain(item.parentId).some((f) => f.keyId !== null);
  }

  tipOf(item: ItemModel): string | undefined {
    return item.keyId === null ? undefined : this.keys.get(item.keyId)!.tip;
  }

  /** The content an account owns in plaintext, for FileAdd without a transfer. */
  ownsPlaintext(hash: string, size: number): boolean {
    return [...this.files.values()].some((f) => f.hash === hash && f.size === size && f.keyId === null);
  }

  // ---- Operations -------------------------------------------------------------------------------

  private requireLiveFolder(id: number): FolderModel {
    const folder = this.folders.get(id);
    if (!folder || folder.place.kind !== 'live') throw new Refusal(404, `folder ${id} not found`);
    return folder;
  }

  private requireLiveFile(id: number): FileModel {
    const file = this.files.get(id);
    if (!file || file.place.kind !== 'live') throw new Refusal(404, `file ${id} not found`);
    return file;
  }

  private requireParent(id: number): void {
    if (id !== 0) this.requireLiveFolder(id);
  }

  private refuseTaken(folderId: number, name: string): void {
    const holder = this.holderOf(folderId, name);
    if (holder) throw new Refusal(409, `a ${holder.type} named "${holder.name}" already exists in this folder`);
  }

  private refuseLocked(folderId: number): void {
    if (folderId === 0) return;
    const lock = this.lockOf(folderId);
    if (lock) throw new Refusal(423, `folder ${lock.id} is locked`);
  }

  folderAdd(parentId: number, rawName: string, newId: () => number): FolderModel {
    const name = checkedName(rawName);
    this.requireParent(parentId);
    this.refuseTaken(parentId, name);
    this.refuseLocked(parentId);
    const keyId = parentId === 0 ? null : this.folders.get(parentId)!.keyId;
    const folder: FolderModel = { type: 'folder', id: newId(), parentId, name, time: this.now, place: { kind: 'live' }, share: null, keyId };
    this.folders.set(folder.id, folder);
    return folder;
  }

  /** FileAdd with content the caller has (uploaded just before, or owned): the order of checks of protocol.md §10.5. */
  fileAdd(parentId: number, rawName: string, ext: string, size: number, hash: string, newId: () => number): FileModel {
    const name = checkedName(rawName);
    if (ext.toLowerCase() !== extensionOf(name)) throw new Refusal(400, `ext ${ext} does not agree with ${name}`);
    this.requireParent(parentId);
    const taken = new Set([...Object.values(this.children(parentId))].flat().map((item) => nameKey(item.name)));
    let numbered = name;
    for (let n = 1; taken.has(nameKey(numbered)); n++) numbered = withSuffix(name, ` (${n})`, true);
    if ([...numbered].length > MAX_NAME_LENGTH) throw new Refusal(409, 'numbered name too long');
    this.refuseLocked(parentId);
    const file: FileModel = {
      type: 'file',
      id: newId(),
      parentId,
      name: numbered,
      ext: extensionOf(numbered),
      size,
      hash,
      time: this.now,
      place: { kind: 'live' },
      share: null,
      link: null,
      keyId: null,
    };
    this.files.set(file.id, file);
    this.settleEncryption();
    return file;
  }

  folderRename(id: number, rawName: string): FolderModel {
    const name = checkedName(rawName);
    if (id === 0) throw new Refusal(404, 'the root is not an item');
    const folder = this.requireLiveFolder(id);
    return this.rename(folder, name);
  }

  fileRename(id: number, rawName: string): FileModel {
    const name = checkedName(rawName);
    const file = this.requireLiveFile(id);
    this.rename(file, name);
    file.ext = extensionOf(file.name);
    return file;
  }

  private rename<T extends ItemModel>(item: T, name: string): T {
    if (item.name === name) return item;
    if (nameKey(name) !== nameKey(item.name)) this.refuseTaken(item.parentId, name);
    item.name = name;
    item.time = this.now;
    return item;
  }

  move(folderIds: readonly number[], fileIds: readonly number[], todir: number): void {
    if (folderIds.length === 0 && fileIds.length === 0) throw new Refusal(400, 'dirids and fids are both empty');
    const folders = folderIds.map((id) => {
      if (id === 0) throw new Refusal(404, 'the root cannot be moved');
      return this.requireLiveFolder(id);
    });
    this.requireParent(todir);
    const files = fileIds.map((id) => this.requireLiveFile(id));
    if (todir !== 0 && folders.some((f) => this.isWithin(todir, f.id))) throw new Refusal(409, 'cannot move a folder into itself or its own subfolder');
    const moving: ItemModel[] = [...folders, ...files].filter((item) => item.parentId !== todir);
    if (moving.length === 0) return;
    const keys = new Set<string>();
    for (const item of moving) {
      if (keys.has(nameKey(item.name))) throw new Refusal(409, `two of the items to move are named like "${item.name}"`);
      keys.add(nameKey(item.name));
    }
    for (const item of moving) this.refuseTaken(todir, item.name);
    const sources = new Set(moving.map((item) => item.parentId));
    for (const item of moving) item.parentId = todir;
    // Out of or into a locked folder: 423 (checked on the tree as the move leaves it).
    for (const source of sources) this.refuseLocked(source);
    this.refuseLocked(todir);
    const destinationKey = todir === 0 ? null : this.folders.get(todir)!.keyId;
    if (destinationKey !== null) for (const folder of moving.filter((item) => item.type === 'folder')) this.markSubtree(folder.id, destinationKey);
    this.settleEncryption();
  }

  /**
   * Copy (protocol.md §10.8), in its order of checks: 400, 404, 423 (destination), 409, 423 (items); a tree this
   * small meets neither the item, depth nor quota limits. The copies take ids from `newId`, in the order made: each
   * folder before what is in it. Returns them in that order.
   */
  copy(folderIds: readonly number[], fileIds: readonly number[], todir: number, newId: () => number): ItemModel[] {
    if (folderIds.length === 0 && fileIds.length === 0) throw new Refusal(400, 'dirids and fids are both empty');
    const folders = folderIds.map((id) => {
      if (id === 0) throw new Refusal(404, 'the root cannot be copied');
      return this.requireLiveFolder(id);
    });
    const files = fileIds.map((id) => this.requireLiveFile(id));
    this.requireParent(todir);
    if (todir !== 0 && this.folders.get(todir)!.keyId !== null) throw new Refusal(423, 'cannot copy into an encrypted folder');
    if (todir !== 0 && folders.some((f) => this.isWithin(todir, f.id))) throw new Refusal(409, 'cannot copy a folder into itself or its own subfolder');
    const beneath = (folder: FolderModel): ItemModel[] => {
      const { folders: subfolders, files: inside } = this.children(folder.id);
      return [...inside, ...subfolders.flatMap((sub) => [sub, ...beneath(sub)])];
    };
    if ([...folders, ...files, ...folders.flatMap(beneath)].some((item) => item.keyId !== null)) throw new Refusal(423, 'encrypted folders and files cannot be copied');

    // Top-level names: their own, or the first free numbered form as FileAdd gives, names given earlier in the call counting.
    const taken = new Set([...Object.values(this.children(todir))].flat().map((item) => nameKey(item.name)));
    const names = [...folders, ...files].map((item) => {
      let name = item.name;
      for (let n = 1; taken.has(nameKey(name)); n++) name = withSuffix(item.name, ` (${n})`, item.type === 'file');
      if ([...name].length > MAX_NAME_LENGTH) throw new Refusal(409, 'numbered name too long');
      taken.add(nameKey(name));
      return name;
    });

    const made: ItemModel[] = [];
    const base = { time: this.now, place: { kind: 'live' } as const, share: null, keyId: null };
    const copyFile = (file: FileModel, parentId: number, name: string) => {
      const copy: FileModel = { ...base, type: 'file', id: newId(), parentId, name, ext: file.ext, size: file.size, hash: file.hash, link: null };
      this.files.set(copy.id, copy);
      made.push(copy);
    };
    const copyFolder = (folder: FolderModel, parentId: number, name: string) => {
      const { folders: subfolders, files: inside } = this.children(folder.id);
      const copy: FolderModel = { ...base, type: 'folder', id: newId(), parentId, name };
      this.folders.set(copy.id, copy);
      made.push(copy);
      for (const file of inside) copyFile(file, copy.id, file.name);
      for (const sub of subfolders) copyFolder(sub, copy.id, sub.name);
    };
    folders.forEach((folder, i) => copyFolder(folder, todir, names[i]));
    files.forEach((file, i) => copyFile(file, todir, names[folders.length + i]));
    return made;
  }

  /** Gives the item `from` (a copy's provisional id) the service's id `to`, in every place that names it. */
  renumber(from: number, to: number): void {
    const folder = this.folders.get(from);
    if (folder) {
      this.folders.delete(from);
      this.folders.set(to, { ...folder, id: to });
      for (const item of [...this.folders.values(), ...this.files.values()]) if (item.parentId === from) item.parentId = to;
    }
    const file = this.files.get(from);
    if (file) {
      this.files.delete(from);
      this.files.set(to, { ...file, id: to });
    }
  }

  /** Parent paths as they are now, for the `from` of bin entries. */
  private fromPath(parentId: number): string {
    return this.folderPath(parentId) || '/';
  }

  toBin(folderIds: readonly number[], fileIds: readonly number[]): void {
    if (folderIds.length === 0 && fileIds.length === 0) throw new Refusal(400, 'dirids and fids are both empty');
    const folders = folderIds.map((id) => this.requireLiveFolder(id));
    const files = fileIds.map((id) => this.requireLiveFile(id));
    const given = new Set(folderIds);
    // Each item beneath a given folder goes with the nearest given folder above it.
    const nearestGiven = (parentId: number): number | undefined => {
      for (let at = parentId; at !== 0; at = this.folders.get(at)!.parentId) if (given.has(at)) return at;
      return undefined;
    };
    const beneath = new Map<ItemModel, number>();
    for (const item of this.items()) {
      if (item.place.kind !== 'live' || (item.type === 'folder' ? given.has(item.id) : fileIds.includes(item.id))) continue;
      const under = nearestGiven(item.parentId);
      if (under !== undefined) beneath.set(item, under);
    }
    const entries = [...folders, ...files].map((item) => ({ item, from: this.fromPath(item.parentId) }));
    for (const { item, from } of entries) item.place = { kind: 'entry', deletedAt: this.now, from };
    for (const [item, under] of beneath) item.place = { kind: 'beneath', under };
  }

  deleteForGood(folderIds: readonly number[], fileIds: readonly number[]): void {
    if (folderIds.length === 0 && fileIds.length === 0) throw new Refusal(400, 'dirids and fids are both empty');
    const reachable = (item: ItemModel | undefined) => item !== undefined && item.place.kind !== 'beneath';
    for (const id of folderIds) if (!reachable(this.folders.get(id))) throw new Refusal(404, `folder ${id} not found`);
    for (const id of fileIds) if (!reachable(this.files.get(id))) throw new Refusal(404, `file ${id} not found`);
    // Down from each folder through what is not an entry of its own (those stay in the bin).
    const doomedFolders = new Set(folderIds);
    let grew = true;
    while (grew) {
      grew = false;
      for (const f of this.folders.values()) {
        if (!doomedFolders.has(f.id) && f.place.kind !== 'entry' && doomedFolders.has(f.parentId)) {
          doomedFolders.add(f.id);
          grew = true;
        }
      }
    }
    const doomedFiles = new Set(fileIds);
    for (const f of this.files.values()) if (f.place.kind !== 'entry' && doomedFolders.has(f.parentId)) doomedFiles.add(f.id);
    for (const id of doomedFolders) this.folders.delete(id);
    for (const id of doomedFiles) this.deleteFile(id);
  }

  recycleEmpty(): void {
    for (const [id, f] of this.folders) if (f.place.kind !== 'live') this.folders.delete(id);
    for (const [id, f] of this.files) if (f.place.kind !== 'live') this.deleteFile(id);
  }

  /** A file deleted for good takes its direct link with it. */
  private deleteFile(id: number): void {
    const link = this.files.get(id)?.link;
    if (link) this.deadLinks.push(link);
    this.files.delete(id);
  }

  /** FolderAndFileRestore: where each entry goes and under which name (protocol.md §12.3). Returns them in answer order. */
  restore(folderIds: readonly number[], fileIds: readonly number[]): ItemModel[] {
    if (folderIds.length === 0 && fileIds.length === 0) throw new Refusal(400, 'dirids and fids are both empty');
    const folders = folderIds.map((id) => this.folders.get(id));
    const files = fileIds.map((id) => this.files.get(id));
    if (folders.some((f) => !f) || files.some((f) => !f)) throw new Refusal(404, 'not an item of the caller');
    const restoring = [...folders, ...files] as ItemModel[];
    for (const item of restoring) if (item.place.kind !== 'entry') throw new Refusal(409, `${item.type} ${item.id} is not an entry of the bin`);

    const restored = new Set(folderIds);
    const comesBack = (parentId: number): boolean => {
      const parent = this.folders.get(parentId);
      if (!parent) return false;
      if (parent.place.kind === 'live') return true;
      if (parent.place.kind === 'entry') return restored.has(parent.id);
      return restored.has(parent.place.under);
    };
    const destinations = restoring.map((item) => (comesBack(item.parentId) ? item.parentId : 0));
    // Their subtrees come back first: those names are taken where the entries go.
    for (const item of this.items()) if (item.place.kind === 'beneath' && restored.has(item.place.under)) item.place = { kind: 'live' };
    restoring.forEach((item, i) => {
      const destination = destinations[i];
      const taken = new Set([...Object.values(this.children(destination))].flat().map((child) => nameKey(child.name)));
      let name = item.name;
      for (let n = 1; taken.has(nameKey(name)); n++) name = withSuffix(item.name, n === 1 ? ' (restored)' : ` (restored ${n})`, item.type === 'file');
      if ([...name].length > MAX_NAME_LENGTH) throw new Refusal(409, 'restored name too long');
      item.name = name;
      item.parentId = destination;
      item.place = { kind: 'live' };
    });
    return restoring;
  }

  share(type: 'folder' | 'file', ids: readonly number[], settings: Omit<ShareState, 'code'>, codeOf: (id: number) => string): void {
    if (ids.length === 0) throw new Refusal(400, 'empty id list');
    const pwdLength = [...settings.downpwd].length;
    if (settings.downpwd !== '' && (pwdLength < 4 || pwdLength > 32)) throw new Refusal(400, 'downpwd must be 4 to 32 characters');
    if (settings.downValue < 0) throw new Refusal(400, 'downValue may not be negative');
    const items = ids.map((id) => (type === 'folder' ? this.requireLiveFolder(id) : this.requireLiveFile(id)));
    if (items.some((item) => this.isEncryptedOrBeneath(item))) throw new Refusal(423, 'encrypted items cannot be shared');
    for (const item of items) item.share = { ...settings, code: item.share?.code ?? codeOf(item.id) };
  }

  unshare(folderIds: readonly number[], fileIds: readonly number[]): void {
    if (folderIds.length === 0 && fileIds.length === 0) throw new Refusal(400, 'dirids and fids are both empty');
    const items = [...folderIds.map((id) => this.requireLiveFolder(id)), ...fileIds.map((id) => this.requireLiveFile(id))];
    for (const item of items) item.share = null;
  }

  fileLink(id: number, newCode: () => string): string {
    const file = this.requireLiveFile(id);
    if (this.isEncryptedOrBeneath(file)) throw new Refusal(423, 'encrypted files cannot be linked');
    file.link ??= newCode();
    return file.link;
  }

  fileUnlink(id: number): void {
    const file = this.requireLiveFile(id);
    if (file.link) this.deadLinks.push(file.link);
    file.link = null;
  }

  folderEncrypt(id: number, password: string, tip: string, keyId: number): void {
    const length = [...password].length;
    if (length < 4 || length > 64) throw new Refusal(400, 'password must be 4 to 64 characters');
    if ([...tip].length > 100 || tip.toLowerCase().includes(password.toLowerCase())) throw new Refusal(400, 'bad tip');
    if (id === 0) throw new Refusal(400, 'the root cannot be encrypted');
    const folder = this.requireLiveFolder(id);
    if (folder.keyId !== null) throw new Refusal(423, 'already encrypted');
    this.keys.set(keyId, { password, tip });
    this.markSubtree(id, keyId);
    this.settleEncryption();
  }

  unlockFolder(id: number, password: string): void {
    const length = [...password].length;
    if (length < 4 || length > 64) throw new Refusal(400, 'password must be 4 to 64 characters');
    const folder = this.requireLiveFolder(id);
    if (folder.keyId === null) throw new Refusal(409, 'the folder is not encrypted');
    if (this.keys.get(folder.keyId)!.password !== password) {
      this.wrongPasswords.set(folder.keyId, (this.wrongPasswords.get(folder.keyId) ?? 0) + 1);
      this.wrongPasswordsOfAccount++;
      throw new Refusal(403, 'wrong password');
    }
    this.wrongPasswords.delete(folder.keyId);
    this.unlocked.add(folder.keyId);
  }

  /** A new session: nothing unlocked. */
  relogin(): void {
    this.unlocked.clear();
  }

  /** FolderEncrypt and a move into an encrypted folder mark every folder beneath (in the bin too) that has no mark yet. */
  private markSubtree(folderId: number, keyId: number): void {
    for (const f of this.folders.values()) if (f.keyId === null && this.isWithin(f.id, folderId)) f.keyId = keyId;
  }

  /**
   * What the encryption jobs do (within the call for small folders, else right after it; the test
   * waits for them): every plaintext file in a folder with a mark, live or in the bin, is encrypted
   * with that folder's key.
   */
  settleEncryption(): void {
    for (const file of this.files.values()) {
      if (file.keyId === null && file.parentId !== 0) {
        const folder = this.folders.get(file.parentId);
        if (folder && folder.keyId !== null) file.keyId = folder.keyId;
      }
    }
  }
}

// ---- Listing order ------------------------------------------------------------------------------

/**
 * The order of every listing (protocol.md §11.1): folders first, then files; each group by the key
 * (reversed when desc), then by natural name ascending (sort_key, in code point order), then by id.
 * `timeOf` is the time the key "time" sorts by (in the bin: the deletion time).
 */
export function sortItems<T extends ItemModel>(items: readonly T[], key: SortKey, desc: boolean, model: TreeModel, timeOf: (item: T) => number): T[] {
  const value = (item: T): number | string => {
    switch (key) {
      case 'name':
        return naturalSortKey(item.name);
      case 'time':
        return timeOf(item);
      case 'size':
        return model.sizeOf(item);
      case 'share':
        return item.share ? 1 : 0;
      case 'link':
        return item.type === 'file' && item.link ? 1 : 0;
    }
  };
  const compareValues = (a: number | string, b: number | string) => (typeof a === 'string' ? compareCodePoints(a, b as string) : a - (b as number));
  return [...items].sort((a, b) => {
    const byKey = compareValues(value(a), value(b)) * (desc ? -1 : 1);
    if (byKey !== 0) return byKey;
    const byName = compareCodePoints(naturalSortKey(a.name), naturalSortKey(b.name));
    return byName !== 0 ? byName : a.id - b.id;
  });
}
