/**
 * Encryption (DECISIONS.md §11) on a real SQLite database and content store, with a test clock:
 * FileEncrypt, FolderEncrypt, Unlock, Decrypt, what is locked where (listings, downloads, search,
 * adding and moving), the background jobs (progress, resumption), and what is left on disk.
 */
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Listing, Services } from '../../src/operations/context';
import { HashQueue } from '../../src/operations/crypto/hash-queue';
import { decrypt, fileEncrypt, folderEncrypt, lockedItemFor, unlock } from '../../src/operations/encryption/encryption';
import { encryptionProgress, INLINE_JOB_LIMITS, JOB_LEASE_MS, runEncryptionJobs } from '../../src/operations/encryption/encryption-jobs';
import { fileDownload, openGrantedFile, verifyDownloadToken } from '../../src/operations/content/downloads';
import { fileAdd } from '../../src/operations/content/file-add';
import { folderAdd, move } from '../../src/operations/tree/folders';
import { fileSearch, getFiles, getFilesWhitPath } from '../../src/operations/tree/listings';
import { folderAndFileDelete } from '../../src/operations/tree/recycle-bin';
import { logout } from '../../src/operations/accounts/sessions';
import { runHousekeeping } from '../../src/operations/admin/housekeeping';
import { createLogger } from '../../src/log';
import { completeUpload } from '../../src/operations/content/uploads';
import { claimJob } from '../../src/storage/db/repositories/encryption-repository';
import { callContext, openTestServices, type TestServices } from '../helpers/database';
import { contentStoreHolds, openSession, patternedBytes, signed, storeFile, type TestSession } from '../helpers/encryption';
import { rejected } from '../helpers/refusals';
import { sha256Of, stageTestUpload } from '../helpers/stored-files';

const PASSWORD = 'open sesame';
const TIP = 'the usual, with a space';

async function setup(): Promise<{ services: TestServices; alice: TestSession }> {
  const services = await openTestServices();
  return { services, alice: await openSession(services, 'alice') };
}

async function newFolder(alice: TestSession, parent: number, name: string): Promise<number> {
  const result = await folderAdd(alice.ctx, signed(alice, { dirid: BigInt(parent), name }));
  return (result.item as { id: number }).id;
}

const encryptFile = (s: TestSession, fid: number, password = PASSWORD, tip = TIP) =>
  fileEncrypt(s.ctx, signed(s, { fid: BigInt(fid), password, password_tip: tip }));
const encryptFolder = (s: TestSession, dirid: number, password = PASSWORD, tip = TIP) =>
  folderEncrypt(s.ctx, signed(s, { dirid: BigInt(dirid), password, password_tip: tip }));
const unlockItem = (s: TestSession, item: { dirid?: number; fid?: number }, password = PASSWORD) =>
  unlock(s.ctx, signed(s, { dirid: BigInt(item.dirid ?? 0), fid: BigInt(item.fid ?? 0), password }));
const decryptItem = (s: TestSession, item: { dirid?: number; fid?: number }, password = PASSWORD) =>
  decrypt(s.ctx, signed(s, { dirid: BigInt(item.dirid ?? 0), fid: BigInt(item.fid ?? 0), password }));

async function listing(result: Promise<Listing>) {
  const value = await result;
  const folders = [];
  for await (const folder of value.folders) folders.push(folder);
  const files = [];
  for await (const file of value.files) files.push(file);
  return { ...value, folders, files };
}

const list = (s: TestSession, dir: number) => listing(getFiles(s.ctx, signed(s, { dir: String(dir), order: 'name', desc: '0' })));
const search = (s: TestSession, keyword: string) => listing(fileSearch(s.ctx, signed(s, { keyword, order: 'name', desc: '0' })));

async function fileRow(services: Services, id: number) {
  return services.db
    .selectFrom('files')
    .innerJoin('content', 'content.id', 'files.content_id')
    .select(['files.encrypted', 'files.key_id', 'files.content_id', 'content.encrypted as content_encrypted', 'content.storage_key', 'content.sha256'])
    .where('files.id', '=', id)
    .executeTakeFirstOrThrow();
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Downloads through FileDownload's URL, as the /d/ route would serve it. */
async function download(services: Services, s: TestSession, fid: number, range?: { start: number; end: number }): Promise<Buffer | 'locked' | 'notFound'> {
  const result = await fileDownload(s.ctx, signed(s, { fid: BigInt(fid) }));
  const token = new URL(result.url).pathname.split('/')[2];
  const check = verifyDownloadToken(services.secret, token, services.now());
  if (check.kind !== 'valid') throw new Error(check.kind);
  const lookup = await openGrantedFile(services, check.grant);
  if (lookup.kind !== 'found') return lookup.kind;
  return readAll(await lookup.file.open(range));
}

describe('FileEncrypt', () => {
  it('refuses bad passwords and tips with 400, before looking at the file', async () => {
    const { services, alice } = await setup();
    const file = await storeFile(services, alice, 0, 'a.txt', 'secret text');
    for (const password of ['', 'abc', 'x'.repeat(65)]) expect((await rejected(encryptFile(alice, file.id, password, ''))).code).toBe(400);
    expect((await rejected(encryptFile(alice, file.id, PASSWORD, 'x'.repeat(101)))).code).toBe(400);
    expect((await rejected(encryptFile(alice, file.id, PASSWORD, `it is ${PASSWORD.toUpperCase()}!`))).code).toBe(400);
    expect((await rejected(encryptFile(alice, 999_999, 'abcd', ''))).code).toBe(404);
    // 4 and 64 characters (code points, not UTF-16 units) are allowed.
    await encryptFile(alice, file.id, '🔑🔑🔑🔑', 'x'.repeat(100));
  });

  it("answers 404 for another account's file, and 423 'already encrypted' the second time", async () => {
    const { services, alice } = await setup();
    const bob = await openSession(services, 'bob');
    const file = await storeFile(services, alice, 0, 'a.txt', 'secret text');
    expect((await rejected(encryptFile(bob, file.id))).code).toBe(404);
    await encryptFile(alice, file.id);
    const again = await rejected(encryptFile(alice, file.id));
    expect(again.code).toBe(423);
    expect(again.message).toMatch(/already encrypted/);
  });

  it('gives the file its own encrypted content under a new key; the plaintext goes from the store when nothing else references it', async () => {
    const { services, alice } = await setup();
    const file = await storeFile(services, alice, 0, 'diary.txt', 'MARKER-diary: dear diary');
    const before = await fileRow(services, file.id);
    expect(await contentStoreHolds(services, 'MARKER-diary')).toBe(true);

    await encryptFile(alice, file.id);
    const after = await fileRow(services, file.id);
    expect(after).toMatchObject({ encrypted: 1, content_encrypted: 1, sha256: before.sha256 });
    expect(after.content_id).not.toBe(before.content_id);
    expect(after.storage_key).not.toBe(before.storage_key);
    expect(after.storage_key).not.toContain(before.sha256);
    expect(await services.db.selectFrom('content').select('id').where('id', '=', before.content_id).executeTakeFirst()).toBeUndefined();
    expect(await contentStoreHolds(services, 'MARKER-diary')).toBe(false);
  });

  it('leaves the plaintext content exactly as it is while another record references it', async () => {
    const { services, alice } = await setup();
    const bob = await openSession(services, 'bob');
    const mine = await storeFile(services, alice, 0, 'shared.txt', 'MARKER-shared bytes');
    const theirs = await storeFile(services, bob, 0, 'same.txt', 'MARKER-shared bytes');
    const plain = await fileRow(services, theirs.id);
    await encryptFile(alice, mine.id);
    expect(await fileRow(services, theirs.id)).toMatchObject({ content_id: plain.content_id, content_encrypted: 0, storage_key: plain.storage_key });
    expect(await contentStoreHolds(services, 'MARKER-shared')).toBe(true);
    // Bob's copy still downloads as it was.
    expect((await download(services, bob, theirs.id))?.toString()).toBe('MARKER-shared bytes');
  });

  it('shows encrypted="1" and the tip in listings and search hits', async () => {
    const { services, alice } = await setup();
    const file = await storeFile(services, alice, 0, 'report.txt', 'numbers');
    await encryptFile(alice, file.id);
    expect((await list(alice, 0)).files).toEqual([expect.objectContaining({ id: file.id, encrypted: true, tip: TIP })]);
    expect((await search(alice, 'report')).files).toEqual([expect.objectContaining({ id: file.id, encrypted: true, tip: TIP, path: '/report.txt' })]);
  });
});

describe('Unlock and the locked file', () => {
  it('needs exactly one of dirid and fid (400), an encrypted item (409), the right password (403)', async () => {
    const { services, alice } = await setup();
    const plain = await storeFile(services, alice, 0, 'plain.txt', 'plain');
    const file = await storeFile(services, alice, 0, 'secret.txt', 'secret');
    await encryptFile(alice, file.id);
    expect((await rejected(unlockItem(alice, {}))).code).toBe(400);
    expect((await rejected(unlockItem(alice, { dirid: 5, fid: file.id }))).code).toBe(400);
    expect((await rejected(unlockItem(alice, { fid: plain.id }))).code).toBe(409);
    expect((await rejected(unlockItem(alice, { fid: 12345 }))).code).toBe(404);
    const wrong = await rejected(unlockItem(alice, { fid: file.id }, 'not the password'));
    expect(wrong.code).toBe(403);
    await unlockItem(alice, { fid: file.id });
  });

  it('a locked file downloads nothing (423 with id, tip and type); unlocked, it downloads decrypted, any range', async () => {
    const { services, alice } = await setup();
    const bytes = patternedBytes(3 * 65536 + 1000);
    const file = await storeFile(services, alice, 0, 'big.bin', bytes);
    await encryptFile(alice, file.id);

    const refusal = await rejected(fileDownload(alice.ctx, signed(alice, { fid: BigInt(file.id) })));
    expect(refusal.code).toBe(423);
    expect(refusal.details).toEqual({ id: file.id, tip: TIP, type: 'file' });

    await unlockItem(alice, { fid: file.id });
    expect((await download(services, alice, file.id)) as Buffer).toEqual(bytes);
    const C = 65536;
    for (const [start, end] of [
      [0, 0],
      [C - 1, C],
      [C, 2 * C - 1],
      [C - 5, 2 * C + 5],
      [2 * C, bytes.length - 1],
      [bytes.length - 1, bytes.length - 1],
      [17, 3 * C + 17],
    ]) {
      expect(await download(services, alice, file.id, { start, end })).toEqual(bytes.subarray(start, end + 1));
    }
  });

  it('unlocks for the calling session only, until it ends (Logout)', async () => {
    const { services, alice } = await setup();
    const file = await storeFile(services, alice, 0, 'secret.txt', 'secret');
    await encryptFile(alice, file.id);
    await unlockItem(alice, { fid: file.id });
    const other = await openSession(services, 'alice', { existing: true });
    expect(await lockedItemFor(services.db, alice.caller, { type: 'file', id: file.id })).toBeNull();
    expect(await lockedItemFor(services.db, other.caller, { type: 'file', id: file.id })).toEqual({ type: 'file', id: file.id, tip: TIP });
    expect(await lockedItemFor(services.db, null, { type: 'file', id: file.id, accountId: alice.uid })).toEqual({ type: 'file', id: file.id, tip: TIP });

    // A URL made while unlocked stops working when the session ends.
    const result = await fileDownload(alice.ctx, signed(alice, { fid: BigInt(file.id) }));
    const check = verifyDownloadToken(services.secret, new URL(result.url).pathname.split('/')[2], services.now());
    await logout(alice.ctx, signed(alice, {}));
    expect(await services.db.selectFrom('unlocks').selectAll().execute()).toEqual([]);
    expect(check.kind === 'valid' && (await openGrantedFile(services, check.grant)).kind).toBe('locked');
  });

  it('the data key rests only wrapped by the password and sealed under the token: no row holds it in the clear', async () => {
    const { services, alice } = await setup();
    const file = await storeFile(services, alice, 0, 'secret.txt', 'secret');
    await encryptFile(alice, file.id);
    await unlockItem(alice, { fid: file.id });
    const key = await services.db.selectFrom('encryption_keys').selectAll().executeTakeFirstOrThrow();
    expect(key).toMatchObject({ item_type: 'file', item_id: file.id, tip: TIP, kdf: 'scrypt', kdf_n: 32768, kdf_r: 8, kdf_p: 3 });
    expect(key.wrapped_key).toMatch(/^v1\./);
    const row = await services.db.selectFrom('unlocks').selectAll().executeTakeFirstOrThrow();
    expect(row.sealed_key).toMatch(/^v1\./);
    expect(row.sealed_key).not.toBe(key.wrapped_key);
    const token = await services.db.selectFrom('tokens').select('expires_at').where('id', '=', alice.caller.tokenId).executeTakeFirstOrThrow();
    expect(row.expires_at).toBe(token.expires_at);
  });
});

describe('wrong passwords are throttled', () => {
  it('5 wrong passwords for one item block it (429 with retryAfter), even for the right password; the block runs out', async () => {
    const { services, alice } = await setup();
    const file = await storeFile(services, alice, 0, 'secret.txt', 'secret');
    await encryptFile(alice, file.id);
    for (let i = 0; i < 5; i++) expect((await rejected(unlockItem(alice, { fid: file.id }, `wrong ${i}`))).code).toBe(403);
    const blocked = await rejected(unlockItem(alice, { fid: file.id }));
    expect(blocked.code).toBe(429);
    expect(blocked.details.retryAfter).toBeGreaterThan(0);
    expect((await rejected(decryptItem(alice, { fid: file.id }))).code).toBe(429);
    services.clock.advance(Number(blocked.details.retryAfter) * 1000);
    await unlockItem(alice, { fid: file.id });
  });

  it('20 wrong passwords across the items of one account block them all', async () => {
    const { services, alice } = await setup();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const file = await storeFile(services, alice, 0, `f${i}.txt`, `content ${i}`);
      await encryptFile(alice, file.id);
      ids.push(file.id);
    }
    for (let i = 0; i < 20; i++) await rejected(unlockItem(alice, { fid: ids[i % 4] }, `wrong ${i}`));
    expect((await rejected(unlockItem(alice, { fid: ids[4] }))).code).toBe(429);
  }, 180_000); // 25 real scrypt hashes of ~0.2 s each: a minute and more on a CI machine busy with other files

  it('while every password-hash slot is taken and the queue is full, Unlock and FileEncrypt answer 429 for a second, counting and changing nothing', async () => {
    const { services, alice } = await setup();
    const file = await storeFile(services, alice, 0, 'secret.txt', 'secret');
    const plain = await storeFile(services, alice, 0, 'plain.txt', 'plain');
    await encryptFile(alice, file.id);
    const busy: TestSession = { ...alice, ctx: callContext({ ...services, passwordHashes: new HashQueue(1, 0) }, alice.caller) };
    let releaseSlot!: () => void;
    const slotTaken = busy.ctx.services.passwordHashes.run(() => new Promise<void>((resolve) => (releaseSlot = resolve)));

    for (let i = 0; i < 5; i++) expect(await rejected(unlockItem(busy, { fid: file.id }, `wrong ${i}`))).toMatchObject({ code: 429, details: { retryAfter: 1 } });
    expect(await rejected(encryptFile(busy, plain.id))).toMatchObject({ code: 429, details: { retryAfter: 1 } });
    releaseSlot();
    await slotTaken;

    // The five refused attempts were no wrong passwords: the item is not blocked.
    await unlockItem(busy, { fid: file.id });
    expect((await fileRow(services, plain.id)).encrypted).toBe(0);
    expect(await services.db.selectFrom('encryption_keys').select('id').execute()).toHaveLength(1);
  });
});

describe('FolderEncrypt', () => {
  it('locks the folder and its subtree: listings answer 423 with the id and tip, search hides what is beneath', async () => {
    const { services, alice } = await setup();
    const top = await newFolder(alice, 0, 'Private');
    const inner = await newFolder(alice, top, 'Inner');
    await storeFile(services, alice, top, 'plan.txt', 'MARKER-plan');
    await storeFile(services, alice, inner, 'deep plan.txt', 'MARKER-deep');
    await storeFile(services, alice, 0, 'public plan.txt', 'public');
    await encryptFolder(alice, top);

    for (const dir of [top, inner]) {
      const refusal = await rejected(list(alice, dir));
      expect(refusal.code).toBe(423);
      expect(refusal.details).toEqual({ id: top, tip: TIP, type: 'folder' });
      expect((await rejected(listing(getFilesWhitPath(alice.ctx, signed(alice, { dir: String(dir), order: 'name', desc: '0' }))))).code).toBe(423);
    }
    expect((await list(alice, 0)).folders).toEqual([expect.objectContaining({ id: top, encrypted: true, tip: TIP })]);
    expect((await search(alice, 'plan')).files.map((f) => f.name)).toEqual(['public plan.txt']);
    // A small folder is done within the call: nothing beneath it is plaintext any more.
    expect(await contentStoreHolds(services, 'MARKER-')).toBe(false);

    await unlockItem(alice, { dirid: inner });
    const unlocked = await list(alice, top);
    expect(unlocked.folders).toEqual([expect.objectContaining({ id: inner, encrypted: true, tip: TIP })]);
    expect(unlocked.files).toEqual([expect.objectContaining({ name: 'plan.txt', encrypted: true, tip: TIP })]);
    expect((await search(alice, 'plan')).files.map((f) => f.name)).toEqual(['deep plan.txt', 'plan.txt', 'public plan.txt']);
    expect((await download(services, alice, unlocked.files[0].id))?.toString()).toBe('MARKER-plan');
  });

  it('refuses the root (400), an encrypted folder and one inside an encrypted folder (423)', async () => {
    const { alice } = await setup();
    const top = await newFolder(alice, 0, 'Private');
    const inner = await newFolder(alice, top, 'Inner');
    expect((await rejected(encryptFolder(alice, 0))).code).toBe(400);
    await encryptFolder(alice, top);
    expect((await rejected(encryptFolder(alice, top))).code).toBe(423);
    expect((await rejected(encryptFolder(alice, inner))).code).toBe(423);
  });

  it('files and folders added later: refused while locked (423), encrypted with the folder while unlocked', async () => {
    const { services, alice } = await setup();
    const top = await newFolder(alice, 0, 'Private');
    await encryptFolder(alice, top);
    const bytes = Buffer.from('MARKER-late arrival');
    const upload = await stageTestUpload(services, alice.uid, bytes);
    await completeUpload(services, alice.uid, upload);
    const add = () => fileAdd(alice.ctx, signed(alice, { name: 'late.txt', ext: 'txt', size: BigInt(bytes.length), dirid: BigInt(top), hash: sha256Of(bytes) }));

    expect((await rejected(add())).code).toBe(423);
    expect((await rejected(newFolder(alice, top, 'Sub'))).code).toBe(423);

    await unlockItem(alice, { dirid: top });
    const added = (await add()).item;
    const sub = await folderAdd(alice.ctx, signed(alice, { dirid: BigInt(top), name: 'Sub' }));
    expect(sub.item).toMatchObject({ encrypted: true, tip: TIP });
    // The file's bytes are encrypted by a job, in the background.
    expect(await contentStoreHolds(services, 'MARKER-late')).toBe(true);
    await runEncryptionJobs(services);
    expect(await fileRow(services, added.id)).toMatchObject({ encrypted: 1, content_encrypted: 1 });
    expect(await contentStoreHolds(services, 'MARKER-late')).toBe(false);
    expect((await download(services, alice, added.id))?.toString()).toBe('MARKER-late arrival');
  });

  it('moves: out of a locked folder 423, into a locked one 423; into an unlocked one the items are encrypted with it', async () => {
    const { services, alice } = await setup();
    const top = await newFolder(alice, 0, 'Private');
    const inside = await storeFile(services, alice, top, 'inside.txt', 'inside');
    await encryptFolder(alice, top);
    const outsider = await storeFile(services, alice, 0, 'outsider.txt', 'MARKER-outsider');
    const box = await newFolder(alice, 0, 'Box');
    await storeFile(services, alice, box, 'boxed.txt', 'MARKER-boxed');
    const moveItems = (dirids: number[], fids: number[], todir: number) =>
      move(alice.ctx, signed(alice, { dirids: dirids.join(','), fids: fids.join(','), todir: BigInt(todir) }));

    expect((await rejected(moveItems([], [inside.id], 0))).code).toBe(423);
    expect((await rejected(moveItems([box], [outsider.id], top))).code).toBe(423);

    await unlockItem(alice, { dirid: top });
    await moveItems([box], [outsider.id], top);
    expect(await services.db.selectFrom('folders').select(['encrypted', 'key_id']).where('id', '=', box).executeTakeFirstOrThrow()).toMatchObject({ encrypted: 1 });
    await runEncryptionJobs(services);
    expect(await contentStoreHolds(services, 'MARKER-')).toBe(false);

    // Moved out again, a file keeps its encryption (and its key): still locked for other sessions.
    await moveItems([], [outsider.id], 0);
    const other = await openSession(services, 'alice', { existing: true });
    expect(await lockedItemFor(services.db, other.caller, { type: 'file', id: outsider.id })).toMatchObject({ type: 'file', id: outsider.id });
    expect((await download(services, alice, outsider.id))?.toString()).toBe('MARKER-outsider');
  });

  it('a big folder is a background job: progress is counted, and it resumes where it stopped', async () => {
    const { services, alice } = await setup();
    const top = await newFolder(alice, 0, 'Photos');
    const count = INLINE_JOB_LIMITS.files + 10;
    for (let i = 0; i < count; i++) await storeFile(services, alice, top, `p${i}.jpg`, `MARKER-photo ${i}`);
    await encryptFolder(alice, top);

    expect(await encryptionProgress(services, alice.uid, top)).toMatchObject({ kind: 'encrypt', state: 'waiting', totalFiles: count, doneFiles: 0 });
    expect(await runEncryptionJobs(services, { maxFiles: 7 })).toEqual({ jobsFinished: 0, files: 7 });
    expect(await encryptionProgress(services, alice.uid, top)).toMatchObject({ state: 'waiting', totalFiles: count, doneFiles: 7 });
    // Listings report the job's progress on the folder, in percent.
    const halfway = (await list(alice, 0)).folders.find((folder) => folder.id === top)!;
    expect(halfway.progress).toBeGreaterThan(0);
    expect(halfway.progress).toBeLessThan(100);

    // An instance takes the job and dies: its lease keeps others off until it runs out.
    expect(await claimJob(services.db, { owner: 'dead instance', now: services.now(), leaseUntil: new Date(services.now().getTime() + JOB_LEASE_MS) })).toBeDefined();
    expect(await runEncryptionJobs(services)).toEqual({ jobsFinished: 0, files: 0 });
    services.clock.advance(JOB_LEASE_MS);
    expect(await runEncryptionJobs(services)).toEqual({ jobsFinished: 1, files: count - 7 });
    expect(await encryptionProgress(services, alice.uid, top)).toMatchObject({ state: 'finished', doneFiles: count, failedFiles: 0 });
    expect((await list(alice, 0)).folders.find((folder) => folder.id === top)!.progress).toBeUndefined();
    expect(await contentStoreHolds(services, 'MARKER-photo')).toBe(false);
    const job = await services.db.selectFrom('encryption_jobs').select('sealed_key').executeTakeFirstOrThrow();
    expect(job.sealed_key).toBeNull();
  });

  it('encrypts files in the bin beneath the folder too, so a restore brings back no plaintext', async () => {
    const { services, alice } = await setup();
    const top = await newFolder(alice, 0, 'Private');
    const binned = await storeFile(services, alice, top, 'old.txt', 'MARKER-old');
    await folderAndFileDelete(alice.ctx, signed(alice, { dirids: '', fids: String(binned.id), is_real: 0 }));
    await encryptFolder(alice, top);
    expect(await fileRow(services, binned.id)).toMatchObject({ encrypted: 1 });
    expect(await contentStoreHolds(services, 'MARKER-old')).toBe(false);
  });
});

describe('Decrypt', () => {
  it('a file: back to plaintext content, joined with existing content of the same hash; its key goes', async () => {
    const { services, alice } = await setup();
    const bob = await openSession(services, 'bob');
    const file = await storeFile(services, alice, 0, 'a.txt', 'same bytes');
    await encryptFile(alice, file.id);
    await unlockItem(alice, { fid: file.id });
    const theirs = await storeFile(services, bob, 0, 'b.txt', 'same bytes');
    expect((await rejected(decryptItem(alice, { fid: file.id }, 'wrong password'))).code).toBe(403);
    await decryptItem(alice, { fid: file.id });
    const row = await fileRow(services, file.id);
    expect(row).toMatchObject({ encrypted: 0, key_id: null, content_encrypted: 0, content_id: (await fileRow(services, theirs.id)).content_id });
    expect(await services.db.selectFrom('encryption_keys').selectAll().execute()).toEqual([]);
    expect(await services.db.selectFrom('unlocks').selectAll().execute()).toEqual([]);
    expect(await services.db.selectFrom('content').select('id').where('encrypted', '=', 1).execute()).toEqual([]);
    expect((await list(alice, 0)).files).toEqual([expect.objectContaining({ encrypted: false })]);
    expect((await download(services, alice, file.id))?.toString()).toBe('same bytes');
  });

  it('a file: stores its plaintext anew when no content has its hash', async () => {
    const { services, alice } = await setup();
    const file = await storeFile(services, alice, 0, 'a.txt', 'MARKER-unique');
    await encryptFile(alice, file.id);
    expect(await contentStoreHolds(services, 'MARKER-unique')).toBe(false);
    await decryptItem(alice, { fid: file.id });
    expect(await contentStoreHolds(services, 'MARKER-unique')).toBe(true);
    expect((await download(services, alice, file.id))?.toString()).toBe('MARKER-unique');
  });

  it('a folder: its region becomes plain, its files plaintext; what is inside an encrypted folder is refused (409)', async () => {
    const { services, alice } = await setup();
    const top = await newFolder(alice, 0, 'Private');
    const inner = await newFolder(alice, top, 'Inner');
    const a = await storeFile(services, alice, top, 'a.txt', 'MARKER-a');
    const b = await storeFile(services, alice, inner, 'b.txt', 'MARKER-b');
    await encryptFolder(alice, top);
    expect((await rejected(decryptItem(alice, { dirid: inner }))).code).toBe(409);
    expect((await rejected(decryptItem(alice, { fid: a.id }))).code).toBe(409);
    await decryptItem(alice, { dirid: top });
    expect((await list(alice, inner)).files).toEqual([expect.objectContaining({ id: b.id, encrypted: false })]);
    expect(await contentStoreHolds(services, 'MARKER-a')).toBe(true);
    expect(await contentStoreHolds(services, 'MARKER-b')).toBe(true);
    expect(await services.db.selectFrom('encryption_keys').selectAll().execute()).toEqual([]);
    expect((await rejected(decryptItem(alice, { dirid: top }))).code).toBe(409);
  });
});

describe('housekeeping', () => {
  it('an encrypted file deleted for good takes its content and, then, its key with it', async () => {
    const { services, alice } = await setup();
    const file = await storeFile(services, alice, 0, 'a.txt', 'bytes');
    await encryptFile(alice, file.id);
    await folderAndFileDelete(alice.ctx, signed(alice, { dirids: '', fids: String(file.id), is_real: 1 }));
    await runHousekeeping(services, createLogger(() => {}));
    expect(await services.db.selectFrom('content').selectAll().execute()).toEqual([]);
    expect(await services.db.selectFrom('encryption_keys').selectAll().execute()).toEqual([]);
  });
});
