/**
 * One client of the load test: logged in to an account (its own, or one it shares with other
 * clients), it picks an operation at random, calls it, and counts the answer, until the time is up.
 *
 * Items come from what the client made and from the listings it read, so clients that share an
 * account work on each other's items: a file another client has just moved to the bin answers 404,
 * two clients adding one folder name at once get 0 and 409. Those are the expected business codes
 * (EXPECTED_CODES); anything else (400, 401, 403, 5xx, a broken connection) is an error.
 *
 * The client's ledger: every FileAdd answered 0 (id, SHA-256), and every file named in a permanent
 * delete answered 0. Folders are only ever moved to the bin, and files deleted for good one by one
 * (fids), so at the end every file added is there (live or in the bin, with its bytes) unless an
 * acknowledged permanent delete named it.
 */
import type { Random } from '../budget';
import { bytesOf, call, fetchSha256, Ops, upload, type Answer, type Session } from '../crash/client';

/** Codes a call may answer under contention, besides 0. */
export const EXPECTED_CODES = new Set(['0', '404', '409']);

export interface LoadTally {
  /** Calls per operation. */
  readonly calls: Map<string, number>;
  /** Answers per operation and code, e.g. "Move 409". */
  readonly codes: Map<string, number>;
  /** Unexpected answers, described. */
  readonly errors: string[];
  /** Files added (id → SHA-256 and size), per account. */
  readonly added: Map<number, { sha256: string; size: number; account: number }>;
  /** Files deleted for good by an acknowledged call. */
  readonly purged: Set<number>;
}

export function newTally(): LoadTally {
  return { calls: new Map(), codes: new Map(), errors: [], added: new Map(), purged: new Set() };
}

const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

type Item = { readonly id: number; readonly type: 'folder' | 'file' };

export class LoadClient {
  private readonly folders = new Set<number>([0]);
  private readonly files = new Map<number, string>();
  private readonly binned: Item[] = [];
  private uploads = 0;

  constructor(
    private readonly url: string,
    private readonly session: Session,
    private readonly accountId: number,
    private readonly name: string,
    private readonly random: Random,
    private readonly tally: LoadTally,
    /** Whether other clients work in the same account (then some names are shared on purpose). */
    private readonly shared: boolean,
  ) {}

  async run(until: number): Promise<void> {
    while (performance.now() < until) {
      const operations: Array<[number, () => Promise<void>]> = [
        [22, () => this.list()],
        [5, () => this.search()],
        [6, () => this.addFolder()],
        [12, () => this.uploadFile()],
        [5, () => this.rename()],
        [8, () => this.move()],
        [9, () => this.remove()],
        [6, () => this.restore()],
        [4, () => this.share()],
        [12, () => this.download()],
        [5, () => this.listBin()],
        [2, () => this.listShares()],
      ];
      let roll = this.random.next() * operations.reduce((n, [w]) => n + w, 0);
      for (const [weight, operation] of operations) {
        roll -= weight;
        if (roll < 0) {
          await operation();
          break;
        }
      }
    }
  }

  /** A call, counted; its answer if it came back with an expected code, else null (and an error). */
  private async count(operation: keyof typeof Ops, params: Parameters<typeof call>[3]): Promise<Answer | null> {
    bump(this.tally.calls, operation);
    let answer: Answer;
    try {
      answer = await call(this.url, Ops[operation], this.session, params);
    } catch (error) {
      this.tally.errors.push(`${this.name} ${operation}: ${(error as Error).message}`);
      return null;
    }
    bump(this.tally.codes, `${operation} ${answer.result.code}`);
    if (!EXPECTED_CODES.has(answer.result.code)) {
      this.tally.errors.push(`${this.name} ${operation}(${JSON.stringify(params)}): HTTP ${answer.status} ${JSON.stringify(answer.result)}`);
      return null;
    }
    return answer;
  }

  private pickFolder(): number {
    return this.random.pick([...this.folders]);
  }

  /** Learns the items of a listing (other clients' too, in a shared account). */
  private learn(answer: Answer): void {
    for (const f of answer.folders) this.folders.add(Number(f.id));
    for (const f of answer.files) this.files.set(Number(f.id), f.hash);
  }

  private async list(): Promise<void> {
    const dir = this.pickFolder();
    const answer = await this.count('GetFiles', { dir: String(dir), order: this.random.pick(['name', 'time', 'size']), desc: this.random.pick(['0', '1']) });
    if (!answer) return;
    if (answer.result.code === '404') this.folders.delete(dir);
    else this.learn(answer);
  }

  private async search(): Promise<void> {
    await this.count('FileSearch', { order: 'name', desc: '0', keyword: this.random.pick(['file', 'up', 'load', `${this.uploads % 10}`]) });
  }

  private async addFolder(): Promise<void> {
    // In a shared account a third of the names come from a small common set: clients race on them.
    const name = this.shared && this.random.chance(0.33) ? `common ${this.random.int(1, 5)}` : `${this.name} folder ${this.random.int(1, 1e9)}`;
    const answer = await this.count('FolderAdd', { dirid: this.pickFolder(), name });
    if (answer?.result.code === '0') this.folders.add(Number(answer.folders[0].id));
  }

  private async uploadFile(): Promise<void> {
    const n = ++this.uploads;
    const bytes = bytesOf(`${this.name} upload ${n}`, this.random.int(1, 16 * 1024));
    bump(this.tally.calls, 'upload');
    let sha256: string;
    try {
      ({ sha256 } = await upload(this.url, this.session, bytes, 64 * 1024));
    } catch (error) {
      this.tally.errors.push(`${this.name} upload: ${(error as Error).message}`);
      return;
    }
    const name = `${this.name} upload ${n}.bin`;
    const answer = await this.count('FileAdd', { name, ext: 'bin', size: bytes.length, dirid: this.pickFolder(), hash: sha256 });
    if (answer?.result.code === '0') {
      const id = Number(answer.files[0].id);
      this.files.set(id, sha256);
      this.tally.added.set(id, { sha256, size: bytes.length, account: this.accountId });
    }
  }

  private pickItems(): Item[] {
    const items: Item[] = [];
    const count = this.random.int(1, 2);
    for (let i = 0; i < count; i++) {
      if (this.random.chance(0.5) && this.folders.size > 1) items.push({ type: 'folder', id: this.random.pick([...this.folders].filter((id) => id !== 0)) });
      else if (this.files.size > 0) items.push({ type: 'file', id: this.random.pick([...this.files.keys()]) });
    }
    return items.filter((item, i) => items.findIndex((o) => o.type === item.type && o.id === item.id) === i);
  }

  private static lists(items: readonly Item[]) {
    return {
      dirids: items.filter((i) => i.type === 'folder').map((i) => i.id).join(','),
      fids: items.filter((i) => i.type === 'file').map((i) => i.id).join(','),
    };
  }

  private async rename(): Promise<void> {
    if (this.files.size === 0) return;
    const fid = this.random.pick([...this.files.keys()]);
    await this.count('FileRename', { fid, newname: `${this.name} renamed ${this.random.int(1, 1e9)}.bin` });
  }

  private async move(): Promise<void> {
    const items = this.pickItems();
    if (items.length === 0) return;
    await this.count('Move', { ...LoadClient.lists(items), todir: this.pickFolder() });
  }

  private async remove(): Promise<void> {
    // Files alone may go for good; folders only to the bin (see the ledger above).
    if (this.random.chance(0.25) && this.files.size > 0) {
      const fid = this.random.pick([...this.files.keys()]);
      const answer = await this.count('FolderAndFileDelete', { dirids: '', fids: String(fid), is_real: 1 });
      if (answer?.result.code === '0') this.tally.purged.add(fid);
      this.files.delete(fid);
      return;
    }
    const items = this.pickItems();
    if (items.length === 0) return;
    const answer = await this.count('FolderAndFileDelete', { ...LoadClient.lists(items), is_real: 0 });
    if (answer?.result.code === '0') {
      this.binned.push(...items);
      for (const item of items) if (item.type === 'folder') this.folders.delete(item.id);
    }
  }

  private async restore(): Promise<void> {
    if (this.binned.length === 0) return;
    const item = this.binned.splice(this.random.int(0, this.binned.length - 1), 1)[0];
    const answer = await this.count('FolderAndFileRestore', { dirids: item.type === 'folder' ? String(item.id) : '', fids: item.type === 'file' ? String(item.id) : '' });
    if (answer?.result.code === '0') this.learn(answer);
  }

  private async share(): Promise<void> {
    if (this.files.size === 0) return;
    await this.count('FileShare', { fids: String(this.random.pick([...this.files.keys()])), downpwd: '', downValue: 0, description: '' });
  }

  private async download(): Promise<void> {
    if (this.files.size === 0) return;
    const fid = this.random.pick([...this.files.keys()]);
    const answer = await this.count('FileDownload', { fid });
    if (answer?.result.code !== '0') return;
    bump(this.tally.calls, 'download GET');
    try {
      const got = await fetchSha256(answer.result.url);
      // 404 when the file went to the bin between the two requests.
      bump(this.tally.codes, `download GET ${got.status}`);
      if (got.status === 200 && got.sha256 !== this.files.get(fid)) this.tally.errors.push(`${this.name} download of file ${fid}: SHA-256 ${got.sha256}, expected ${this.files.get(fid)}`);
      else if (got.status !== 200 && got.status !== 404) this.tally.errors.push(`${this.name} download of file ${fid}: HTTP ${got.status}`);
    } catch (error) {
      this.tally.errors.push(`${this.name} download GET: ${(error as Error).message}`);
    }
  }

  private async listBin(): Promise<void> {
    await this.count('GetRecycleFiles', { order: 'time', desc: '1' });
  }

  private async listShares(): Promise<void> {
    await this.count('GetShareFiles', { order: 'name', desc: '0' });
  }
}

