/**
 * The populated database the service figures are taken on, built once and cached under
 * .tmp/bench-cache/<key>/ (the key covers the schema, the name keys and the dataset's version, so a
 * new migration or a change to how names are keyed builds it again).
 *
 * What it holds is what the service itself would have written: the accounts are made by the
 * accounts operation (scrypt password hashes), the content by the content store (real blobs under
 * storage keys, with their rows), and the folders and files are rows of the service's own tables
 * with the keys the operations compute (name_key = nameKey, sort_key = naturalSortKey, ext =
 * extensionOf), inserted through the schema the migrations made, so its triggers maintain the
 * FileSearch index (files_name_search) exactly as FileAdd's inserts do. Folder sizes and used
 * bytes are set to the totals of the files beneath. `fss fsck` must then find no problem: it is run
 * on every new cache, and its verdict is kept in the manifest.
 *
 * Only the bulk inserts bypass the operations: a million FileAdd calls would take hours.
 *
 * Accounts:
 * - `bench`: ten folders of 100 items, one of 1,000 and one of 100,000 (GetFiles), a tree of 100,000 descendants
 *   (delete and restore), and two empty folders for the content figures.
 * - `search`: 1,000,000 files in 10,000 folders (FileSearch).
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { loadConfig } from '../server/src/config';
import { createAccount } from '../server/src/operations/accounts/accounts';
import { passwordHashQueue } from '../server/src/operations/crypto/hash-queue';
import { callCaches } from '../server/src/operations/caches';
import { extensionOf, nameKey, naturalSortKey } from '../server/src/operations/tree/names';
import { contentStoreFor } from '../server/src/storage/content/stores';
import { closeDatabase, openDatabase, SQLITE_FILE_NAME } from '../server/src/storage/db/engine/database';
import { loadServerSecret } from '../server/src/storage/secret';
import { CACHE_DIR, FSS_BIN, ROOT, log, run, seededRandom } from './util';

/** Bump when what is generated changes. */
const DATASET_VERSION = 3;

export const PASSWORD = 'bench-password-1';
export const BENCH_ACCOUNT = 'bench';
export const SEARCH_ACCOUNT = 'search';

export type KeywordKind = 'rare' | 'phrase' | 'common' | 'date' | 'none' | 'short';

export interface Keyword {
  readonly keyword: string;
  readonly kind: KeywordKind;
}

export interface Manifest {
  readonly key: string;
  readonly builtAt: string;
  readonly buildSeconds: number;
  readonly fsck: string;
  readonly bench: {
    readonly uid: number;
    readonly list100: number;
    /** Ten folders of 100 items (list100 first), for the varied workload. */
    readonly lists100: readonly number[];
    readonly list1000: number;
    readonly list100k: number;
    readonly tree100k: number;
    readonly treeDescendants: number;
    readonly uploads: number;
    readonly encrypted: number;
  };
  readonly search: {
    readonly uid: number;
    readonly files: number;
    readonly folders: number;
    readonly keywords: readonly Keyword[];
  };
  readonly totals: { readonly folders: number; readonly files: number; readonly sqliteBytes: number };
}

export interface Dataset {
  /** The cached data folder: copy it before running a service on it. */
  readonly dataDir: string;
  readonly manifest: Manifest;
}

// ---- names ------------------------------------------------------------------------------------

const WORDS = [
  'report', 'invoice', 'budget', 'meeting', 'notes', 'photo', 'scan', 'contract', 'draft', 'final',
  'summary', 'slides', 'design', 'mockup', 'backup', 'export', 'data', 'analysis', 'plan', 'proposal',
  'receipt', 'statement', 'letter', 'resume', 'thesis', 'chapter', 'lecture', 'homework', 'project',
  'roadmap', 'spec', 'minutes', 'agenda', 'schedule', 'travel', 'holiday', 'family', 'wedding',
  'birthday', 'video', 'recording', 'podcast', 'track', 'album', 'screenshot', 'diagram', 'chart',
  'Quarterly', 'Annual', 'Client', 'Team', 'Sales', 'Marketing', 'Finance', 'HR', 'Legal', 'IMG',
  'DSC', 'Scan', 'Copy',
];
const CJK_WORDS = ['报告', '会议纪要', '合同', '发票', '照片', '预算', '总结', '计划', '方案', '项目', '季度', '客户'];
const EXTS = ['pdf', 'docx', 'xlsx', 'pptx', 'jpg', 'jpeg', 'png', 'mp4', 'txt', 'zip', 'csv', 'md', 'heic', 'mov'];
const FIRST_YEAR = 2019;
const YEARS = 8;

function word(rand: () => number): string {
  return rand() < 0.15 ? CJK_WORDS[Math.floor(rand() * CJK_WORDS.length)] : WORDS[Math.floor(rand() * WORDS.length)];
}

/** "invoice draft 2021-07 004213.pdf": unique by its sequence number. */
function fileName(rand: () => number, seq: number): string {
  const year = FIRST_YEAR + Math.floor(rand() * YEARS);
  const month = 1 + Math.floor(rand() * 12);
  const ext = EXTS[Math.floor(rand() * EXTS.length)];
  return `${word(rand)} ${word(rand)} ${year}-${String(month).padStart(2, '0')} ${String(seq).padStart(6, '0')}.${ext}`;
}

// ---- the cache --------------------------------------------------------------------------------

/** Hash of what decides the database's content: the migrations, the name keys, this version. */
function cacheKey(): string {
  const hash = createHash('sha256').update(`dataset ${DATASET_VERSION}\n`);
  const migrations = path.join(ROOT, 'server', 'src', 'storage', 'db', 'migrations');
  for (const name of readdirSync(migrations).sort()) hash.update(name).update(readFileSync(path.join(migrations, name)));
  hash.update(readFileSync(path.join(ROOT, 'server', 'src', 'operations', 'tree', 'names.ts')));
  return hash.digest('hex').slice(0, 16);
}

export async function ensureDataset(): Promise<Dataset> {
  const key = cacheKey();
  const dir = path.join(CACHE_DIR, key);
  const manifestFile = path.join(dir, 'manifest.json');
  if (existsSync(manifestFile)) {
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as Manifest;
    log(`populated database: cached (${path.relative(ROOT, dir)}, built ${manifest.builtAt})`);
    return { dataDir: path.join(dir, 'data'), manifest };
  }
  log(`populated database: building ${path.relative(ROOT, dir)} (1,200,000 files; a few minutes, once)`);
  const building = `${dir}.building-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  const started = performance.now();
  const partial = await build(path.join(building, 'data'));
  log('populated database: fss fsck');
  const fsck = (await run(process.execPath, [FSS_BIN, 'fsck'], { cwd: ROOT, env: { ...process.env, FSS_DATA_DIR: path.join(building, 'data') } })).trim();
  if (!/fsck: no problems/.test(fsck)) throw new Error(`the populated database does not pass fsck:\n${fsck}`);
  const sqliteBytes = statSync(path.join(building, 'data', SQLITE_FILE_NAME)).size;
  // fsck passes on an empty database too (one it created itself, if the folder went away): check
  // that the rows are there before caching them.
  const built = new SQLite(path.join(building, 'data', SQLITE_FILE_NAME), { readonly: true, fileMustExist: true });
  const files = (built.prepare('select count(*) as n from files').get() as { n: number }).n;
  built.close();
  if (files < partial.totals.files) throw new Error(`the populated database holds ${files} files, not ${partial.totals.files}: was its folder removed while building?`);
  const manifest: Manifest = {
    ...partial,
    totals: { ...partial.totals, sqliteBytes },
    key,
    builtAt: new Date().toISOString(),
    buildSeconds: Math.round((performance.now() - started) / 1000),
    fsck,
  };
  await writeFile(path.join(building, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  await rm(dir, { recursive: true, force: true });
  await rename(building, dir);
  // Databases of earlier schemas or datasets are of no further use. A build still running in
  // another process (another working copy's schema) is left alone: removing its folder under it
  // made it finish on an empty database (fsck creates one) and cache that.
  for (const name of readdirSync(CACHE_DIR)) {
    const match = /^[0-9a-f]{16}(?:\.building-(\d+))?$/.exec(name);
    if (!match || name === key || (match[1] !== undefined && processIsAlive(Number(match[1])))) continue;
    await rm(path.join(CACHE_DIR, name), { recursive: true, force: true });
  }
  log(`populated database: built in ${manifest.buildSeconds} s`);
  return { dataDir: path.join(dir, 'data'), manifest };
}

/** Whether process `pid` is running (signal 0 only checks; EPERM means it exists under another user). */
function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---- building ---------------------------------------------------------------------------------

interface ContentBlob {
  readonly id: number;
  readonly size: number;
  readonly sha256: string;
}

/** Makes the data folder: accounts and content through the service's code, then the rows. */
async function build(dataDir: string): Promise<Omit<Manifest, 'key' | 'builtAt' | 'buildSeconds' | 'fsck'>> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const config = loadConfig({ FSS_DATA_DIR: dataDir });
  const db = await openDatabase(config);
  const services = { db, config, now: () => new Date(), secret: await loadServerSecret(config), passwordHashes: passwordHashQueue(config), caches: callCaches(config) };
  const bench = await createAccount(services, { name: BENCH_ACCOUNT, password: PASSWORD, quotaBytes: 2 ** 40 });
  const search = await createAccount(services, { name: SEARCH_ACCOUNT, password: PASSWORD, quotaBytes: 2 ** 40 });

  // 64 blobs from 200 B to 2 MB (log-uniform), stored as an upload's bytes are: a finished file
  // moved under a new key of the content store, then its row.
  const store = contentStoreFor(config);
  const rand = seededRandom(42);
  const blobs: ContentBlob[] = [];
  const tmp = path.join(dataDir, 'tmp');
  await mkdir(tmp, { recursive: true });
  for (let i = 0; i < 64; i++) {
    const size = Math.round(200 * Math.pow(10_000, rand()));
    const bytes = randomBytes(size);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const storageKey = store.newKey(sha256);
    const file = path.join(tmp, `blob-${i}`);
    await writeFile(file, bytes);
    await store.putFile(storageKey, file);
    const row = await db
      .insertInto('content')
      .values({ sha256, size, storage_key: storageKey, encrypted: 0, created_at: Date.now() })
      .returning('id')
      .executeTakeFirstOrThrow();
    blobs.push({ id: row.id, size, sha256 });
  }
  await closeDatabase(db);

  const sqlite = new SQLite(path.join(dataDir, SQLITE_FILE_NAME));
  try {
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = OFF');
    sqlite.pragma('cache_size = -262144');
    const writer = new TreeWriter(sqlite, blobs);

    const benchRand = seededRandom(1);
    const b = writer.account(bench.id, benchRand);
    const seq = { n: 0 };
    const fill = (parent: number, folders: number, filesPerFolder: number, files: number) => {
      for (let i = 0; i < folders; i++) {
        const sub = b.folder(parent, `Folder ${String(i + 1).padStart(4, '0')}`);
        for (let j = 0; j < filesPerFolder; j++) b.file(sub, fileName(benchRand, seq.n++));
      }
      for (let i = 0; i < files; i++) b.file(parent, fileName(benchRand, seq.n++));
    };
    let list100 = 0;
    let list1000 = 0;
    let list100k = 0;
    let tree100k = 0;
    const lists100: number[] = [];
    writer.transaction(() => {
      list100 = b.folder(0, 'Hundred');
      fill(list100, 10, 5, 90);
      list1000 = b.folder(0, 'Thousand');
      fill(list1000, 50, 5, 950);
      list100k = b.folder(0, 'Hundred thousand');
      fill(list100k, 1_000, 1, 99_000);
      tree100k = b.folder(0, 'Tree');
      fill(tree100k, 100, 999, 0);
      for (let i = 2; i <= 10; i++) {
        const folder = b.folder(0, `Hundred ${i}`);
        fill(folder, 10, 5, 90);
        lists100.push(folder);
      }
    });
    const uploads = b.folder(0, 'Uploads');
    const encrypted = b.folder(0, 'Encrypted');
    b.finish();

    // 1,000,000 files in 10,000 folders: 100 top folders of 99 subfolders each, 100 files in each.
    const searchRand = seededRandom(2);
    const s = writer.account(search.id, searchRand);
    let n = 0;
    log('populated database: 1,000,000 files of the search account');
    for (let top = 0; top < 100; top++) {
      writer.transaction(() => {
        const topId = s.folder(0, `Archive ${String(top + 1).padStart(3, '0')}`);
        const folders = [topId];
        for (let sub = 0; sub < 99; sub++) folders.push(s.folder(topId, `${word(searchRand)} ${String(sub + 1).padStart(2, '0')}`));
        for (const folder of folders) for (let i = 0; i < 100; i++) s.file(folder, fileName(searchRand, n++));
      });
    }
    s.finish();

    const keywords = searchKeywords(seededRandom(3), n);
    sqlite.pragma('optimize');
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
    const totals = writer.totals;
    return {
      bench: { uid: bench.id, list100, lists100: [list100, ...lists100], list1000, list100k, tree100k, treeDescendants: 100 * 1_000, uploads, encrypted },
      search: { uid: search.id, files: n, folders: 10_000, keywords },
      totals: { ...totals, sqliteBytes: 0 },
    };
  } finally {
    sqlite.close();
  }
}

/**
 * The keywords FileSearch is measured with, by kind (bench/README.md says why each is there):
 * rare (one hit: a file's number), phrase (two words: about 200 hits), common (one word, more than
 * 1,000 hits: truncated), date ("2021-07": truncated), none (3 or more characters, no hit), short (1
 * or 2 characters: the scan path; two of them match nothing, so the whole account is read).
 */
function searchKeywords(rand: () => number, files: number): Keyword[] {
  const out: Keyword[] = [];
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)];
  for (let i = 0; i < 8; i++) out.push({ keyword: String(Math.floor(rand() * files)).padStart(6, '0'), kind: 'rare' });
  for (let i = 0; i < 6; i++) out.push({ keyword: `${pick(WORDS).toLowerCase()} ${pick(WORDS).toLowerCase()}`, kind: 'phrase' });
  for (const w of ['report', 'Invoice', 'photo', 'meeting', '会议纪要', 'pdf']) out.push({ keyword: w, kind: 'common' });
  for (const d of ['2021-07', '2024-12', '2019-01']) out.push({ keyword: d, kind: 'date' });
  for (const w of ['xylophone', 'zebra budget', 'qqq']) out.push({ keyword: w, kind: 'none' });
  for (const w of ['报告', 'a', 'q7', 'zx']) out.push({ keyword: w, kind: 'short' });
  return out;
}

/** About three years over the 1.2 million rows (the mean step between two rows). */
const CLOCK_STEP_MS = 75_000;

/** Inserts folders and files as rows, and keeps the totals that folder sizes and used bytes need. */
class TreeWriter {
  private readonly insertFolder: SQLite.Statement;
  private readonly insertFile: SQLite.Statement;
  private readonly setFolderSize: SQLite.Statement;
  private readonly setUsed: SQLite.Statement;
  readonly totals = { folders: 0, files: 0 };
  /** The time of the last row inserted (epoch ms). */
  clock = Date.UTC(2023, 0, 1);

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly blobs: readonly ContentBlob[],
  ) {
    this.insertFolder = sqlite.prepare(
      'insert into folders (account_id, parent_id, name, name_key, sort_key, size, created_at, updated_at) values (?, ?, ?, ?, ?, 0, ?, ?)',
    );
    this.insertFile = sqlite.prepare(
      'insert into files (account_id, folder_id, name, name_key, sort_key, size, created_at, updated_at, ext, sha256, content_id) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.setFolderSize = sqlite.prepare('update folders set size = ? where id = ?');
    this.setUsed = sqlite.prepare('update accounts set used_bytes = ? where id = ?');
  }

  transaction(work: () => void): void {
    this.sqlite.transaction(work)();
  }

  account(accountId: number, rand: () => number) {
    const parents = new Map<number, number>();
    const sizes = new Map<number, number>();
    let used = 0;
    const writer = this;
    // Times as the service writes them: each row stamped when it is inserted, so that ids and
    // created_at grow together (as FileAdd's and FolderAdd's do), over the three years up to 2026.
    const time = () => (writer.clock += Math.floor(1 + rand() * 2 * CLOCK_STEP_MS));
    return {
      folder(parent: number, name: string): number {
        const t = time();
        const id = Number(writer.insertFolder.run(accountId, parent, name, nameKey(name), naturalSortKey(name), t, t).lastInsertRowid);
        parents.set(id, parent);
        sizes.set(id, 0);
        writer.totals.folders++;
        return id;
      },
      file(folder: number, name: string): number {
        const blob = writer.blobs[Math.floor(rand() * writer.blobs.length)];
        const t = time();
        const id = Number(
          writer.insertFile.run(accountId, folder, name, nameKey(name), naturalSortKey(name), blob.size, t, t, extensionOf(name), blob.sha256, blob.id)
            .lastInsertRowid,
        );
        for (let f = folder; f !== 0; f = parents.get(f) ?? 0) sizes.set(f, (sizes.get(f) ?? 0) + blob.size);
        used += blob.size;
        writer.totals.files++;
        return id;
      },
      finish(): void {
        writer.transaction(() => {
          for (const [id, size] of sizes) writer.setFolderSize.run(size, id);
          writer.setUsed.run(used, accountId);
        });
      },
    };
  }
}
