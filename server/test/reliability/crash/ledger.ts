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

/** An unacknowledged change: what the tree becomes if it happened (given what was seen, for new ids). */
export interface Change {
  readonly describe: string;
  apply(tree: Map<string, Item>, seen: Tree): void;
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

/** The tree after moving items to the bin (FolderAndFileDelete is_real=0), as the server does it. */
export function binItems(tree: Map<string, Item>, items: readonly Item[]): void {
  for (const item of items) {
    if (item.type === 'folder') {
      // Everything live beneath goes with it; entries beneath keep their own entry.
      const going = beneath(tree, item.id).filter((below) => isLive(below) && liveChain(tree, below, item.id));
      for (const below of going) tree.set(keyOf(below.type, below.id), { ...below, place: { under: item.id } });
    }
    tree.set(keyOf(item.type, item.id), { ...item, place: 'entry' });
  }
}

/** Whether every folder between `item` and the folder `top` is live (so `item` goes with `top`). */
function liveChain(tree: Tree, item: Item, top: number): boolean {
  let parent = item.parent;
  while (parent !== top) {
    const folder = tree.get(keyOf('folder', parent));
    if (!folder || !isLive(folder)) return false;
    parent = folder.parent;
  }
  return true;
}

/** The tree after deleting items for good (is_real=1): each with what is live beneath it, or binned under it. */
export function purgeItems(tree: Map<string, Item>, items: readonly Item[]): void {
  for (const item of items) {
    if (item.type === 'folder') {
      const going = beneath(tree, item.id).filter((below) =>
        item.place === 'entry' ? typeof below.place === 'object' && below.place.under === item.id : isLive(below) && liveChain(tree, below, item.id),
      );
      for (const below of going) tree.delete(keyOf(below.type, below.id));
    }
    tree.delete(keyOf(item.type, item.id));
  }
}

/** The tree after restoring entries whose original folders are live (or come back in the same call). */
export function restoreItems(tree: Map<string, Item>, entries: readonly Item[]): void {
  // First everything comes back; then each entry stays in its folder if that folder is live now
  // (it was, or it came back in this call), else it goes to the root.
  for (const entry of entries) {
    tree.set(keyOf(entry.type, entry.id), { ...entry, place: 'live' });
    if (entry.type !== 'folder') continue;
    for (const item of tree.values()) {
      if (typeof item.place === 'object' && item.place.under === entry.id) tree.set(keyOf(item.type, item.id), { ...item, place: 'live' });
    }
  }
  for (const entry of entries) {
    const parent = tree.get(keyOf('folder', entry.parent));
    if (entry.parent !== 0 && !(parent && isLive(parent) && liveChainToRoot(tree, parent))) tree.set(keyOf(entry.type, entry.id), { ...entry, place: 'live', parent: 0 });
  }
}

/** Whether a live folder is really reachable: every folder above it live too. */
function liveChainToRoot(tree: Tree, folder: Item): boolean {
  let parent = folder.parent;
  while (parent !== 0) {
    const above = tree.get(keyOf('folder', parent));
    if (!above || !isLive(above)) return false;
    parent = above.parent;
  }
  return true;
}

export const copyTree = (tree: Tree) => new Map(tree);

/** What the acknowledged calls made, and the call under way. */
export class Ledger {
  committed = new Map<string, Item>();
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

  /** Runs `call` as the change under way; once it answers, the change is committed. */
  async change<T>(change: Change, call: () => Promise<T>): Promise<T> {
    this.inFlight = change;
    const result = await call();
    const seen = this.read();
    const next = copyTree(this.committed);
    change.apply(next, seen);
    // Nothing else changes the tree: an acknowledged call must have made exactly this of it.
    const differences = treeDifferences(next, seen);
    if (differences.length > 0) throw new Error(`after "${change.describe}" answered, the tree is not what it should make:\n  ${differences.join('\n  ')}`);
    this.committed = next;
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
      const done = copyTree(this.committed);
      change.apply(done, seen);
      const withChange = treeDifferences(done, seen);
      if (withChange.length === 0) {
        this.committed = done;
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
