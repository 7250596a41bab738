/**
 * The listing cache (operations/tree/listing-cache.ts) on a real database (SQLite, or PostgreSQL with
 * the postgres project): every kind of change to a folder's items shows up in the next GetFiles,
 * whoever makes it (this instance's operations, or another instance writing to the same database),
 * because the database moves the account's listing version (0008_listing_versions); the bounds
 * hold; and with the cache off the answers are the same.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import type { FileItem, FolderItem, Listing, Services } from '../../src/operations/context';
import { folderEncrypt } from '../../src/operations/encryption/encryption';
import { fileRename, folderAdd, folderRename, move } from '../../src/operations/tree/folders';
import { fileLink } from '../../src/operations/sharing/links';
import { callCaches } from '../../src/operations/caches';
import { getFiles, getFilesWhitPath } from '../../src/operations/tree/listings';
import { folderAndFileDelete, folderAndFileRestore } from '../../src/operations/tree/recycle-bin';
import { folderShare } from '../../src/operations/sharing/shares';
import { closeDatabase, openDatabase } from '../../src/storage/db/engine/database';
import { findOperation } from '../../src/catalog/operations';
import { addAccount, callSigned, logIn, startTestApp } from '../helpers/app-server';
import { callContext, openTestServices, type TestServices } from '../helpers/database';
import { FORMS } from '../helpers/requests';
import { openSession, signed, storeFile, type TestSession } from '../helpers/encryption';
import { readListing } from '../helpers/listing-fixtures';
import { SLICE_MS, requestTaken } from '../../src/time-slices';

interface Setup {
  readonly services: TestServices;
  readonly alice: TestSession;
  /** Another instance on the same database: its own connection(s), and the cache turned off. */
  readonly other: Services;
  readonly otherAlice: TestSession;
}

async function setup(): Promise<Setup> {
  const services = await openTestServices();
  const alice = await openSession(services, 'alice');
  const otherConfig = { ...services.config, cacheMb: 0 };
  const otherDb = await openDatabase(otherConfig);
  onTestFinished(() => closeDatabase(otherDb));
  const other: Services = { ...services, db: otherDb, config: otherConfig, caches: callCaches(otherConfig) };
  return { services, alice, other, otherAlice: { ...alice, ctx: callContext(other, alice.caller) } };
}

async function listing(session: TestSession, dir: number, order = 'name', desc = '0') {
  return readListing(getFiles(session.ctx, signed(session, { dir: String(dir), order, desc })));
}

/** What a listing shows of each item, as the client sees it. */
function shown(items: ReadonlyArray<FolderItem | FileItem>) {
  return items.map((item) => ({
    name: item.name,
    shared: item.shared,
    linked: item.linked,
    encrypted: item.encrypted,
    tip: item.tip,
    progress: item.type === 'folder' ? item.progress : undefined,
  }));
}

/** The listing of `dir` as alice sees it now, read through the cache (and once more, now cached). */
async function names(session: TestSession, dir: number): Promise<string[]> {
  await listing(session, dir);
  return (await listing(session, dir)).names;
}

async function newFolder(session: TestSession, parent: number, name: string): Promise<number> {
  const result = await folderAdd(session.ctx, signed(session, { dirid: BigInt(parent), name }));
  return result.item.id;
}

describe('the listing cache serves an unchanged folder', () => {
  it('GetFiles of an unchanged folder answers the items kept when it was first read', async () => {
    const { services, alice } = await setup();
    await storeFile(services, alice, 0, 'a.txt', 'a');
    const call = async () => (await getFiles(alice.ctx, signed(alice, { dir: '0', order: 'name', desc: '0' }))) as Listing;
    await call();
    const [second, third] = [await call(), await call()];
    expect(third.files).toBe(second.files);
    expect(third.count).toBe(1);
  });

  it('each order is kept apart', async () => {
    const { services, alice } = await setup();
    await storeFile(services, alice, 0, 'a.txt', 'a');
    await storeFile(services, alice, 0, 'b.txt', 'bb');
    await listing(alice, 0, 'name', '0');
    expect((await listing(alice, 0, 'name', '1')).names).toEqual(['b.txt', 'a.txt']);
    expect((await listing(alice, 0, 'size', '0')).names).toEqual(['a.txt', 'b.txt']);
  });
});

describe('every kind of change shows up in the next GetFiles', () => {
  it('a folder added', async () => {
    const { alice } = await setup();
    expect(await names(alice, 0)).toEqual([]);
    await newFolder(alice, 0, 'Docs');
    expect(await names(alice, 0)).toEqual(['Docs']);
  });

  it('a file and a folder renamed', async () => {
    const { services, alice } = await setup();
    const docs = await newFolder(alice, 0, 'Docs');
    const file = await storeFile(services, alice, 0, 'a.txt', 'a');
    expect(await names(alice, 0)).toEqual(['Docs', 'a.txt']);
    await fileRename(alice.ctx, signed(alice, { fid: BigInt(file.id), newname: 'z.txt' }));
    await folderRename(alice.ctx, signed(alice, { dirid: BigInt(docs), newname: 'Papers' }));
    expect(await names(alice, 0)).toEqual(['Papers', 'z.txt']);
  });

  it('a rename of a folder above changes the paths GetFilesWhitPath gives', async () => {
    const { services, alice } = await setup();
    const docs = await newFolder(alice, 0, 'Docs');
    await storeFile(services, alice, docs, 'a.txt', 'a');
    const read = async () => (await readListing(getFilesWhitPath(alice.ctx, signed(alice, { dir: String(docs), order: 'name', desc: '0' })))).files[0]!.path;
    expect(await read()).toBe('/Docs/a.txt');
    await folderRename(alice.ctx, signed(alice, { dirid: BigInt(docs), newname: 'Papers' }));
    expect(await read()).toBe('/Papers/a.txt');
  });

  it('items moved in and out', async () => {
    const { services, alice } = await setup();
    const [left, right] = [await newFolder(alice, 0, 'Left'), await newFolder(alice, 0, 'Right')];
    const file = await storeFile(services, alice, left, 'a.txt', 'a');
    expect(await names(alice, left)).toEqual(['a.txt']);
    expect(await names(alice, right)).toEqual([]);
    await move(alice.ctx, signed(alice, { dirids: '', fids: String(file.id), todir: BigInt(right) }));
    expect(await names(alice, left)).toEqual([]);
    expect(await names(alice, right)).toEqual(['a.txt']);
  });

  it('a folder deleted to the bin and restored', async () => {
    const { services, alice } = await setup();
    const docs = await newFolder(alice, 0, 'Docs');
    await storeFile(services, alice, 0, 'a.txt', 'a');
    expect(await names(alice, 0)).toEqual(['Docs', 'a.txt']);
    await folderAndFileDelete(alice.ctx, signed(alice, { dirids: String(docs), fids: '', is_real: 0 }));
    expect(await names(alice, 0)).toEqual(['a.txt']);
    await folderAndFileRestore(alice.ctx, signed(alice, { dirids: String(docs), fids: '' }));
    expect(await names(alice, 0)).toEqual(['Docs', 'a.txt']);
  });

  it('the shared and linked flags', async () => {
    const { services, alice } = await setup();
    const docs = await newFolder(alice, 0, 'Docs');
    const file = await storeFile(services, alice, 0, 'a.txt', 'a');
    await names(alice, 0);
    await folderShare(alice.ctx, signed(alice, { dirids: String(docs), downpwd: '', downValue: 0, description: '' }));
    await fileLink(alice.ctx, signed(alice, { fid: BigInt(file.id) }));
    const after = await listing(alice, 0);
    expect(shown(after.folders)[0]).toMatchObject({ name: 'Docs', shared: true });
    expect(shown(after.files)[0]).toMatchObject({ name: 'a.txt', linked: true });
  });

  it("a folder's encryption, its key's tip and its job's progress", async () => {
    const { services, alice, other } = await setup();
    const secret = await newFolder(alice, 0, 'Secret');
    await storeFile(services, alice, secret, 'a.txt', 'abc');
    expect(shown((await listing(alice, 0)).folders)[0]).toMatchObject({ encrypted: false });
    await folderEncrypt(alice.ctx, signed(alice, { dirid: BigInt(secret), password: 'open sesame', password_tip: 'the usual' }));
    expect(shown((await listing(alice, 0)).folders)[0]).toMatchObject({ encrypted: true, tip: 'the usual' });

    // Written by another instance, as a job runner there (or the CLI) would write them.
    const keyId = (await other.db.selectFrom('folders').select('key_id').where('id', '=', secret).executeTakeFirstOrThrow()).key_id!;
    await other.db.updateTable('encryption_keys').set({ tip: 'a new tip' }).where('id', '=', keyId).execute();
    expect(shown((await listing(alice, 0)).folders)[0]).toMatchObject({ tip: 'a new tip' });
    await other.db
      .insertInto('encryption_jobs')
      .values(jobRow(alice.uid, keyId, secret, services.now().getTime()))
      .execute();
    expect(shown((await listing(alice, 0)).folders)[0]).toMatchObject({ progress: 25 });
    await other.db.updateTable('encryption_jobs').set({ done_bytes: 75 }).where('folder_id', '=', secret).where('total_bytes', '=', 100).execute();
    expect(shown((await listing(alice, 0)).folders)[0]).toMatchObject({ progress: 75 });
  });

  it('a file added, renamed and deleted by another instance on the same database', async () => {
    const { services, alice, otherAlice } = await setup();
    expect(await names(alice, 0)).toEqual([]);
    const file = await storeFile({ ...services, db: otherAlice.ctx.services.db }, otherAlice, 0, 'from-there.txt', 'x');
    expect(await names(alice, 0)).toEqual(['from-there.txt']);
    await fileRename(otherAlice.ctx, signed(otherAlice, { fid: BigInt(file.id), newname: 'renamed.txt' }));
    expect(await names(alice, 0)).toEqual(['renamed.txt']);
    await otherAlice.ctx.services.db.deleteFrom('files').where('id', '=', file.id).execute();
    expect(await names(alice, 0)).toEqual([]);
  });

  it("another account's change leaves the listing as it was, and its own shows up", async () => {
    const { services, alice } = await setup();
    const bob = await openSession(services, 'bob');
    await storeFile(services, alice, 0, 'a.txt', 'a');
    expect(await names(alice, 0)).toEqual(['a.txt']);
    await storeFile(services, bob, 0, 'b.txt', 'b');
    expect(await names(alice, 0)).toEqual(['a.txt']);
    expect(await names(bob, 0)).toEqual(['b.txt']);
  });
});

/** An unfinished encryption job of `folderId`, a quarter done. */
function jobRow(accountId: number, keyId: number, folderId: number, now: number) {
  return {
    account_id: accountId,
    kind: 'encrypt' as const,
    key_id: keyId,
    folder_id: folderId,
    total_files: 1,
    total_bytes: 100,
    done_files: 0,
    done_bytes: 25,
    failed_files: 0,
    created_at: now,
  };
}

describe('over the wire, with the rendered answers kept (protocol/asmx/rendered-answers.ts)', () => {
  const GetFiles = findOperation('UserService', 'GetFiles')!;
  const FolderAdd = findOperation('FileService', 'FolderAdd')!;

  it.each(FORMS)('%s: the same GetFiles answers the same bytes, and a change shows up in the next one', async (form) => {
    const app = await startTestApp();
    onTestFinished(() => app.close());
    await addAccount(app, 'alice', 'alice-password-1');
    const session = await logIn(app, form, 'alice', 'alice-password-1');
    const list = () => callSigned(app, form, GetFiles, session, { dir: '0', order: 'name', desc: '0' });
    const [first, second, third] = [await list(), await list(), await list()];
    expect(second.body).toBe(first.body);
    expect(third.body).toBe(first.body);
    expect(first.body).not.toContain('Docs');
    expect((await callSigned(app, form, FolderAdd, session, { dirid: 0, name: 'Docs' })).status).toBe(200);
    const after = await list();
    expect(after.status).toBe(200);
    expect(after.body).toContain('name="Docs"');
  });
});

describe('with the cache off', () => {
  it('FSS_CACHE_MB=0 keeps no listing', async () => {
    const { other } = await setup();
    expect(other.caches.listings.enabled).toBe(false);
  });

  it('the answers are the same as with the cache on, change after change', async () => {
    const { services, alice, otherAlice } = await setup();
    const both = async (dir: number) => {
      const [on, off] = [await listing(alice, dir), await listing(otherAlice, dir)];
      expect(shown([...on.folders, ...on.files])).toEqual(shown([...off.folders, ...off.files]));
      expect(on.count).toBe(off.count);
      return on.names;
    };
    const docs = await newFolder(alice, 0, 'Docs');
    const file = await storeFile(services, alice, 0, 'a.txt', 'a');
    expect(await both(0)).toEqual(['Docs', 'a.txt']);
    await move(alice.ctx, signed(alice, { dirids: '', fids: String(file.id), todir: BigInt(docs) }));
    expect(await both(0)).toEqual(['Docs']);
    expect(await both(docs)).toEqual(['a.txt']);
    await folderAndFileDelete(alice.ctx, signed(alice, { dirids: String(docs), fids: '', is_real: 0 }));
    expect(await both(0)).toEqual([]);
  });
});

describe('a listing too big to keep', () => {
  it('gives the event loop back after its count when the call has held it for a slice, before any row is read', async () => {
    const { otherAlice } = await setup();
    requestTaken(performance.now() - SLICE_MS - 1);
    let turned = false;
    setImmediate(() => (turned = true));
    // Without a cache every listing is streamed, as one too big to keep is.
    const result = await getFiles(otherAlice.ctx, signed(otherAlice, { dir: '0', order: 'name', desc: '0' }));
    expect(turned).toBe(true);
    await readListing(Promise.resolve(result));
  });
});
