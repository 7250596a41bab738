/**
 * The client's ledger of one account's tree: what every acknowledged call made of it, and the one
 * call that was under way when the server died.
 *
 * Each scenario's client works one call at a time, so at a kill at most one change is
 * unacknowledged. After the restart the ledger reads the tree from the database and requires it to
 * be exactly what the acknowledged calls made (`committed`), or exactly that plus the whole of the
 * unacknowledged call (`inFlight.apply`): never a part of it, never anything else. Then it adopts
 * what it saw. Content is checked to the byte: every file's blob on disk hashes to its SHA-256
 * (plaintext content), and a sample is downloaded over the wire.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { TreeModel, type ItemModel } from '../model/tree-model';

/** Where an item is: live, an entry of the bin (deleted directly), or binned under a folder entry. */
export type Place = 'live' | 'entry' | { readonly under: number };

export interface Item {
  readonly type: 'folder' | 'file';
  readonly id: number;
  readonly parent: number;
  readonly name: string;
  readonly place: Place;
  readonly encrypted: boolean;
  /** Files only. */
  readonly sha256?: string;
  readonly size?: number;
}

export type Tree = ReadonlyMap<string, Item>;
export const keyOf = (type: Item['type'], id: number) => `${type}:${id}`;

/** An unacknowledged change: what it does to the model if it happened (given what was seen, for new ids). */
export interface Change {
  readonly describe: string;
  apply(model: TreeModel, seen: Tree): void;
}

/**
 * Reads an account's tree from the data folder's SQLite file (beside a running service, or after
 * one). `fileEncryption: false` leaves out whether each file's content is encrypted yet: the flag a
 * background job changes file by file (the encryption scenario checks it on its own).
 */
export function readTree(dataDir: string, accountId: number, options: { readonly fileEncryption?: boolean } = {}): Map<string, Item> {
  const fileEncryption = options.fileEncryption ?? true;
  const db = new Database(path.join(dataDir, 'fss.sqlite'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const tree = new Map<string, Item>();
    type Row = { id: number; parent: number; name: string; deleted_at: number | null; binned_under: number | null; encrypted: number };
    const place = (row: Row): Place => (row.deleted_at !== null ? 'entry' : row.binned_under !== null ? { under: row.binned_under } : 'live');
    for (const row of db.prepare('select id, parent_id as parent, name, deleted_at, binned_under, encrypted from folders where account_id = ?').all(accountId) as Row[]) {
      tree.set(keyOf('folder', row.id), { type: 'folder', id: row.id, parent: row.parent, name: row.name, place: place(row), encrypted: row.encrypted === 1 });
    }
    const files = db
      .prepare('select id, folder_id as parent, name, deleted_at, binned_under, encrypted, sha256, size from files where account_id = ?')
      .all(accountId) as Array<Row & { sha256: string; size: number }>;
    for (const row of files) {
      tree.set(keyOf('file', row.id), {
        type: 'file',
        id: row.id,
        parent: row.parent,
        name: row.name,
        place: place(row),
        encrypted: fileEncryption && row.encrypted === 1,
        sha256: row.sha256,
        size: row.size,
      });
    }
    return tree;
  } finally {
    db.close();
  }
}

const samePlace = (a: Place, b: Place) => (typeof a === 'string' || typeof b === 'string' ? a === b : a.under === b.under);
const sameItem = (a: Item, b: Item) =>
  a.type === b.type && a.id === b.id && a.parent === b.parent && a.name === b.name && samePlace(a.place, b.place) && a.encrypted === b.encrypted && a.sha256 === b.sha256 && a.size === b.size;

/** The differences between two trees, as lines (empty: the same). */
export function treeDifferences(expected: Tree, actual: Tree): string[] {
  const lines: string[] = [];
  const show = (item: Item) => JSON.stringify(item);
  for (const [key, item] of expected) {
    const other = actual.get(key);
    if (!other) lines.push(`missing ${show(item)}`);
    else if (!sameItem(item, other)) lines.push(`expected ${show(item)}, found ${show(other)}`);
  }
  for (const [key, item] of actual) if (!expected.has(key)) lines.push(`unexpected ${show(item)}`);
  return lines;
}

/** Every item beneath a folder (not itself), through parent ids, whatever their place. */
export function beneath(tree: Tree, folderId: number): Item[] {
  const found: Item[] = [];
  const queue = [folderId];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const item of tree.values()) {
      if (item.parent !== parent) continue;
      found.push(item);
      if (item.type === 'folder') queue.push(item.id);
    }
  }
  return found;
}

export const isLive = (item: Item) => item.place === 'live';

/** The model's tree as the database holds it: places, parents, names, encryption marks and content. */
export function treeOf(model: TreeModel, options: { readonly fileEncryption?: boolean } = {}): Map<string, Item> {
  const fileEncryption = options.fileEncryption ?? true;
  const placeOf = (item: ItemModel): Place => (item.place.kind === 'beneath' ? { under: item.place.under } : item.place.kind);
  const tree = new Map<string, Item>();
  for (const item of model.items()) {
    const base = { type: item.type, id: item.id, parent: item.parentId, name: item.name, place: placeOf(item) };
    if (item.type === 'folder') tree.set(keyOf('folder', item.id), { ...base, encrypted: item.keyId !== null });
    else tree.set(keyOf('file', item.id), { ...base, encrypted: fileEncryption && item.keyId !== null, sha256: item.hash, size: item.size });
  }
  return tree;
}

/**
 * What the acknowledged calls made (a TreeModel: the rules of the bin, restores and moves are the
 * model's, written from the documents), and the call under way.
 */
export class Ledger {
  private model = new TreeModel(Date.now());
  /** The model's tree as the database should hold it. */
  committed: Tree = new Map();
  inFlight: Change | null = null;
  /** How unacknowledged calls turned out, over the whole run. */
  readonly outcomes = { done: 0, notDone: 0 };

  constructor(
    readonly dataDir: string,
    readonly accountId: number,
    private readonly options: { readonly fileEncryption?: boolean } = {},
  ) {}

  read(): Map<string, Item> {
    return readTree(this.dataDir, this.accountId, this.options);
  }

  /** The committed model with `change` applied, on a copy. */
  private withChange(change: Change, seen: Tree): TreeModel {
    const next = this.model.clone();
    change.apply(next, seen);
    return next;
  }

  private adopt(model: TreeModel): void {
    this.model = model;
    this.committed = treeOf(model, this.options);
  }

  /** Runs `call` as the change under way; once it answers, the change is committed. */
  async change<T>(change: Change, call: () => Promise<T>): Promise<T> {
    this.inFlight = change;
    const result = await call();
    const seen = this.read();
    const next = this.withChange(change, seen);
    // Nothing else changes the tree: an acknowledged call must have made exactly this of it.
    const differences = treeDifferences(treeOf(next, this.options), seen);
    if (differences.length > 0) throw new Error(`after "${change.describe}" answered, the tree is not what it should make:\n  ${differences.join('\n  ')}`);
    this.adopt(next);
    this.inFlight = null;
    return result;
  }

  /**
   * After a crash and restart: the tree is the committed one, or that with the whole change under
   * way. Throws with both differences otherwise; adopts what it saw.
   */
  settle(): { readonly unacknowledged: string | null; readonly happened: boolean } {
    const seen = this.read();
    const without = treeDifferences(this.committed, seen);
    const change = this.inFlight;
    this.inFlight = null;
    if (without.length === 0) {
      if (change) this.outcomes.notDone++;
      return { unacknowledged: change?.describe ?? null, happened: false };
    }
    if (change) {
      const done = this.withChange(change, seen);
      const withChange = treeDifferences(treeOf(done, this.options), seen);
      if (withChange.length === 0) {
        this.adopt(done);
        this.outcomes.done++;
        return { unacknowledged: change.describe, happened: true };
      }
      throw new Error(
        `the tree is neither what the acknowledged calls made nor that with all of "${change.describe}":\n` +
          `  without it: ${without.join('\n    ')}\n  with it: ${withChange.join('\n    ')}`,
      );
    }
    throw new Error(`the tree is not what the acknowledged calls made (nothing was under way):\n  ${without.join('\n  ')}`);
  }
}

/** Every file of the account whose content is plaintext: its blob on disk hashes to its SHA-256. */
export function checkPlaintextBlobs(dataDir: string, accountId: number): number {
  const db = new Database(path.join(dataDir, 'fss.sqlite'), { readonly: true, fileMustExist: true });
  let checked = 0;
  try {
    const rows = db
      .prepare(
        `select f.id, f.sha256, f.size, c.storage_key, c.size as stored from files f join content c on c.id = f.content_id
         where f.account_id = ? and c.encrypted = 0`,
      )
      .all(accountId) as Array<{ id: number; sha256: string; size: number; storage_key: string; stored: number }>;
    for (const row of rows) {
      const bytes = readFileSync(path.join(dataDir, 'content', row.storage_key));
      const hash = createHash('sha256').update(bytes).digest('hex');
      if (hash !== row.sha256 || bytes.length !== row.size) throw new Error(`file ${row.id}: its blob ${row.storage_key} holds ${bytes.length} bytes hashing to ${hash}, not ${row.size} bytes of ${row.sha256}`);
      checked++;
    }
  } finally {
    db.close();
  }
  return checked;
}
