/**
 * The calls that change a tree, each recorded in the ledger as it goes (ledger.ts), and the checks
 * that every tree scenario makes after a restart.
 */
import type { ScenarioContext } from './harness';
import { bytesOf, download, ok, Ops, upload, type Answer } from './client';
import { beneath, checkPlaintextBlobs, isLive, keyOf, Ledger, type Item, type Tree } from './ledger';

/** The new item the answer (or, unacknowledged, the database) shows: found by parent and name. */
function findNew(seen: Tree, type: Item['type'], parent: number, name: string): Item | undefined {
  for (const item of seen.values()) if (item.type === type && item.parent === parent && item.name === name && isLive(item)) return item;
  return undefined;
}

export interface Content {
  readonly sha256: string;
  readonly size: number;
}

export class TreeClient {
  readonly ledger: Ledger;
  /** Contents the account owns (so FileAdd needs no upload: DECISIONS "instant upload"). */
  readonly contents: Content[] = [];
  /** Folder ids the rounds must leave alone (the originals of the contents). */
  readonly keep = new Set<number>();
  private names = 0;

  constructor(
    private readonly ctx: ScenarioContext,
    options: { readonly fileEncryption?: boolean } = {},
  ) {
    this.ledger = new Ledger(ctx.dataDir, ctx.account.id, options);
  }

  /** A name no item of the account has had (names never clash, so no call is refused for one). */
  newName(stem: string, ext = ''): string {
    return `${stem} ${this.ctx.round}-${++this.names}${ext ? `.${ext}` : ''}`;
  }

  /** Uploads `count` distinct small contents into a folder of originals that rounds leave alone. */
  async uploadOriginals(count: number): Promise<void> {
    const folder = await this.addFolder(0, 'originals');
    this.keep.add(folder);
    for (let i = 0; i < count; i++) {
      const bytes = bytesOf(`${this.ctx.name} original ${i}`, 100 + 997 * i);
      const { sha256 } = await upload(this.ctx.server.url, this.ctx.session, bytes);
      this.contents.push({ sha256, size: bytes.length });
      await this.addFile(folder, this.newName('original', 'bin'), { sha256, size: bytes.length });
    }
  }

  private get url() {
    return this.ctx.server.url;
  }

  async addFolder(parent: number, name: string): Promise<number> {
    const answer = await this.ledger.change(
      {
        describe: `FolderAdd ${name} in ${parent}`,
        apply: (model, seen) => {
          const made = findNew(seen, 'folder', parent, name);
          if (made) model.folderAdd(parent, name, () => made.id);
        },
      },
      () => ok(this.url, Ops.FolderAdd, this.ctx.session, { dirid: parent, name }),
    );
    return Number(answer.folders[0].id);
  }

  async addFile(parent: number, name: string, content: Content): Promise<number> {
    const answer = await this.ledger.change(
      {
        describe: `FileAdd ${name} in ${parent}`,
        apply: (model, seen) => {
          const made = findNew(seen, 'file', parent, name);
          if (made) model.fileAdd(parent, name, name.split('.').pop() ?? '', content.size, content.sha256, () => made.id);
        },
      },
      () => ok(this.url, Ops.FileAdd, this.ctx.session, { name, ext: name.split('.').pop() ?? '', size: content.size, dirid: parent, hash: content.sha256 }),
    );
    return Number(answer.files[0].id);
  }

  /** A folder with a subfolder and a few files in both, under `parent`. */
  async addBranch(parent: number): Promise<void> {
    const folder = await this.addFolder(parent, this.newName('folder'));
    const sub = await this.addFolder(folder, this.newName('sub'));
    for (let i = 0; i < 3; i++) await this.addFile(folder, this.newName('file', 'txt'), this.ctx.random.pick(this.contents));
    for (let i = 0; i < 2; i++) await this.addFile(sub, this.newName('file', 'txt'), this.ctx.random.pick(this.contents));
  }

  private static idsOf(items: readonly Item[], type: Item['type']): number[] {
    return items.filter((i) => i.type === type).map((i) => i.id);
  }

  private static ids(items: readonly Item[], type: Item['type']): string {
    return TreeClient.idsOf(items, type).join(',');
  }

  async remove(items: readonly Item[], isReal: 0 | 1): Promise<Answer> {
    return this.ledger.change(
      {
        describe: `FolderAndFileDelete is_real=${isReal} ${items.map((i) => keyOf(i.type, i.id)).join(' ')}`,
        apply: (model) => (isReal === 1 ? model.deleteForGood : model.toBin).call(model, TreeClient.idsOf(items, 'folder'), TreeClient.idsOf(items, 'file')),
      },
      () => ok(this.url, Ops.FolderAndFileDelete, this.ctx.session, { dirids: TreeClient.ids(items, 'folder'), fids: TreeClient.ids(items, 'file'), is_real: isReal }),
    );
  }

  async restore(entries: readonly Item[]): Promise<Answer> {
    return this.ledger.change(
      {
        describe: `FolderAndFileRestore ${entries.map((i) => keyOf(i.type, i.id)).join(' ')}`,
        apply: (model) => model.restore(TreeClient.idsOf(entries, 'folder'), TreeClient.idsOf(entries, 'file')),
      },
      () => ok(this.url, Ops.FolderAndFileRestore, this.ctx.session, { dirids: TreeClient.ids(entries, 'folder'), fids: TreeClient.ids(entries, 'file') }),
    );
  }

  async move(items: readonly Item[], todir: number): Promise<Answer> {
    return this.ledger.change(
      {
        describe: `Move ${items.map((i) => keyOf(i.type, i.id)).join(' ')} to ${todir}`,
        apply: (model) => model.move(TreeClient.idsOf(items, 'folder'), TreeClient.idsOf(items, 'file'), todir),
      },
      () => ok(this.url, Ops.Move, this.ctx.session, { dirids: TreeClient.ids(items, 'folder'), fids: TreeClient.ids(items, 'file'), todir }),
    );
  }

  // ---- What rounds pick from -----------------------------------------------------------------

  /** Whether an item is one of the kept originals or beneath them. */
  private kept(item: Item): boolean {
    if (item.type === 'folder' && this.keep.has(item.id)) return true;
    let parent = item.parent;
    while (parent !== 0) {
      if (this.keep.has(parent)) return true;
      parent = this.ledger.committed.get(keyOf('folder', parent))?.parent ?? 0;
    }
    return false;
  }

  liveItems(): Item[] {
    return [...this.ledger.committed.values()].filter((item) => isLive(item) && !this.kept(item));
  }

  liveFolders(): number[] {
    return [0, ...this.liveItems().filter((i) => i.type === 'folder').map((i) => i.id)];
  }

  /** The ids of every folder beneath a folder. */
  subfolders(folderId: number): number[] {
    return beneath(this.ledger.committed, folderId)
      .filter((i) => i.type === 'folder')
      .map((i) => i.id);
  }

  entries(): Item[] {
    return [...this.ledger.committed.values()].filter((item) => item.place === 'entry');
  }

  /** Up to `count` distinct items, none beneath another of them (an id list the server takes as it is). */
  pickUnrelated(items: readonly Item[], count: number): Item[] {
    const chosen: Item[] = [];
    for (const candidate of [...items].sort(() => this.ctx.random.next() - 0.5)) {
      if (chosen.length >= count) break;
      const related = chosen.some(
        (c) =>
          (c.type === 'folder' && beneath(this.ledger.committed, c.id).some((b) => b.type === candidate.type && b.id === candidate.id)) ||
          (candidate.type === 'folder' && beneath(this.ledger.committed, candidate.id).some((b) => b.type === c.type && b.id === c.id)),
      );
      if (!related) chosen.push(candidate);
    }
    return chosen;
  }

  // ---- After a restart -------------------------------------------------------------------------

  /**
   * The ledger check: the tree is exactly what was acknowledged (with the call under way wholly or
   * not at all); every blob hashes to its file's SHA-256; the listings agree; a sample downloads
   * to the byte.
   */
  async verify(): Promise<{ unacknowledged: string | null; happened: boolean }> {
    const settled = this.ledger.settle();
    checkPlaintextBlobs(this.ctx.dataDir, this.ctx.account.id);
    const tree = this.ledger.committed;
    const root = await ok(this.url, Ops.GetFiles, this.ctx.session, { dir: '0', order: 'name', desc: '0' });
    const listed = [...root.folders.map((f) => `folder:${f.id}`), ...root.files.map((f) => `file:${f.id}`)].sort();
    const expected = [...tree.values()].filter((i) => isLive(i) && i.parent === 0).map((i) => keyOf(i.type, i.id)).sort();
    if (JSON.stringify(listed) !== JSON.stringify(expected)) throw new Error(`the root lists ${listed.join(' ')}, the ledger says ${expected.join(' ')}`);
    const bin = await ok(this.url, Ops.GetRecycleFiles, this.ctx.session, { order: 'name', desc: '0' });
    const inBin = [...bin.folders.map((f) => `folder:${f.id}`), ...bin.files.map((f) => `file:${f.id}`)].sort();
    const entries = this.entries().map((i) => keyOf(i.type, i.id)).sort();
    if (JSON.stringify(inBin) !== JSON.stringify(entries)) throw new Error(`the bin lists ${inBin.join(' ')}, the ledger says ${entries.join(' ')}`);
    // Files beneath encrypted folders need an Unlock: the encryption scenario downloads those itself.
    const files = [...tree.values()].filter((i) => i.type === 'file' && isLive(i) && !i.encrypted && !tree.get(keyOf('folder', i.parent))?.encrypted);
    for (let i = 0; i < Math.min(2, files.length); i++) {
      const file = this.ctx.random.pick(files);
      const got = await download(this.url, this.ctx.session, file.id);
      if (got.status !== 200 || got.sha256 !== file.sha256 || got.size !== file.size) throw new Error(`file ${file.id} downloads as ${JSON.stringify(got)}, not ${file.size} bytes of ${file.sha256}`);
    }
    return settled;
  }
}
