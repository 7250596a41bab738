/**
 * `fss backup` and `fss restore` (operations/admin/backup.ts) of the embedded default, as an operator runs them: the
 * real service (`node bin/fss.mjs serve`) takes uploads and permanent deletes while `fss backup` runs in another
 * process; the backup is restored into an empty data folder, a service starts on it, `fss fsck` is clean and every
 * file of the restored database downloads with the SHA-256 it was uploaded with. And the refusals.
 *
 * In the "sqlite" project only (vitest.config.ts sqliteOnly): the backup command is the embedded default's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, type OperationSpec } from '../src/catalog/operations';
import { callSigned, element, logIn, type Session, type TestApp } from './helpers/app-server';
import { resultXml, send, type Value } from './helpers/requests';
import { fsck, killAllServices, runFss, startService } from './helpers/service-process';

const FileAdd = findOperation('FileService', 'FileAdd')!;
const FileDownload = findOperation('FileService', 'FileDownload')!;
const FolderAndFileDelete = findOperation('FileService', 'FolderAndFileDelete')!;
const ACCOUNT = 'backup';
const PASSWORD = 'backup-password-1';
const KiB = 1024;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let workDir: string;
beforeAll(async () => {
  workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fss-backup-'));
});
afterEach(() => killAllServices());
afterAll(async () => {
  await killAllServices();
  await fs.rm(workDir, { recursive: true, force: true });
});

/** A signed call that must succeed (result code 0): its result document. */
async function ok(url: string, op: OperationSpec, session: Session, params: Record<string, Value>): Promise<string> {
  const answer = await callSigned({ url } as TestApp, 'post', op, session, params);
  const xml = resultXml(answer, op);
  if (element(xml, 'result')?.attrs.code !== '0') throw new Error(`${op.name} answered ${answer.status}: ${answer.body}`);
  return xml;
}

/** One whole file: a tus upload in one PATCH, then FileAdd; answers the new file's id. */
async function putFile(url: string, session: Session, name: string, bytes: Buffer): Promise<number> {
  const tus = { 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${session.token}` };
  const created = await send(url, 'POST', '/upload/', { ...tus, 'Upload-Length': String(bytes.length) });
  expect(created.status).toBe(201);
  const location = new URL(String(created.headers.location), url).pathname;
  const patched = await send(url, 'PATCH', location, { ...tus, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }, bytes);
  expect(patched.status).toBe(204);
  const xml = await ok(url, FileAdd, session, { name, ext: 'bin', size: bytes.length, dirid: 0, hash: sha256(bytes) });
  return Number(element(xml, 'file')!.attrs.id);
}

/** The SHA-256 of what a file's FileDownload URL serves. */
async function downloadedSha256(url: string, session: Session, fileId: number): Promise<string> {
  const link = element(await ok(url, FileDownload, session, { fid: fileId }), 'result')!.attrs.url;
  return new Promise((resolve, reject) => {
    http
      .get(link, (res) => {
        const hash = createHash('sha256');
        res.on('data', (chunk: Buffer) => hash.update(chunk));
        res.once('end', () => (res.statusCode === 200 ? resolve(hash.digest('hex')) : reject(new Error(`download answered ${res.statusCode}`))));
        res.once('error', reject);
      })
      .once('error', reject);
  });
}

/** Random bytes of 1 KiB to 256 KiB. */
const someBytes = () => randomBytes(KiB + Math.floor(Math.random() * 255 * KiB));

describe('fss backup and fss restore (embedded default)', () => {
  it('backs up while uploads and permanent deletes go on; the restore passes fsck and every file has the hash it was uploaded with', async () => {
    const dataDir = path.join(workDir, 'live');
    expect((await runFss(dataDir, ['user', 'add', ACCOUNT, '--password', PASSWORD])).code).toBe(0);
    const server = await startService(dataDir);
    const session = await logIn({ url: server.url } as TestApp, 'post', ACCOUNT, PASSWORD);
    /** What each uploaded file's name was uploaded with. */
    const uploaded = new Map<string, string>();
    const ids: number[] = [];
    const upload = async (name: string) => {
      const bytes = someBytes();
      uploaded.set(name, sha256(bytes));
      ids.push(await putFile(server.url, session, name, bytes));
    };
    for (let i = 0; i < 60; i++) await upload(`before ${i}.bin`);

    // Uploads, and permanent deletes of earlier files (their blobs go at once), until the backup has ended.
    const backupDir = path.join(workDir, 'backup');
    let backupDone = false;
    let during = 0;
    const load = (async () => {
      while (!backupDone) {
        await upload(`during ${during++}.bin`);
        if (during % 3 === 0) await ok(server.url, FolderAndFileDelete, session, { dirids: '', fids: String(ids.splice(Math.floor(Math.random() * ids.length), 1)[0]), is_real: 1 });
      }
    })();
    const backup = await runFss(dataDir, ['backup', backupDir]).finally(() => (backupDone = true));
    await load;
    expect(during, 'uploads ran while the backup did').toBeGreaterThan(0);
    expect(backup.stderr).toBe('');
    expect(backup.stdout).toMatch(/^backup of \d+ file\(s\) in .*: \d+ blob\(s\), .* of content, in [\d.]+ s$/m);
    expect(backup.code).toBe(0);
    expect((await fs.stat(backupDir)).mode & 0o777).toBe(0o700);
    expect((await fs.stat(path.join(backupDir, 'secret.key'))).mode & 0o777).toBe(0o600);

    const restoredDir = path.join(workDir, 'restored');
    const restore = await runFss(restoredDir, ['restore', backupDir]);
    expect(restore.stdout).toMatch(/fsck: no problems\n$/);
    expect(restore.code).toBe(0);
    const restored = await startService(restoredDir);
    const check = await fsck(restoredDir);
    expect(`${check.code} ${check.stdout}${check.stderr}`).toBe('0 fsck: no problems\n');

    const sqlite = new SQLite(path.join(restoredDir, 'fss.sqlite'), { readonly: true });
    const rows = sqlite.prepare('SELECT id, name, sha256 FROM files').all() as Array<{ id: number; name: string; sha256: string }>;
    sqlite.close();
    expect(rows.length).toBeGreaterThanOrEqual(60 - Math.ceil(during / 3));
    const again = await logIn({ url: restored.url } as TestApp, 'post', ACCOUNT, PASSWORD);
    for (const row of rows) {
      expect(row.sha256, row.name).toBe(uploaded.get(row.name));
      expect(await downloadedSha256(restored.url, again, row.id), row.name).toBe(uploaded.get(row.name));
    }
  }, 180_000);

  it('refuses a folder that is not empty, and writes nothing into it', async () => {
    const dataDir = path.join(workDir, 'refusals');
    expect((await runFss(dataDir, ['user', 'add', ACCOUNT, '--password', PASSWORD])).code).toBe(0);
    const target = path.join(workDir, 'not-empty');
    await fs.mkdir(target);
    await fs.writeFile(path.join(target, 'notes.txt'), 'mine');
    const refused = await runFss(dataDir, ['backup', target]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is not empty');
    expect(await fs.readdir(target)).toEqual(['notes.txt']);
  });

  it('restores only a complete backup with its secret, and only into an empty data folder', async () => {
    const dataDir = path.join(workDir, 'restore-refusals');
    expect((await runFss(dataDir, ['user', 'add', ACCOUNT, '--password', PASSWORD])).code).toBe(0);
    const backupDir = path.join(workDir, 'restore-refusals-backup');
    expect((await runFss(dataDir, ['backup', backupDir])).code).toBe(0);

    const intoUsed = await runFss(dataDir, ['restore', backupDir]);
    expect(intoUsed.code).toBe(1);
    expect(intoUsed.stderr).toContain('is not empty');

    const secret = await fs.readFile(path.join(backupDir, 'secret.key'));
    await fs.rm(path.join(backupDir, 'secret.key'));
    const noSecret = await runFss(path.join(workDir, 'restore-refusals-secret'), ['restore', backupDir]);
    expect(noSecret.code).toBe(1);
    expect(noSecret.stderr).toContain('set FSS_SECRET to that secret');
    await expect(fs.readdir(path.join(workDir, 'restore-refusals-secret'))).rejects.toThrow('ENOENT');
    await fs.writeFile(path.join(backupDir, 'secret.key'), secret);

    await fs.rm(path.join(backupDir, 'backup.json'));
    const incomplete = await runFss(path.join(workDir, 'restore-refusals-new'), ['restore', backupDir]);
    expect(incomplete.code).toBe(1);
    expect(incomplete.stderr).toContain('holds no complete backup');
  });
});
