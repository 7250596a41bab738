/**
 * `fss migrate` (operations/admin/migrate-installation.ts): an embedded installation, made through the
 * real service (accounts, folders, files over tus incl. a multi-MiB one, a protected share with a
 * cover image, an open folder share, a direct link, an encrypted file, the recycle bin, e-mail
 * shares, an API key, an unfinished upload), moved into a PostgreSQL database and an S3 server
 * that the test starts; then the service on the target, with the same secret: every file
 * downloads with its hash, logins, old sessions, API keys, shares, links, cover images and the
 * encrypted file work. Run again: nothing doubles. Interrupted (an injected failure, kill -9 of the
 * command): the next run completes. And the refusals.
 *
 * In the "postgres" project only (vitest.config.ts postgresOnly).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { findOperation, type OperationSpec } from '../src/catalog/operations';
import { main } from '../src/cli';
import { loadConfig } from '../src/config';
import { migrateInstallation } from '../src/operations/admin/migrate-installation';
import { closeDatabase, openDatabase } from '../src/storage/db/engine/database';
import { continueIdsAfterCopy, lastIssuedId } from '../src/storage/db/engine/dialect';
import { derivedKeyFor, type ContentStore } from '../src/storage/content/content-store';
import { LocalDiskStore } from '../src/storage/content/local-disk-store';
import { contentStoreFor, prepareContentStores } from '../src/storage/content/stores';
import { addAccount, addApiKey, callSigned, element, logIn, startTestApp, type Session, type TestApp } from './helpers/app-server';
import { testS3Endpoint } from './helpers/content';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from './helpers/postgres';
import { callInForm, resultXml, send, type Value } from './helpers/requests';
import { testS3Settings } from './helpers/s3-server';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MiB = 1024 * 1024;

const op = (service: string, name: string): OperationSpec => findOperation(service as never, name)!;
const FileAdd = op('FileService', 'FileAdd');
const FileRename = op('FileService', 'FileRename');
const FolderAdd = op('FileService', 'FolderAdd');
const FileShare = op('FileService', 'FileShare');
const FolderShare = op('FileService', 'FolderShare');
const ShareImageUpload = op('FileService', 'ShareImageUpload');
const FileLink = op('FileService', 'FileLink');
const FileEncrypt = op('FileService', 'FileEncrypt');
const Unlock = op('FileService', 'Unlock');
const FileDownload = op('FileService', 'FileDownload');
const FolderAndFileDelete = op('FileService', 'FolderAndFileDelete');
const FileEmailShare = op('FileService', 'FileEmailShare');
const GetFiles = op('UserService', 'GetFiles');
const GetRecycleFiles = op('UserService', 'GetRecycleFiles');
const ShareOpen = op('ShareService', 'ShareOpen');
const ShareList = op('ShareService', 'ShareList');
const ShareDownload = op('ShareService', 'ShareDownload');
const APILogin = op('OAuthService', 'APILogin');

/** A 1×1 transparent PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** Bytes that differ all along (so that a misplaced range or part shows). */
function bigBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4) bytes.writeUInt32LE(Math.imul(i, 2654435761) >>> 0, i);
  return bytes;
}

// ---- The installation ----------------------------------------------------------------------------

interface StoredFile {
  readonly owner: 'alice' | 'bob';
  readonly id: number;
  readonly name: string;
  readonly bytes: Buffer;
  readonly password?: string;
}

interface Installation {
  readonly dataDir: string;
  readonly secret: string;
  readonly files: StoredFile[];
  /** Files in the recycle bin (not downloadable, listed by GetRecycleFiles). */
  readonly binned: StoredFile[];
  readonly aliceSession: Session;
  readonly apiKey: string;
  readonly protectedShare: { readonly code: string; readonly downpwd: string; readonly file: StoredFile };
  readonly folderShare: { readonly code: string; readonly file: StoredFile };
  readonly link: { readonly path: string; readonly file: StoredFile };
  readonly imagePath: string;
  /** The cover image as the installation served it (the upload, decoded and encoded anew). */
  readonly imageBytes: Buffer;
  readonly folderIds: number[];
}

async function signedCall(app: TestApp, session: Session, operation: OperationSpec, params: Record<string, Value>) {
  const answer = await callSigned(app, 'post', operation, session, params);
  expect(answer.status, answer.body).toBe(200);
  const xml = resultXml(answer, operation);
  return { xml, result: element(xml, 'result')!.attrs };
}

async function anonymousCall(app: TestApp, operation: OperationSpec, params: Record<string, Value>) {
  const answer = await callInForm(app.url, 'post', operation, params);
  expect(answer.status, answer.body).toBe(200);
  const xml = resultXml(answer, operation);
  return { xml, result: element(xml, 'result')?.attrs ?? {} };
}

/** A tus upload: all of it, or only its first `sent` bytes (an unfinished upload). */
async function upload(app: TestApp, session: Session, bytes: Buffer, sent = bytes.length): Promise<void> {
  const created = await send(app.url, 'POST', '/upload/', {
    'Tus-Resumable': '1.0.0',
    'Upload-Length': String(bytes.length),
    Authorization: `Bearer ${session.token}`,
  });
  expect(created.status).toBe(201);
  const location = new URL(String(created.headers.location), app.url).pathname;
  const headers = { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', Authorization: `Bearer ${session.token}` };
  const patched = await send(app.url, 'PATCH', location, headers, bytes.subarray(0, sent));
  expect(patched.status, patched.body).toBe(204);
}

async function addFile(app: TestApp, session: Session, name: string, bytes: Buffer, dirid = 0): Promise<number> {
  await upload(app, session, bytes);
  const dot = name.lastIndexOf('.');
  const { xml, result } = await signedCall(app, session, FileAdd, { name, ext: dot > 0 ? name.slice(dot + 1) : '', size: bytes.length, dirid, hash: sha256(bytes) });
  expect(result.code, result.msg).toBe('0');
  return Number(element(xml, 'file')!.attrs.id);
}

async function addFolder(app: TestApp, session: Session, name: string, dirid = 0): Promise<number> {
  const { xml, result } = await signedCall(app, session, FolderAdd, { dirid, name });
  expect(result.code, result.msg).toBe('0');
  return Number(element(xml, 'folder')!.attrs.id);
}

/** The embedded installation, made through the service as a user would, then stopped. */
async function makeInstallation(dataDir: string): Promise<Installation> {
  // FSS_PUBLIC_URL: the installation sends share e-mails, which need it.
  const app = await startTestApp({ FSS_DATA_DIR: dataDir, FSS_DATABASE_URL: '', FSS_PUBLIC_URL: 'https://files.example.com' });
  try {
    expect(app.config.databaseUrl).toBeUndefined();
    await addAccount(app, 'alice', 'alice-password-1');
    await addAccount(app, 'bob', 'bob-password-1');
    const alice = await logIn(app, 'post', 'alice', 'alice-password-1');
    const bob = await logIn(app, 'post', 'bob', 'bob-password-1');
    const apiKey = await addApiKey(app, 'alice');

    const files: StoredFile[] = [];
    const binned: StoredFile[] = [];
    const add = async (owner: 'alice' | 'bob', name: string, bytes: Buffer, dirid = 0) => {
      const file = { owner, id: await addFile(app, owner === 'alice' ? alice : bob, name, bytes, dirid), name, bytes };
      files.push(file);
      return file;
    };
    const documents = await addFolder(app, alice, 'Documents');
    const old = await addFolder(app, alice, 'Old', documents);
    const shared = await addFolder(app, alice, 'Shared');
    const report = await add('alice', 'report.txt', Buffer.from('the quarterly report\n'), documents);
    const big = await add('alice', 'big.bin', bigBytes(17 * MiB + 12345));
    await add('bob', 'same-as-alice.txt', Buffer.from('the quarterly report\n'));
    await add('bob', 'empty.txt', Buffer.alloc(0));
    const inShared = await add('alice', 'inside.txt', Buffer.from('in the shared folder'), shared);
    const secretFile = await add('alice', 'diary.txt', Buffer.from('MARKER: dear diary'));

    // A protected file share with a cover image, and an open folder share.
    const fileShare = await signedCall(app, alice, FileShare, { fids: String(report.id), downpwd: 'sesame', downValue: 0, description: 'the report' });
    expect(fileShare.result.code).toBe('0');
    const protectedCode = element(fileShare.xml, 'file')!.attrs.code;
    const image = await callInForm(app.url, 'post', ShareImageUpload, { uid: alice.uid, token: alice.token, fid: report.id, ImagefileName: 'cover.png', byteFileStream: PNG });
    const imageXml = resultXml(image, ShareImageUpload);
    const imageUrl = (/^<string[^>]*>([\s\S]*)<\/string>$/.exec(imageXml)?.[1] ?? imageXml).replace(/&amp;/g, '&');
    expect(imageUrl).toMatch(/^http/);
    // The URL is made from FSS_PUBLIC_URL: the path is what this installation serves.
    const imageBytes = (await getBytes(app.url + new URL(imageUrl).pathname)).body;
    expect(imageBytes.subarray(0, 8).equals(PNG.subarray(0, 8))).toBe(true);
    const folderShare = await signedCall(app, alice, FolderShare, { dirids: String(shared), downpwd: '', downValue: 0, description: '' });
    expect(folderShare.result.code).toBe('0');
    const folderCode = element(folderShare.xml, 'folder')!.attrs.code;
    // E-mail shares (queued and sent to the outbox; a sealed extraction code in the rows).
    expect((await signedCall(app, alice, FileEmailShare, { fid: report.id, to: 'carol@example.com; dave@example.com' })).result.code).toBe('0');

    const link = await signedCall(app, alice, FileLink, { fid: big.id });
    expect(link.result.code).toBe('0');

    expect((await signedCall(app, alice, FileEncrypt, { fid: secretFile.id, password: 'open sesame', password_tip: 'the usual' })).result.code).toBe('0');
    files[files.indexOf(secretFile)] = { ...secretFile, password: 'open sesame' };

    // The recycle bin: a file deleted directly, and a folder with a file beneath it.
    const gone = await add('alice', 'gone.txt', Buffer.from('deleted, but in the bin'));
    const oldFile = await add('alice', 'old.txt', Buffer.from('an old file'), old);
    expect((await signedCall(app, alice, FolderAndFileDelete, { dirids: String(old), fids: String(gone.id), is_real: 0 })).result.code).toBe('0');
    files.splice(files.indexOf(gone), 1);
    files.splice(files.indexOf(oldFile), 1);
    binned.push(gone, oldFile);

    // An upload that never finished: it is not carried over.
    await upload(app, bob, Buffer.from('half of this never arrives'), 10);

    return {
      dataDir,
      secret: readFileSync(path.join(dataDir, 'secret.key'), 'utf8').trim(),
      files,
      binned,
      aliceSession: alice,
      apiKey,
      protectedShare: { code: protectedCode, downpwd: 'sesame', file: report },
      folderShare: { code: folderCode, file: inShared },
      link: { path: new URL(link.result.url).pathname, file: big },
      imagePath: new URL(imageUrl).pathname,
      imageBytes,
      folderIds: [documents, old, shared],
    };
  } finally {
    await app.close();
  }
}

// ---- Targets and the command ---------------------------------------------------------------------

interface Target {
  readonly database: TestDatabase;
  readonly env: Record<string, string>;
  readonly store: ContentStore;
}

/** A PostgreSQL database (empty, or migrated and empty) and a fresh prefix on the S3 server. */
async function newTarget(installation: Installation, options: { readonly schema?: 'none' | 'migrated' } = {}): Promise<Target> {
  const database = options.schema === 'migrated' ? await createTestDatabase() : await createEmptyDatabase();
  onTestFinished(() => database.drop());
  const s3 = testS3Settings(await testS3Endpoint());
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'fss-migrate-target-'));
  onTestFinished(() => rmSync(workDir, { recursive: true, force: true }));
  const env = {
    FSS_DATA_DIR: workDir,
    FSS_DATABASE_URL: database.url,
    FSS_SECRET: installation.secret,
    FSS_S3_ENDPOINT: s3.endpoint!,
    FSS_S3_BUCKET: s3.bucket,
    FSS_S3_REGION: s3.region,
    FSS_S3_ACCESS_KEY_ID: s3.accessKeyId!,
    FSS_S3_SECRET_ACCESS_KEY: s3.secretAccessKey!,
    FSS_S3_FORCE_PATH_STYLE: 'true',
    FSS_S3_PREFIX: s3.prefix,
  };
  const config = loadConfig(env);
  await prepareContentStores(config);
  return { database, env, store: contentStoreFor(config) };
}

/** `fss ARGS` in-process with this environment. */
async function fss(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, env, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([]),
  });
  return { code, stdout, stderr };
}

const migrate = (installation: Installation, target: Target, ...more: string[]) => fss(['migrate', '--from-data-dir', installation.dataDir, ...more], target.env);

async function query<T extends pg.QueryResultRow>(target: Target, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: target.database.url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

async function countsOf(target: Target): Promise<Record<string, number>> {
  const tables = ['accounts', 'api_keys', 'tokens', 'content', 'folders', 'files', 'shares', 'links', 'emails', 'email_sends', 'uploads', 'encryption_keys', 'content_encryption'];
  const counts: Record<string, number> = {};
  for (const table of tables) counts[table] = Number((await query<{ n: string }>(target, `select count(*) as n from ${table}`))[0].n);
  return counts;
}

async function keysOf(store: ContentStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.listKeys()) keys.push(key);
  return keys.sort();
}

async function getBytes(url: string): Promise<{ status: number; body: Buffer }> {
  const answer = await fetch(url);
  return { status: answer.status, body: Buffer.from(await answer.arrayBuffer()) };
}

/** The service on the target, with the same secret: everything the installation held works. */
async function checkServiceOn(target: Target, installation: Installation): Promise<void> {
  const app = await startTestApp(target.env);
  try {
    expect(app.config.databaseUrl).toBe(target.database.url);
    expect(app.config.s3?.prefix).toBe(target.env.FSS_S3_PREFIX);
    const sessions = {
      alice: await logIn(app, 'post', 'alice', 'alice-password-1'),
      bob: await logIn(app, 'post', 'bob', 'bob-password-1'),
    };
    for (const file of installation.files) {
      const session = sessions[file.owner];
      if (file.password) {
        expect((await signedCall(app, session, FileDownload, { fid: file.id })).result.code).toBe('423');
        expect((await signedCall(app, session, Unlock, { dirid: 0, fid: file.id, password: file.password })).result.code).toBe('0');
      }
      const { result } = await signedCall(app, session, FileDownload, { fid: file.id });
      expect(result.code, `${file.name}: ${result.msg}`).toBe('0');
      const { status, body } = await getBytes(app.url + new URL(result.url).pathname + new URL(result.url).search);
      expect(status, file.name).toBe(200);
      expect(body.length, file.name).toBe(file.bytes.length);
      expect(sha256(body), file.name).toBe(sha256(file.bytes));
    }

    // The session made on the installation goes on working; so does the API key.
    const listed = await signedCall(app, installation.aliceSession, GetFiles, { dir: '0', order: 'name', desc: '0' });
    expect(listed.result.code).toBe('0');
    expect(listed.xml).toContain('big.bin');
    const apiLogin = await anonymousCall(app, APILogin, { sid: installation.apiKey });
    expect(element(apiLogin.xml, 'token')!.text).not.toBe('0');

    // Shares open with their codes (the extraction code was sealed under the same secret).
    const share = installation.protectedShare;
    expect((await anonymousCall(app, ShareOpen, { code: share.code, downpwd: 'wrong' })).result.code).not.toBe('0');
    expect((await anonymousCall(app, ShareOpen, { code: share.code, downpwd: share.downpwd })).result.code).toBe('0');
    const granted = await anonymousCall(app, ShareDownload, { code: share.code, downpwd: share.downpwd, fid: share.file.id });
    expect(granted.result.code).toBe('0');
    expect(sha256((await getBytes(app.url + new URL(granted.result.url).pathname + new URL(granted.result.url).search)).body)).toBe(sha256(share.file.bytes));
    const folder = await anonymousCall(app, ShareList, { code: installation.folderShare.code, downpwd: '', dir: '', order: 'name', desc: '0' });
    expect(folder.result.code).toBe('0');
    expect(folder.xml).toContain(installation.folderShare.file.name);

    // The cover image and the direct link, at the URLs the installation handed out.
    const image = await getBytes(app.url + installation.imagePath);
    expect(image.status).toBe(200);
    expect(image.body.equals(installation.imageBytes)).toBe(true);
    const linked = await getBytes(app.url + installation.link.path);
    expect(linked.status).toBe(200);
    expect(sha256(linked.body)).toBe(sha256(installation.link.file.bytes));

    // The recycle bin came along.
    const bin = await signedCall(app, sessions.alice, GetRecycleFiles, { order: 'name', desc: '0' });
    expect(bin.xml).toContain('gone.txt');
    expect(bin.xml).toContain('Old');

    // New ids continue after the installation's: nothing is handed out twice.
    const folderId = await addFolder(app, sessions.alice, 'After the move');
    expect(folderId).toBeGreaterThan(Math.max(...installation.folderIds));
    const fileId = await addFile(app, sessions.bob, 'new.txt', Buffer.from('written after the move'));
    expect(fileId).toBeGreaterThan(Math.max(...[...installation.files, ...installation.binned].map((f) => f.id)));
  } finally {
    await app.close();
  }
}

// ---- The tests -----------------------------------------------------------------------------------

let installation: Installation;
let root: string;

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'fss-migrate-source-'));
  installation = await makeInstallation(path.join(root, 'data'));
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('fss migrate', () => {
  it('moves the installation into PostgreSQL and S3; the service there serves all of it; a second run changes nothing', { timeout: 120_000 }, async () => {
    const target = await newTarget(installation);
    const first = await migrate(installation, target);
    expect(first.stderr).toBe('');
    expect(first.code, first.stdout).toBe(0);
    expect(first.stdout).toContain('done in');
    expect(first.stdout).toContain('not copied: 1 unfinished upload(s)');

    const counts = await countsOf(target);
    expect(counts).toMatchObject({ accounts: 2, uploads: 0, content_encryption: 1 });
    expect(counts.files).toBe(installation.files.length + installation.binned.length);
    const keys = await keysOf(target.store);
    expect(keys.length).toBe(counts.content + 1); // and the cover image

    const again = await migrate(installation, target);
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toContain(`0 copied (0 bytes), ${keys.length} already there`);
    expect(await countsOf(target)).toEqual(counts);
    expect(await keysOf(target.store)).toEqual(keys);

    const verified = await migrate(installation, target, '--verify-only');
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);

    await checkServiceOn(target, installation);

    // The service has run on the target (logins, a folder, a file): a re-run would lose that.
    const refused = await migrate(installation, target);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the target has changed since this migration copied the installation');
  });

  it('copies derived images (thumbnails) under the same keys', { timeout: 120_000 }, async () => {
    const source = new LocalDiskStore(path.join(installation.dataDir, 'content'));
    const { bytes } = installation.files[0];
    const key = derivedKeyFor(sha256(bytes), bytes.length, 'small.webp');
    const thumbnail = await sharp({ create: { width: 8, height: 8, channels: 3, background: 'red' } }).webp().toBuffer();
    await source.putDerived(key, thumbnail);
    try {
      const target = await newTarget(installation);
      const run = await migrate(installation, target);
      expect(run.code, run.stdout).toBe(0);
      expect(run.stdout).toContain('derived images (thumbnails): 1 copied');
      expect(Buffer.concat(await (await target.store.read(key)).toArray()).equals(thumbnail)).toBe(true);
    } finally {
      await source.delete(key);
    }
  });

  it('continues after a failure halfway through the blobs, and after kill -9 of the command', { timeout: 120_000 }, async () => {
    const target = await newTarget(installation, { schema: 'migrated' });
    const lines: string[] = [];
    await expect(
      migrateInstallation({
        sourceDataDir: installation.dataDir,
        target: loadConfig(target.env),
        mode: 'migrate',
        jobs: 1,
        print: (line) => lines.push(line),
        afterBlobCopied: (copied) => {
          if (copied === 3) throw new Error('injected failure after 3 blobs');
        },
      }),
    ).rejects.toThrow('injected failure');
    expect((await keysOf(target.store)).length).toBe(3);
    const [marker] = await query<{ finished_at: string | null; rows_copied_at: string | null }>(target, 'select * from installation_migrations');
    expect(marker.rows_copied_at).not.toBeNull();
    expect(marker.finished_at).toBeNull();

    // kill -9 of the command as it copies rows, and as it copies blobs: whatever it left, the next
    // run completes.
    const killWhen = async (text: string) => {
      const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/fss.mjs'), 'migrate', '--from-data-dir', installation.dataDir, '--jobs', '1'], {
        cwd: REPO_ROOT,
        env: { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('FSS_'))), ...target.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes(text)) child.kill('SIGKILL');
      });
      await exited;
      expect(output).toContain(text);
      expect(output).not.toContain('done in');
    };
    await killWhen('rows:');
    await killWhen('content: copying');

    const resumed = await migrate(installation, target);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/already there/);
    await checkServiceOn(target, installation);
  });

  it('--dry-run says what it would copy and writes nothing', async () => {
    const target = await newTarget(installation);
    const dry = await migrate(installation, target, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('Would copy:');
    expect(dry.stdout).toMatch(/files\s+\d+/);
    expect(dry.stdout).toContain('nothing was written');
    expect(await query(target, `select table_name from information_schema.tables where table_schema = 'public'`)).toEqual([]);
    expect(await keysOf(target.store)).toEqual([]);
  });

  it('--verify-only finds a blob missing in the target; the next run copies it again', { timeout: 60_000 }, async () => {
    const target = await newTarget(installation);
    expect((await migrate(installation, target)).code).toBe(0);
    const [victim] = await query<{ storage_key: string }>(target, `select storage_key from content where size > ${MiB}`);
    await target.store.delete(victim.storage_key);
    const verified = await migrate(installation, target, '--verify-only');
    expect(verified.code).toBe(1);
    expect(verified.stdout).toContain(`(${victim.storage_key}): missing in the target`);
    expect(verified.stdout).toContain('verification FAILED');
    const again = await migrate(installation, target);
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toMatch(/: 1 copied/);
  });

  it('--verify-only after the service has run on the target verifies what was moved, reports the rest as not verified, and still finds a damaged moved blob', { timeout: 120_000 }, async () => {
    const target = await newTarget(installation);
    expect((await migrate(installation, target)).code).toBe(0);
    const app = await startTestApp(target.env);
    try {
      const alice = await logIn(app, 'post', 'alice', 'alice-password-1');
      await addFile(app, alice, 'after.txt', Buffer.from('written on the target'));
      expect((await signedCall(app, alice, FileRename, { fid: installation.protectedShare.file.id, newname: 'renamed.txt' })).result.code).toBe('0');
      const moved = installation.folderShare.file;
      expect((await signedCall(app, alice, FolderAndFileDelete, { dirids: '', fids: String(moved.id), is_real: 1 })).result.code).toBe('0');
    } finally {
      await app.close();
    }

    const verified = await migrate(installation, target, '--verify-only');
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).not.toMatch(/problem\(s\):|FAILED/);
    expect(verified.stdout).toMatch(/^ {2}files: \d+ row\(s\) as moved; after the move 1 changed, 1 removed, 1 added \(not verified\)$/m);
    expect(verified.stdout).toMatch(/not verified: 1 removed and 0 replaced after the move .*; 1 added after the move/);
    expect(verified.stdout).toContain('Not verified:');

    const [victim] = await query<{ storage_key: string }>(target, `select storage_key from content where size > ${MiB}`);
    await target.store.delete(victim.storage_key);
    const [overwritten] = await query<{ storage_key: string; size: string }>(
      target,
      `select storage_key, size from content where sha256 = '${sha256(installation.protectedShare.file.bytes)}' order by id limit 1`,
    );
    const garbageDir = mkdtempSync(path.join(os.tmpdir(), 'fss-garbage-'));
    onTestFinished(() => rmSync(garbageDir, { recursive: true, force: true }));
    const garbage = path.join(garbageDir, 'bytes');
    writeFileSync(garbage, Buffer.alloc(Number(overwritten.size), 'x'));
    await target.store.delete(overwritten.storage_key);
    await target.store.putFile(overwritten.storage_key, garbage);
    const damaged = await migrate(installation, target, '--verify-only');
    expect(damaged.code).toBe(1);
    expect(damaged.stdout).toContain(`(${victim.storage_key}): missing in the target`);
    expect(damaged.stdout).toContain(`(${overwritten.storage_key}): the target's bytes hash to`);
    expect(damaged.stdout).toMatch(/^2 problem\(s\):$/m);
    expect(damaged.stdout).toContain('verification FAILED');
  });

  it('refuses a target that is not PostgreSQL, a missing or wrong secret, and misuse', async () => {
    const target = await newTarget(installation);
    const { FSS_DATABASE_URL: _url, ...withoutDatabase } = target.env;
    void _url;
    const noDatabase = await fss(['migrate', '--from-data-dir', installation.dataDir], withoutDatabase);
    expect(noDatabase).toMatchObject({ code: 1 });
    expect(noDatabase.stderr).toContain('the target must be a PostgreSQL database');

    const noSecret = await fss(['migrate', '--from-data-dir', installation.dataDir], { ...target.env, FSS_SECRET: '' });
    expect(noSecret.code).toBe(1);
    expect(noSecret.stderr).toContain('set FSS_SECRET to the secret the installation ran with');

    const wrongSecret = await fss(['migrate', '--from-data-dir', installation.dataDir], { ...target.env, FSS_SECRET: Buffer.alloc(32, 7).toString('base64') });
    expect(wrongSecret.code).toBe(1);
    expect(wrongSecret.stderr).toContain('FSS_SECRET is not the secret of the installation');

    const unreachable = await fss(['migrate', '--from-data-dir', installation.dataDir, '--dry-run'], { ...target.env, FSS_DATABASE_URL: 'postgres://fss@127.0.0.1:1/fss' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('the target database does not answer');
    const noBucket = await fss(['migrate', '--from-data-dir', installation.dataDir, '--dry-run'], { ...target.env, FSS_S3_BUCKET: 'no-such-bucket' });
    expect(noBucket.code).toBe(1);
    expect(noBucket.stderr).toContain('the target content store does not answer');

    const nowhere = await fss(['migrate', '--from-data-dir', path.join(root, 'nothing-here')], target.env);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain('holds no embedded installation');

    expect((await fss(['migrate'], target.env)).code).toBe(2);
    expect((await fss(['migrate', '--from-data-dir', installation.dataDir, '--dry-run', '--verify-only'], target.env)).code).toBe(2);
    expect((await fss(['migrate', '--from-data-dir', installation.dataDir, '--jobs', '0'], target.env)).code).toBe(2);

    // Nothing of the above wrote to the target.
    expect(await query(target, `select table_name from information_schema.tables where table_schema = 'public'`)).toEqual([]);
  });

  it('refuses a target that holds other data, or another installation', { timeout: 60_000 }, async () => {
    // A database the service already runs on.
    const used = await newTarget(installation, { schema: 'migrated' });
    const app = await startTestApp(used.env);
    await addAccount(app, 'zoe', 'zoe-password-1');
    await app.close();
    const refused = await migrate(installation, used);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the target database already holds data (1 accounts');

    // A database holding the move of another installation.
    const other = await makeSmallInstallation(path.join(root, 'other'), installation.secret);
    const target = await newTarget(installation);
    expect((await fss(['migrate', '--from-data-dir', other], target.env)).code).toBe(0);
    const second = await migrate(installation, target);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('holds a migration of another installation');
  });

  it('copies folders nested deeper than the limit as they are, and names the deepest', { timeout: 60_000 }, async () => {
    // An installation made before the limit: a chain of 12 folders written straight into its file.
    const dataDir = await makeSmallInstallation(path.join(root, 'deep'), installation.secret);
    const sqlite = new SQLite(path.join(dataDir, 'fss.sqlite'));
    let deepest = 0;
    try {
      const eve = (sqlite.prepare('select id from accounts where name = ?').get('eve') as { id: number }).id;
      const insert = sqlite.prepare(
        "insert into folders (account_id, parent_id, name, name_key, sort_key, created_at, updated_at) values (?, ?, ?, ?, ?, 0, 0) returning id",
      );
      for (let level = 1; level <= 12; level++) deepest = (insert.get(eve, deepest, `L${level}`, `l${level}`, `l${level}`) as { id: number }).id;
    } finally {
      sqlite.close();
    }
    const target = await newTarget(installation);

    const moved = await fss(['migrate', '--from-data-dir', dataDir], { ...target.env, FSS_MAX_FOLDER_DEPTH: '10' });

    expect(moved.code, moved.stdout + moved.stderr).toBe(0);
    expect(moved.stdout).toContain(
      `note: 2 folder(s) lie deeper than the limit of 10 levels (FSS_MAX_FOLDER_DEPTH), the deepest 12 levels deep (folder ${deepest} of account eve)`,
    );
    expect((await query<{ n: string }>(target, 'select count(*) as n from folders'))[0].n).toBe('12');
  });

  it('reports a source that is written to while it runs', { timeout: 60_000 }, async () => {
    const target = await newTarget(installation);
    const lines: string[] = [];
    const report = await migrateInstallation({
      sourceDataDir: installation.dataDir,
      target: loadConfig(target.env),
      mode: 'migrate',
      print: (line) => lines.push(line),
      afterBlobCopied: (copied) => {
        if (copied !== 1) return;
        // As a service still running would: a write to the installation's database.
        const sqlite = new SQLite(path.join(installation.dataDir, 'fss.sqlite'));
        try {
          sqlite.prepare('insert into throttle (key, failures, window_start) values (?, 1, 0)').run(`login:test-${Date.now()}`);
        } finally {
          sqlite.close();
        }
      },
    });
    expect(report.ok).toBe(false);
    expect(report.problems.join('\n')).toContain('was written to while this ran');
    expect(lines.join('\n')).toContain('migration NOT complete');
  });
});

describe('dialect: the ids a copy continues after', () => {
  for (const engine of ['sqlite', 'postgres'] as const) {
    it(`lastIssuedId and continueIdsAfterCopy on ${engine}`, async () => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fss-ids-'));
      onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
      const database = engine === 'postgres' ? await createTestDatabase() : undefined;
      if (database) onTestFinished(() => database.drop());
      const db = await openDatabase({ ...loadConfig({ FSS_DATA_DIR: dataDir, FSS_DATABASE_URL: database?.url ?? '' }), log: () => {} });
      try {
        // SQLite records accounts' 1000 (startIdsAt); PostgreSQL, whose sequence has not been drawn from, none.
        expect(await lastIssuedId(db, 'accounts')).toBe(engine === 'sqlite' ? 1000 : 0);
        expect(await lastIssuedId(db, 'folders')).toBe(0);
        const account = (await db.insertInto('accounts').values({ name: 'a', name_key: 'a', password_hash: 'x', quota_bytes: 1, created_at: 0 }).returning('id').executeTakeFirstOrThrow()).id;
        expect(account).toBe(1001);
        expect(await lastIssuedId(db, 'accounts')).toBe(1001);

        // Rows inserted with their ids, as a copy does: the next id follows them, or the last one
        // handed out where that is higher.
        const folder = (id: number, name: string) => ({ id, account_id: account, parent_id: 0, name, name_key: name, created_at: 0, updated_at: 0 });
        await db.insertInto('folders').values([folder(5, 'five'), folder(7, 'seven')]).execute();
        await continueIdsAfterCopy(db, 'folders', 9);
        const next = (await db.insertInto('folders').values({ account_id: account, parent_id: 0, name: 'next', name_key: 'next', created_at: 0, updated_at: 0 }).returning('id').executeTakeFirstOrThrow()).id;
        expect(next).toBe(10);
        await db.insertInto('folders').values(folder(20, 'twenty')).execute();
        await continueIdsAfterCopy(db, 'folders', 3);
        const after = (await db.insertInto('folders').values({ account_id: account, parent_id: 0, name: 'after', name_key: 'after', created_at: 0, updated_at: 0 }).returning('id').executeTakeFirstOrThrow()).id;
        expect(after).toBe(21);
        // A table that never handed out an id stays so.
        await continueIdsAfterCopy(db, 'links', 0);
        expect(await lastIssuedId(db, 'links')).toBe(0);
      } finally {
        await closeDatabase(db);
      }
    });
  }
});

/** Another embedded installation (one account, one file), with the given secret. */
async function makeSmallInstallation(dataDir: string, secret: string): Promise<string> {
  const app = await startTestApp({ FSS_DATA_DIR: dataDir, FSS_DATABASE_URL: '', FSS_SECRET: secret });
  try {
    await addAccount(app, 'eve', 'eve-password-1');
    const eve = await logIn(app, 'post', 'eve', 'eve-password-1');
    await addFile(app, eve, 'eve.txt', Buffer.from('eve was here'));
  } finally {
    await app.close();
  }
  return dataDir;
}
