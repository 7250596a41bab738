/**
 * Crash safety of uploads and of the recycle bin (DECISIONS.md §6, §8; docs/uploads-and-downloads.md
 * §3): the real service (`node bin/fss.mjs serve`) is killed with SIGKILL in the middle of work,
 * started again on the same data folder, and `fss fsck` must find the database and the content
 * store in agreement: no record pointing at missing content, no content removed that a record
 * references, no counter off. Then the work is finished and checked to the byte.
 *
 * 1. During an upload: one PATCH of a 48 MiB upload streams from a generator and the server dies
 *    mid-body; after a restart the client HEADs, resumes from the offset reached (what was synced
 *    before the kill), and the stored file (FileAdd, FileDownload) has exactly the bytes generated.
 * 2. During a permanent delete (is_real=1) of a folder of ~20,000 files, at several moments spread
 *    over the time a full delete takes: the folder is whole or gone, never half; content still
 *    referenced keeps its bytes; once removal has run, no orphan bytes are left.
 * 3. During a move of that folder to the bin (is_real=0): the folder is live with all its files or
 *    in the bin with all its files.
 * 4. During RecycleEmpty of that folder, which deletes in steps of their own (each committed): what
 *    is left is in the bin, beneath the folder, whole: it comes back by a restore with every size
 *    right, and RecycleEmpty again deletes it, with no byte left over.
 *
 * The big tree is built once: through the service (account, folders, uploads, FileAdd) and then by
 * inserting rows into the stopped service's SQLite file in one transaction, with `fss fsck
 * --repair` setting the counters; every run works on a copy of that folder.
 */
import { createCipheriv, createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, type OperationSpec, type ServiceName } from '../../src/catalog/operations';
import { nameKey, naturalSortKey } from '../../src/operations/tree/names';
import { signRequest } from '../../src/operations/accounts/signing';
import { element } from '../helpers/app-server';
import { callInForm, resultXml, send, type Value } from '../helpers/requests';
import { fsck, killAllServices, runFss, startService, type FssResult, type ServiceProcess } from '../helpers/service-process';

const op = (service: ServiceName, name: string): OperationSpec => findOperation(service, name)!;
const Login = op('OAuthService', 'Login');
const FolderAdd = op('FileService', 'FolderAdd');
const FileAdd = op('FileService', 'FileAdd');
const FileDownload = op('FileService', 'FileDownload');
const FolderAndFileDelete = op('FileService', 'FolderAndFileDelete');
const FolderAndFileRestore = op('FileService', 'FolderAndFileRestore');
const GetFiles = op('UserService', 'GetFiles');
const GetRecycleFiles = op('UserService', 'GetRecycleFiles');
const RecycleEmpty = op('FileService', 'RecycleEmpty');

const KiB = 1024;
const MiB = 1024 * KiB;
const ACCOUNT = 'crash';
const PASSWORD = 'crash-password-1';

let workDir: string;
/** What each crash run ended in, printed at the end. */
const outcomes: string[] = [];

beforeAll(async () => {
  workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fss-kill9-'));
});
afterEach(async () => {
  await killAllServices();
});
afterAll(async () => {
  await killAllServices();
  if (workDir) await fs.rm(workDir, { recursive: true, force: true });
  if (outcomes.length > 0) console.log(`kill -9 runs:\n  ${outcomes.join('\n  ')}`);
});

let dirCount = 0;
async function newDataDir(name: string): Promise<string> {
  const dir = path.join(workDir, `${++dirCount}-${name}`);
  await fs.mkdir(dir, { recursive: true });
  return dir;
}

// ---- Deterministic content ---------------------------------------------------------------------

/**
 * Byte `p` of stream `seed` is byte p % 16 of block p / 16 of the AES-128-CTR keystream under a fixed
 * key: any range can be generated on its own, so an upload resumes from any offset without the
 * test ever holding the whole content.
 */
function generated(seed: number, offset: number, length: number): Buffer {
  const key = createHash('sha256').update(`fss kill -9 test stream ${seed}`).digest().subarray(0, 16);
  const iv = Buffer.alloc(16);
  iv.writeBigUInt64BE(BigInt(Math.floor(offset / 16)), 8);
  const skip = offset % 16;
  return createCipheriv('aes-128-ctr', key, iv).update(Buffer.alloc(skip + length)).subarray(skip);
}

/** SHA-256 of stream `seed`'s first `length` bytes, generated a MiB at a time. */
function sha256OfGenerated(seed: number, length: number): string {
  const hash = createHash('sha256');
  for (let at = 0; at < length; at += MiB) hash.update(generated(seed, at, Math.min(MiB, length - at)));
  return hash.digest('hex');
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// ---- Calls -------------------------------------------------------------------------------------

interface Session {
  readonly uid: number;
  readonly token: string;
  readonly key: string;
}

async function login(url: string): Promise<Session> {
  const answer = await callInForm(url, 'post', Login, { uid: ACCOUNT, pwd: PASSWORD });
  const token = element(resultXml(answer, Login), 'token');
  if (!token || token.text === '0') throw new Error(`login failed: ${answer.status} ${answer.body}`);
  return { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key };
}

/** The attributes of every element `name` in the answer (items are empty elements). */
function all(xml: string, name: string): Array<Record<string, string>> {
  return [...xml.matchAll(new RegExp(`<${name}((?:\\s+[\\w:]+="[^"]*")*)\\s*/>`, 'g'))].map((m) => element(`<${name}${m[1]}/>`, name)!.attrs);
}

interface Answer {
  readonly status: number;
  readonly result: Record<string, string>;
  readonly folders: Array<Record<string, string>>;
  readonly files: Array<Record<string, string>>;
}

/** A signed call in the HTTP POST form, the way a client signs it (operations/accounts/signing.ts). */
async function call(url: string, operation: OperationSpec, session: Session, params: Record<string, Value>): Promise<Answer> {
  const values: Record<string, Value> = { uid: session.uid, token: session.token, ...params };
  const text: Record<string, string> = {};
  for (const p of operation.params) if (p.name !== 'sign') text[p.name] = values[p.name] === undefined || values[p.name] === null ? '' : String(values[p.name]);
  values.sign = signRequest(session.key, operation.name, text);
  const answer = await callInForm(url, 'post', operation, values);
  const xml = resultXml(answer, operation);
  const result = /<result((?:\s+[\w:]+="[^"]*")*)\s*\/?>/.exec(xml);
  if (!result) throw new Error(`${operation.name}: no <result> in ${answer.status} ${answer.body.slice(0, 500)}`);
  return { status: answer.status, result: element(`<result${result[1]}/>`, 'result')!.attrs, folders: all(xml, 'folder'), files: all(xml, 'file') };
}

async function ok(url: string, operation: OperationSpec, session: Session, params: Record<string, Value>): Promise<Answer> {
  const answer = await call(url, operation, session, params);
  if (answer.result.code !== '0') throw new Error(`${operation.name} answered ${JSON.stringify(answer.result)}`);
  return answer;
}

const tusHeaders = (session: Session) => ({ 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${session.token}` });

/** Creates a tus upload of `length` bytes; answers its path (/upload/<id>). */
async function createUpload(url: string, session: Session, length: number): Promise<string> {
  const created = await send(url, 'POST', '/upload/', { ...tusHeaders(session), 'Upload-Length': String(length) });
  expect(created.status).toBe(201);
  return new URL(String(created.headers.location), url).pathname;
}

/** A whole small upload in one PATCH; answers the Upload-SHA256. */
async function uploadSmall(url: string, session: Session, bytes: Buffer): Promise<string> {
  const location = await createUpload(url, session, bytes.length);
  const patched = await send(
    url,
    'PATCH',
    location,
    { ...tusHeaders(session), 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
    bytes,
  );
  expect(patched.status).toBe(204);
  return String(patched.headers['upload-sha256']);
}

interface StreamingPatch {
  /** Bytes handed to the connection so far. */
  sent(): number;
  /** The answer, or the error the connection ended with. */
  readonly answer: Promise<{ status: number; headers: http.IncomingHttpHeaders } | Error>;
  /** Settles once the body is written or the connection has failed. */
  readonly writing: Promise<void>;
}

/**
 * One PATCH of bytes [from, to) of stream `seed`, generated as they are sent (with backpressure: at
 * most a chunk or two in memory). After `slowAfter` bytes it sends 64 KiB every 5 ms, so that a
 * test can kill the server while the body is still arriving.
 */
function streamPatch(url: string, location: string, session: Session, seed: number, from: number, to: number, slowAfter = Infinity): StreamingPatch {
  let sent = 0;
  let failed = false;
  const req = http.request(new URL(location, url), {
    method: 'PATCH',
    headers: {
      ...tusHeaders(session),
      'Upload-Offset': String(from),
      'Content-Type': 'application/offset+octet-stream',
      'Content-Length': String(to - from),
    },
  });
  const closed = new Promise<void>((resolve) => req.once('close', () => resolve()));
  const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders } | Error>((resolve) => {
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      res.once('error', (error) => resolve(error));
    });
    req.once('error', (error) => {
      failed = true;
      resolve(error);
    });
  });
  const writing = (async () => {
    for (let at = from; at < to && !failed && !req.destroyed; ) {
      const slow = at - from >= slowAfter;
      const size = Math.min(slow ? 64 * KiB : MiB, to - at);
      const chunk = generated(seed, at, size);
      at += size;
      const flushed = req.write(chunk);
      sent += size;
      if (!flushed) await Promise.race([new Promise((resolve) => req.once('drain', resolve)), closed]);
      if (slow) await sleep(5);
    }
    if (!failed && !req.destroyed) req.end();
  })();
  return { sent: () => sent, answer, writing };
}

/** GETs a URL and hashes the body as it streams. */
function fetchSha256(url: string): Promise<{ status: number; size: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const hash = createHash('sha256');
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          hash.update(chunk);
          size += chunk.length;
        });
        res.once('end', () => resolve({ status: res.statusCode ?? 0, size, sha256: hash.digest('hex') }));
        res.once('error', reject);
      })
      .once('error', reject);
  });
}

/** What a file's FileDownload URL serves. */
async function download(url: string, session: Session, fileId: number | string) {
  const answer = await ok(url, FileDownload, session, { fid: fileId });
  return fetchSha256(answer.result.url);
}

// ---- Checks ------------------------------------------------------------------------------------

/** fsck found nothing: exit 0 and "fsck: no problems", and no problem listed. */
function expectClean(result: FssResult, when: string): void {
  expect(`${when}: fsck exit ${result.code}\n${result.stdout}${result.stderr}`).toBe(`${when}: fsck exit 0\nfsck: no problems\n`);
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000, everyMs = 10): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Reads the data folder's SQLite file (beside a running service, or after one). */
function withDb<T>(dataDir: string, work: (db: Database.Database) => T): T {
  const db = new Database(path.join(dataDir, 'fss.sqlite'), { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return work(db);
  } finally {
    db.close();
  }
}

/** Every blob in the content store (`content/ab/cd/<sha256>-<16 hex>`), as storage keys. */
async function blobsOnDisk(dataDir: string): Promise<Set<string>> {
  const keys = new Set<string>();
  const root = path.join(dataDir, 'content');
  if (!existsSync(root)) return keys;
  for (const a of await fs.readdir(root)) {
    if (!/^[0-9a-f]{2}$/.test(a)) continue;
    for (const b of await fs.readdir(path.join(root, a))) {
      for (const name of await fs.readdir(path.join(root, a, b))) keys.add(`${a}/${b}/${name}`);
    }
  }
  return keys;
}

/** The store holds exactly the blobs of content rows, and every content row is referenced. */
async function expectNoOrphanBytes(dataDir: string): Promise<void> {
  const { keys, unreferenced, queued } = withDb(dataDir, (db) => ({
    keys: new Set((db.prepare('select storage_key from content').all() as Array<{ storage_key: string }>).map((row) => row.storage_key)),
    unreferenced: db
      .prepare(
        `select id from content c where not exists (select 1 from files f where f.content_id = c.id)
           and not exists (select 1 from uploads u where u.content_id = c.id)`,
      )
      .all(),
    queued: db.prepare('select storage_key, due_at, started_at from content_removals').all(),
  }));
  expect(unreferenced).toEqual([]);
  expect(queued).toEqual([]);
  expect([...(await blobsOnDisk(dataDir))].sort()).toEqual([...keys].sort());
}

// ---- 1. An upload ----------------------------------------------------------------------------------

describe('kill -9 during an upload', () => {
  const TOTAL = 48 * MiB;
  const SEED = 1;

  it('leaves a consistent store and an upload that resumes from the offset reached to the exact bytes', { timeout: 60_000 }, async () => {
    const expected = sha256OfGenerated(SEED, TOTAL);
    const dataDir = await newDataDir('upload');
    expect((await runFss(dataDir, ['user', 'add', ACCOUNT, '--password', PASSWORD])).code).toBe(0);

    let server = await startService(dataDir);
    const session = await login(server.url);
    const location = await createUpload(server.url, session, TOTAL);
    const partial = path.join(dataDir, 'uploads', path.basename(location));

    // Full speed for 16 MiB, then slowly, and the kill comes once several MiB are synced: the
    // service records in `<id>.offset` what it has synced while a body arrives, and counts no more
    // than that after a crash (docs/uploads-and-downloads.md §3).
    const first = streamPatch(server.url, location, session, SEED, 0, TOTAL, 16 * MiB);
    const recorded = async () => (await fs.readFile(`${partial}.offset`).catch(() => Buffer.alloc(8))).readBigUInt64BE(0);
    await waitFor('16 MiB sent and 4 MiB of it synced', async () => first.sent() >= 16 * MiB && (await recorded()) >= 4 * MiB);
    await server.kill9();
    const cut = await first.answer;
    await first.writing;
    // Counted after the death: the server cannot have received more than was handed to the socket.
    const sentAtKill = first.sent();
    expect(cut, 'the PATCH must not have finished before the kill').toBeInstanceOf(Error);

    // As the crash left it, before anything recovers: no record without its bytes.
    expectClean(await fsck(dataDir), 'after the kill');

    server = await startService(dataDir);
    expectClean(await fsck(dataDir), 'after the restart');
    // The token outlives the process (sessions are in the database): the client resumes with it.
    const head = await send(server.url, 'HEAD', location, tusHeaders(session));
    expect(head.status).toBe(200);
    expect(head.headers['upload-length']).toBe(String(TOTAL));
    const offset = Number(head.headers['upload-offset']);
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(sentAtKill);
    expect(offset).toBeLessThan(TOTAL);

    const rest = streamPatch(server.url, location, session, SEED, offset, TOTAL);
    const done = await rest.answer;
    if (done instanceof Error) throw done;
    expect(done.status).toBe(204);
    expect(done.headers['upload-offset']).toBe(String(TOTAL));
    expect(done.headers['upload-sha256']).toBe(expected);

    const added = await ok(server.url, FileAdd, session, { name: 'resumed.bin', ext: 'bin', size: TOTAL, dirid: 0, hash: expected });
    expect(added.files[0]).toMatchObject({ name: 'resumed.bin', size: String(TOTAL), hash: expected });
    expect(await download(server.url, session, added.files[0].id)).toEqual({ status: 200, size: TOTAL, sha256: expected });

    await server.stop();
    expectClean(await fsck(dataDir), 'after the upload was finished');
    // The bytes left the upload folder for the store, once.
    expect(existsSync(partial)).toBe(false);
    const blobs = [...(await blobsOnDisk(dataDir))];
    expect(blobs.filter((key) => key.includes(expected))).toHaveLength(1);
    outcomes.push(`upload: killed after ${(sentAtKill / MiB).toFixed(1)} MiB sent; resumed from ${(offset / MiB).toFixed(2)} MiB; SHA-256 and download match`);
  });
});

// ---- The big tree ------------------------------------------------------------------------------------

const SUBFOLDERS = 20;
const FILES_PER_SUBFOLDER = 800;
const FILES_PER_DEEP_FOLDER = 200;
/** Content only the big folder references: uploaded (tus + FileAdd into it), and stored directly. */
const UPLOADED_INSIDE_ONLY = 20;
const STORED_INSIDE_ONLY = 600;

interface Tree {
  /** The folder with everything, ready to copy for each run. */
  readonly template: string;
  readonly bigId: number;
  /** Every folder in the big folder's subtree, itself first. */
  readonly folderIds: readonly number[];
  /** Every file beneath it. */
  readonly fileIds: readonly number[];
  /** Each folder of the subtree with what a listing of it must show. */
  readonly layout: ReadonlyArray<{ readonly id: number; readonly folders: number; readonly files: number }>;
  /** The file outside the big folder, and its content (also used by files inside). */
  readonly outsideFileId: number;
  readonly sharedContent: { readonly sha256: string; readonly size: number; readonly key: string };
  /** Storage keys of the content only the big folder references. */
  readonly insideOnlyKeys: readonly string[];
}

async function buildTree(): Promise<Tree> {
  const dataDir = await newDataDir('template');
  expect((await runFss(dataDir, ['user', 'add', ACCOUNT, '--password', PASSWORD])).code).toBe(0);
  const server = await startService(dataDir);
  const session = await login(server.url);

  const bigId = Number((await ok(server.url, FolderAdd, session, { dirid: 0, name: 'big' })).folders[0].id);
  const shared = generated(100, 0, 3000);
  const sharedHash = await uploadSmall(server.url, session, shared);
  const outside = await ok(server.url, FileAdd, session, { name: 'outside.bin', ext: 'bin', size: shared.length, dirid: 0, hash: sharedHash });
  const insideFileIds = [Number((await ok(server.url, FileAdd, session, { name: 'shared.bin', ext: 'bin', size: shared.length, dirid: bigId, hash: sharedHash })).files[0].id)];
  const insideHashes: string[] = [];
  for (let i = 0; i < UPLOADED_INSIDE_ONLY; i++) {
    const bytes = generated(200 + i, 0, 1000 + 97 * i);
    const hash = await uploadSmall(server.url, session, bytes);
    const added = await ok(server.url, FileAdd, session, { name: `only ${i}.bin`, ext: 'bin', size: bytes.length, dirid: bigId, hash });
    insideFileIds.push(Number(added.files[0].id));
    insideHashes.push(hash);
  }
  await server.stop();

  // More content, as the store lays it out (content/ab/cd/<sha256>-<16 hex>), for the rows below.
  const stored: Array<{ sha256: string; size: number; key: string }> = [];
  for (let i = 0; i < STORED_INSIDE_ONLY; i++) {
    const bytes = generated(1000 + i, 0, 64 + (i % 200));
    const hash = sha256(bytes);
    const key = `${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}-${createHash('sha256').update(`key ${i}`).digest('hex').slice(0, 16)}`;
    await fs.mkdir(path.dirname(path.join(dataDir, 'content', key)), { recursive: true });
    await fs.writeFile(path.join(dataDir, 'content', key), bytes);
    stored.push({ sha256: hash, size: bytes.length, key });
  }

  // The rest of the tree straight into the stopped service's database, in one transaction.
  const built = withDb(dataDir, (db) => {
    const accountId = (db.prepare('select id from accounts where name = ?').get(ACCOUNT) as { id: number }).id;
    const now = Date.now();
    const addContent = db.prepare('insert into content (sha256, size, storage_key, encrypted, created_at) values (?, ?, ?, 0, ?)');
    const addFolder = db.prepare(
      `insert into folders (account_id, parent_id, name, name_key, sort_key, size, created_at, updated_at)
       values (?, ?, ?, ?, ?, 0, ?, ?)`,
    );
    const addFile = db.prepare(
      `insert into files (account_id, folder_id, name, name_key, sort_key, size, created_at, updated_at, ext, sha256, content_id)
       values (?, ?, ?, ?, ?, ?, ?, ?, 'txt', ?, ?)`,
    );
    const folderIds = [bigId];
    const fileIds = [...insideFileIds];
    const layout: Array<{ id: number; folders: number; files: number }> = [{ id: bigId, folders: SUBFOLDERS, files: insideFileIds.length }];
    const folder = (parentId: number, name: string) => Number(addFolder.run(accountId, parentId, name, nameKey(name), naturalSortKey(name), now, now).lastInsertRowid);
    let pool: Array<{ id: number; sha256: string; size: number; storage_key: string }> = [];
    let n = 0;
    const files = (folderId: number, count: number) => {
      for (let i = 1; i <= count; i++, n++) {
        const c = pool[n % pool.length];
        const name = `file ${i}.txt`;
        fileIds.push(Number(addFile.run(accountId, folderId, name, nameKey(name), naturalSortKey(name), c.size, now, now, c.sha256, c.id).lastInsertRowid));
      }
    };
    db.transaction(() => {
      for (const c of stored) addContent.run(c.sha256, c.size, c.key, now);
      pool = db.prepare('select id, sha256, size, storage_key from content order by id').all() as typeof pool;
      for (let s = 1; s <= SUBFOLDERS; s++) {
        const sub = folder(bigId, `sub ${s}`);
        const deep = folder(sub, 'deep');
        folderIds.push(sub, deep);
        files(sub, FILES_PER_SUBFOLDER);
        files(deep, FILES_PER_DEEP_FOLDER);
        layout.push({ id: sub, folders: 1, files: FILES_PER_SUBFOLDER }, { id: deep, folders: 0, files: FILES_PER_DEEP_FOLDER });
      }
    })();
    const byHash = new Map(pool.map((row) => [row.sha256, row]));
    const sharedRow = byHash.get(sharedHash)!;
    return {
      folderIds,
      fileIds,
      layout,
      sharedContent: { sha256: sharedRow.sha256, size: sharedRow.size, key: sharedRow.storage_key },
      insideOnlyKeys: [...insideHashes.map((hash) => byHash.get(hash)!.storage_key), ...stored.map((c) => c.key)],
    };
  });

  // Folder sizes and used bytes from the rows; then the tree must be clean as it stands.
  const repaired = await fsck(dataDir, { repair: true });
  expect(repaired.code, repaired.stdout + repaired.stderr).toBe(0);
  expect(repaired.stdout).toMatch(/folder \d+: .*\(repaired\)/);
  expect(repaired.stdout).toMatch(/account \d+: .*\(repaired\)/);
  expectClean(await fsck(dataDir), 'the built tree');
  return { template: dataDir, bigId, outsideFileId: Number(outside.files[0].id), ...built };
}

/** A copy of the tree's data folder for one run. */
async function copyOfTree(tree: Tree, name: string): Promise<string> {
  const dir = await newDataDir(name);
  await fs.cp(tree.template, dir, { recursive: true });
  return dir;
}

type TreeState = 'live' | 'binned' | 'gone';

/**
 * Where the big folder's subtree is, from the database: all of it live, all of it in the bin (the
 * folder an entry, everything beneath binned under it), or all of it gone. Anything else fails.
 */
function treeState(dataDir: string, tree: Tree): TreeState {
  const rows = withDb(dataDir, (db) => {
    const count = (table: string, ids: readonly number[]) =>
      db
        .prepare(
          `select count(*) as total,
                  coalesce(sum(deleted_at is null and binned_under is null), 0) as live,
                  coalesce(sum(deleted_at is null and binned_under = ${tree.bigId}), 0) as beneath
           from ${table} where id in (${ids.join(',')})`,
        )
        .get() as { total: number; live: number; beneath: number };
    const big = db.prepare('select deleted_at, binned_under from folders where id = ?').get(tree.bigId) as
      | { deleted_at: number | null; binned_under: number | null }
      | undefined;
    return { folders: count('folders', tree.folderIds.slice(1)), files: count('files', tree.fileIds), big };
  });
  const folders = tree.folderIds.length - 1;
  const files = tree.fileIds.length;
  const seen = JSON.stringify(rows);
  if (!rows.big) {
    expect(rows.folders.total + rows.files.total, `the big folder is gone but not all beneath it: ${seen}`).toBe(0);
    return 'gone';
  }
  if (rows.big.deleted_at === null && rows.big.binned_under === null) {
    expect([rows.folders.live, rows.files.live], `the big folder is live but not all beneath it: ${seen}`).toEqual([folders, files]);
    return 'live';
  }
  expect(rows.big.binned_under, seen).toBeNull();
  expect([rows.folders.beneath, rows.files.beneath], `the big folder is in the bin but not all beneath it: ${seen}`).toEqual([folders, files]);
  return 'binned';
}

/** Over the wire: the big folder live in the root, and every folder of it listing all it should. */
async function expectWholeTreeListed(url: string, session: Session, tree: Tree): Promise<void> {
  const root = await ok(url, GetFiles, session, { dir: '0', order: 'name', desc: '0' });
  expect(root.folders.map((f) => f.id)).toContain(String(tree.bigId));
  let files = 0;
  for (const folder of tree.layout) {
    const listing = await ok(url, GetFiles, session, { dir: String(folder.id), order: 'name', desc: '0' });
    expect({ id: folder.id, folders: listing.folders.length, files: listing.files.length }).toEqual(folder);
    expect(listing.result.count).toBe(String(folder.folders + folder.files));
    files += listing.files.length;
  }
  expect(files).toBe(tree.fileIds.length);
}

/** Over the wire: the big folder is neither in the root nor openable; in the bin only if binned. */
async function expectTreeNotListed(url: string, session: Session, tree: Tree, inBin: boolean): Promise<void> {
  const root = await ok(url, GetFiles, session, { dir: '0', order: 'name', desc: '0' });
  expect(root.folders.map((f) => f.id)).not.toContain(String(tree.bigId));
  expect((await call(url, GetFiles, session, { dir: String(tree.bigId), order: 'name', desc: '0' })).result.code).toBe('404');
  const bin = await ok(url, GetRecycleFiles, session, { order: 'name', desc: '0' });
  expect(bin.folders.map((f) => f.id)).toEqual(inBin ? [String(tree.bigId)] : []);
  // Only the folder is an entry of the bin, never what lies beneath it.
  expect(bin.files).toEqual([]);
}

/** The file outside the big folder still downloads, with its bytes. */
async function expectOutsideFileDownloads(url: string, session: Session, tree: Tree): Promise<void> {
  expect(await download(url, session, tree.outsideFileId)).toEqual({ status: 200, size: tree.sharedContent.size, sha256: tree.sharedContent.sha256 });
}

const blobsLeft = (dataDir: string, tree: Tree) => tree.insideOnlyKeys.filter((key) => existsSync(path.join(dataDir, 'content', key))).length;

/** Moments of a FolderAndFileDelete without a crash, in ms after the request was sent. */
interface Timeline {
  /** The transaction's commit became visible in the database. */
  readonly committedMs: number;
  readonly answeredMs: number;
}

/** A moment to kill at: a time after sending, or an event seen in the database. */
type Moment = { readonly afterMs: number } | { readonly event: 'committed' | 'removing' };

/** Whether the delete (is_real=1) or the move (0) has committed, seen by another connection. */
function committed(reader: Database.Database, tree: Tree, isReal: 0 | 1): boolean {
  const big = reader.prepare('select deleted_at from folders where id = ?').get(tree.bigId) as { deleted_at: number | null } | undefined;
  return isReal === 1 ? big === undefined : big?.deleted_at != null;
}

/** Whether blob deletions have begun and some have finished (their queue rows are gone). */
function removing(reader: Database.Database, tree: Tree): boolean {
  const queue = reader.prepare('select count(*) as queued, coalesce(sum(started_at is not null), 0) as started from content_removals').get() as {
    queued: number;
    started: number;
  };
  return queue.started > 0 && queue.queued < tree.insideOnlyKeys.length;
}

/**
 * Sends FolderAndFileDelete for the big folder and kills the service at `moment` (with a reader on
 * the database to see events; it is closed before the kill). Returns whether an answer came.
 */
async function deleteAndKill(server: ServiceProcess, session: Session, tree: Tree, isReal: 0 | 1, moment: Moment) {
  const reader = new Database(path.join(server.dataDir, 'fss.sqlite'), { fileMustExist: true });
  const started = performance.now();
  let answeredAt: number | null = null;
  const answer = call(server.url, FolderAndFileDelete, session, { dirids: String(tree.bigId), fids: '', is_real: isReal }).then(
    (a) => ((answeredAt = performance.now() - started), a),
    (error: Error) => error,
  );
  try {
    if ('afterMs' in moment) await sleep(Math.max(0, moment.afterMs - (performance.now() - started)));
    else await waitFor(`the ${moment.event} moment`, () => (moment.event === 'committed' ? committed(reader, tree, isReal) : removing(reader, tree)), 15_000, 1);
  } finally {
    reader.close();
  }
  await server.kill9();
  const killedAt = performance.now() - started;
  const outcome = await answer;
  if (!(outcome instanceof Error)) expect(outcome.result.code).toBe('0');
  return { answeredBeforeKill: answeredAt !== null && answeredAt <= killedAt, answered: !(outcome instanceof Error), killedAt };
}

/** FolderAndFileDelete on a fresh copy of the tree, without a kill: when it commits and answers, and its result. */
async function timeDelete(tree: Tree, isReal: 0 | 1): Promise<Timeline> {
  const dataDir = await copyOfTree(tree, `measure-${isReal}`);
  const server = await startService(dataDir);
  const session = await login(server.url);
  const reader = new Database(path.join(dataDir, 'fss.sqlite'), { fileMustExist: true });
  const started = performance.now();
  let answeredMs = 0;
  const answer = ok(server.url, FolderAndFileDelete, session, { dirids: String(tree.bigId), fids: '', is_real: isReal }).then(
    () => (answeredMs = performance.now() - started),
  );
  await waitFor('the commit', () => committed(reader, tree, isReal), 15_000, 1);
  const committedMs = performance.now() - started;
  reader.close();
  await answer;
  // Without a crash, a permanent delete answers once the content is removed (or after 2 s).
  if (isReal === 1) await waitFor('content removal', () => blobsLeft(dataDir, tree) === 0, 15_000, 50);
  await server.stop();
  expect(treeState(dataDir, tree)).toBe(isReal === 1 ? 'gone' : 'binned');
  expectClean(await fsck(dataDir), `a ${isReal ? 'permanent delete' : 'move to the bin'} without a crash`);
  if (isReal === 1) await expectNoOrphanBytes(dataDir);
  return { committedMs, answeredMs };
}

/** What is left of the big folder after an emptying of the bin was killed: nothing, or some of it in the bin. */
interface LeftInBin {
  readonly state: 'gone' | 'binned';
  readonly folders: number;
  readonly files: number;
}

/**
 * Where the big folder's subtree is after RecycleEmpty was killed, from the database: gone, or the
 * folder still an entry of the bin with everything left of its subtree binned under it. Anything
 * else (a row left live, or beneath something else) fails.
 */
function leftInBin(dataDir: string, tree: Tree): LeftInBin {
  const rows = withDb(dataDir, (db) => {
    const count = (table: string, ids: readonly number[]) =>
      db
        .prepare(`select count(*) as total, coalesce(sum(deleted_at is null and binned_under = ${tree.bigId}), 0) as beneath from ${table} where id in (${ids.join(',')})`)
        .get() as { total: number; beneath: number };
    const big = db.prepare('select deleted_at, binned_under from folders where id = ?').get(tree.bigId) as
      | { deleted_at: number | null; binned_under: number | null }
      | undefined;
    return { folders: count('folders', tree.folderIds.slice(1)), files: count('files', tree.fileIds), big };
  });
  const seen = JSON.stringify(rows);
  if (!rows.big) {
    expect(rows.folders.total + rows.files.total, `the big folder is gone but not all beneath it: ${seen}`).toBe(0);
    return { state: 'gone', folders: 0, files: 0 };
  }
  expect([rows.big.deleted_at !== null, rows.big.binned_under], `the big folder is not an entry of the bin: ${seen}`).toEqual([true, null]);
  expect([rows.folders.beneath, rows.files.beneath], `something left of the big folder is not beneath it in the bin: ${seen}`).toEqual([
    rows.folders.total,
    rows.files.total,
  ]);
  return { state: 'binned', folders: rows.folders.total, files: rows.files.total };
}

/** A moment of RecycleEmpty seen in the database: a step committed (some files gone), or every file gone. */
type EmptyingEvent = 'partly emptied' | 'files gone';

function emptyingReached(reader: Database.Database, tree: Tree, event: EmptyingEvent): boolean {
  const beneath = (reader.prepare('select count(*) as n from files where binned_under = ?').get(tree.bigId) as { n: number }).n;
  if (event === 'files gone') return beneath === 0;
  return reader.prepare('select id from folders where id = ?').get(tree.bigId) !== undefined && beneath < tree.fileIds.length;
}

/** Sends RecycleEmpty (the big folder in the bin) and kills the service at `moment`. */
async function emptyAndKill(server: ServiceProcess, session: Session, tree: Tree, moment: { afterMs: number } | { event: EmptyingEvent }) {
  const reader = new Database(path.join(server.dataDir, 'fss.sqlite'), { fileMustExist: true });
  const started = performance.now();
  let answeredAt: number | null = null;
  const answer = call(server.url, RecycleEmpty, session, {}).then(
    (a) => ((answeredAt = performance.now() - started), a),
    (error: Error) => error,
  );
  try {
    if ('afterMs' in moment) await sleep(Math.max(0, moment.afterMs - (performance.now() - started)));
    else await waitFor(`the emptying's moment "${moment.event}"`, () => emptyingReached(reader, tree, moment.event), 15_000, 1);
  } finally {
    reader.close();
  }
  await server.kill9();
  const killedAt = performance.now() - started;
  const outcome = await answer;
  if (!(outcome instanceof Error)) expect(outcome.result.code).toBe('0');
  return { answeredBeforeKill: answeredAt !== null && answeredAt <= killedAt, killedAt };
}

/** RecycleEmpty of the big folder (moved to the bin first) on a fresh copy of the tree, without a kill: when it answers. */
async function timeEmpty(tree: Tree): Promise<number> {
  const dataDir = await copyOfTree(tree, 'measure-empty');
  const server = await startService(dataDir);
  const session = await login(server.url);
  await ok(server.url, FolderAndFileDelete, session, { dirids: String(tree.bigId), fids: '', is_real: 0 });
  const started = performance.now();
  await ok(server.url, RecycleEmpty, session, {});
  const answeredMs = performance.now() - started;
  await waitFor('content removal', () => blobsLeft(dataDir, tree) === 0, 15_000, 50);
  await server.stop();
  expect(leftInBin(dataDir, tree).state).toBe('gone');
  expectClean(await fsck(dataDir), 'RecycleEmpty without a crash');
  await expectNoOrphanBytes(dataDir);
  return answeredMs;
}

/** Over the wire: the files listed in the big folder's folders that are still there (a folder gone answers 404). */
async function filesListed(url: string, session: Session, tree: Tree): Promise<number> {
  let files = 0;
  for (const folder of tree.layout) {
    const listing = await call(url, GetFiles, session, { dir: String(folder.id), order: 'name', desc: '0' });
    if (listing.result.code === '404') continue;
    expect(listing.result.code).toBe('0');
    files += listing.files.length;
  }
  return files;
}

const describeMoment = (moment: Moment) => ('afterMs' in moment ? `${Math.round(moment.afterMs)} ms` : `the ${moment.event} moment`);

describe('kill -9 during a large folder delete', () => {
  let tree: Tree;
  let deletion: Timeline;
  let binning: Timeline;
  let emptyingMs: number;

  beforeAll(async () => {
    const t0 = performance.now();
    tree = await buildTree();
    const built = performance.now() - t0;
    deletion = await timeDelete(tree, 1);
    binning = await timeDelete(tree, 0);
    emptyingMs = await timeEmpty(tree);
    const ms = (t: Timeline) => `commits at ${Math.round(t.committedMs)} ms, answers at ${Math.round(t.answeredMs)} ms`;
    outcomes.push(
      `tree of ${tree.folderIds.length} folders, ${tree.fileIds.length} files, ${tree.insideOnlyKeys.length} blobs only they reference, built in ${Math.round(built)} ms; ` +
        `without a crash a permanent delete ${ms(deletion)}, a move to the bin ${ms(binning)}, RecycleEmpty of it answers at ${Math.round(emptyingMs)} ms`,
    );
  }, 120_000);

  /**
   * Kill moments spread over the time a whole permanent delete takes: one inside its transaction
   * (which commits long before the answer: the answer waits for content removal), four over the
   * answer time; and two events seen in the database, whatever the timing: the commit, and blob
   * removal under way.
   */
  const deleteMoments: Array<[string, () => Moment]> = [
    ['0.5 of the commit time', () => ({ afterMs: 0.5 * deletion.committedMs })],
    ...[0.2, 0.4, 0.6, 0.8].map((f): [string, () => Moment] => [`${f} of the answer time`, () => ({ afterMs: f * deletion.answeredMs })]),
    ['the commit', () => ({ event: 'committed' })],
    ['blob removal under way', () => ({ event: 'removing' })],
  ];

  it.each(deleteMoments)(
    'is_real=1, killed at %s: the folder is whole or gone, referenced content keeps its bytes, nothing is left over',
    { timeout: 60_000 },
    async (label, momentOf) => {
      const moment = momentOf();
      const dataDir = await copyOfTree(tree, `delete-${label.replace(/\W+/g, '-')}`);
      let server = await startService(dataDir);
      let session = await login(server.url);
      const { answered, answeredBeforeKill, killedAt } = await deleteAndKill(server, session, tree, 1, moment);

      // As the crash left it.
      expectClean(await fsck(dataDir), `killed at ${Math.round(killedAt)} ms`);
      const state = treeState(dataDir, tree);
      expect(['live', 'gone']).toContain(state);
      if (answered || 'event' in moment) expect(state).toBe('gone');
      const left = blobsLeft(dataDir, tree);
      // Content goes only after the commit that took its last reference; shared content stays.
      if (state === 'live') expect(left).toBe(tree.insideOnlyKeys.length);
      expect(existsSync(path.join(dataDir, 'content', tree.sharedContent.key))).toBe(true);

      server = await startService(dataDir);
      session = await login(server.url);
      if (state === 'live') await expectWholeTreeListed(server.url, session, tree);
      else await expectTreeNotListed(server.url, session, tree, false);
      await expectOutsideFileDownloads(server.url, session, tree);

      // Finish the work: delete again if the folder survived; housekeeping (run at start) removes
      // what the crash left. Then no byte is left that nothing references.
      if (state === 'live') await ok(server.url, FolderAndFileDelete, session, { dirids: String(tree.bigId), fids: '', is_real: 1 });
      await waitFor(
        'content removal',
        () =>
          blobsLeft(dataDir, tree) === 0 &&
          withDb(dataDir, (db) => (db.prepare('select count(*) as n from content_removals').get() as { n: number }).n === 0),
        20_000,
        100,
      );
      await expectOutsideFileDownloads(server.url, session, tree);
      expect(server.output()).not.toContain('"level":"error"');
      await server.stop();
      expect(treeState(dataDir, tree)).toBe('gone');
      expectClean(await fsck(dataDir), 'after the final removal');
      await expectNoOrphanBytes(dataDir);
      outcomes.push(
        `delete, kill at ${label} (${describeMoment(moment)}; killed at ${Math.round(killedAt)} ms${answeredBeforeKill ? ', after the answer' : ''}): ` +
          `folder ${state}; ${left}/${tree.insideOnlyKeys.length} unreferenced blobs on disk after the crash`,
      );
    },
  );

  const binMoments: Array<[string, () => Moment]> = [
    ['0.5 of the answer time', () => ({ afterMs: 0.5 * binning.answeredMs })],
    ['the commit', () => ({ event: 'committed' })],
  ];

  it.each(binMoments)(
    'is_real=0, killed at %s: the folder is live with all its files or in the bin with all its files',
    { timeout: 60_000 },
    async (label, momentOf) => {
      const moment = momentOf();
      const dataDir = await copyOfTree(tree, `bin-${label.replace(/\W+/g, '-')}`);
      let server = await startService(dataDir);
      let session = await login(server.url);
      const { answered, answeredBeforeKill, killedAt } = await deleteAndKill(server, session, tree, 0, moment);

      expectClean(await fsck(dataDir), `killed at ${Math.round(killedAt)} ms`);
      const state = treeState(dataDir, tree);
      expect(['live', 'binned']).toContain(state);
      if (answered || 'event' in moment) expect(state).toBe('binned');
      // A move to the bin removes nothing from storage.
      expect(blobsLeft(dataDir, tree)).toBe(tree.insideOnlyKeys.length);

      server = await startService(dataDir);
      session = await login(server.url);
      if (state === 'binned') {
        await expectTreeNotListed(server.url, session, tree, true);
        // All of it comes back with the folder.
        const restored = await ok(server.url, FolderAndFileRestore, session, { dirids: String(tree.bigId), fids: '' });
        expect(restored.folders.map((f) => f.id)).toEqual([String(tree.bigId)]);
      }
      await expectWholeTreeListed(server.url, session, tree);
      await expectOutsideFileDownloads(server.url, session, tree);
      expect(server.output()).not.toContain('"level":"error"');
      await server.stop();
      expect(treeState(dataDir, tree)).toBe('live');
      expectClean(await fsck(dataDir), 'after the restore');
      outcomes.push(
        `move to bin, kill at ${label} (${describeMoment(moment)}; killed at ${Math.round(killedAt)} ms${answeredBeforeKill ? ', after the answer' : ''}): folder ${state}`,
      );
    },
  );

  const emptyMoments: Array<[string, () => { afterMs: number } | { event: EmptyingEvent }]> = [
    ['a step committed', () => ({ event: 'partly emptied' })],
    ['the last file gone (its folders go next)', () => ({ event: 'files gone' })],
    ...[0.3, 0.7].map((f): [string, () => { afterMs: number }] => [`${f} of the answer time`, () => ({ afterMs: f * emptyingMs })]),
  ];

  it.each(emptyMoments)(
    'RecycleEmpty, killed at %s: what is left is in the bin, whole; it comes back with its sizes right, and goes with RecycleEmpty again',
    { timeout: 90_000 },
    async (label, momentOf) => {
      const moment = momentOf();
      const dataDir = await copyOfTree(tree, `empty-${label.replace(/\W+/g, '-')}`);
      let server = await startService(dataDir);
      let session = await login(server.url);
      await ok(server.url, FolderAndFileDelete, session, { dirids: String(tree.bigId), fids: '', is_real: 0 });
      const { answeredBeforeKill, killedAt } = await emptyAndKill(server, session, tree, moment);

      expectClean(await fsck(dataDir), `killed at ${Math.round(killedAt)} ms`);
      const left = leftInBin(dataDir, tree);
      if ('event' in moment && moment.event === 'partly emptied') expect(left.files).toBeLessThan(tree.fileIds.length);
      if ('event' in moment && moment.event === 'files gone') expect(left.files).toBe(0);

      server = await startService(dataDir);
      session = await login(server.url);
      await expectOutsideFileDownloads(server.url, session, tree);
      if (left.state === 'binned') {
        // What is left comes back with the folder, every file of it listed, every size right.
        await ok(server.url, FolderAndFileRestore, session, { dirids: String(tree.bigId), fids: '' });
        expect(await filesListed(server.url, session, tree)).toBe(left.files);
        await server.stop();
        expectClean(await fsck(dataDir), 'after the restore of what was left');
        server = await startService(dataDir);
        session = await login(server.url);
        await ok(server.url, FolderAndFileDelete, session, { dirids: String(tree.bigId), fids: '', is_real: 0 });
        await ok(server.url, RecycleEmpty, session, {});
      }
      await waitFor(
        'content removal',
        () =>
          blobsLeft(dataDir, tree) === 0 &&
          withDb(dataDir, (db) => (db.prepare('select count(*) as n from content_removals').get() as { n: number }).n === 0),
        20_000,
        100,
      );
      await expectOutsideFileDownloads(server.url, session, tree);
      expect(server.output()).not.toContain('"level":"error"');
      await server.stop();
      expect(leftInBin(dataDir, tree).state).toBe('gone');
      expectClean(await fsck(dataDir), 'after RecycleEmpty again');
      await expectNoOrphanBytes(dataDir);
      outcomes.push(
        `RecycleEmpty, kill at ${label} (killed at ${Math.round(killedAt)} ms${answeredBeforeKill ? ', after the answer' : ''}): ` +
          `${left.state === 'gone' ? 'all gone' : `${left.folders} folders and ${left.files} files left in the bin`}`,
      );
    },
  );
});
