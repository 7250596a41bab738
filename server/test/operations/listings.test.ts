/**
 * The listing operations on a real SQLite database: order and its ties, what each listing holds,
 * paths, the recycle bin's attributes, shares and links, and a 100,000-file folder streamed.
 */
import { CompiledQuery } from 'kysely';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { Listing } from '../../src/operations/context';
import {
  getFiles,
  getFilesWhitPath,
  getLinkFiles,
  getNewUploadFiles,
  getRecycleFiles,
  getShareFiles,
  parseListingOrder,
} from '../../src/operations/tree/listings';
import { CURSOR_IDLE_MS, childCountQuery } from '../../src/storage/db/repositories/listings-repository';
import { openTestServices, type TestServices } from '../helpers/database';
import { readListing, testAccount, type TestAccount } from '../helpers/listing-fixtures';
import { testEngine } from '../helpers/postgres';

const DAY = 86_400_000;
const at = (iso: string) => new Date(iso);

/** The parameters every listing call carries; the pipeline has checked uid, token and sign. */
function signed<T extends object>(account: TestAccount, params: T) {
  return { uid: BigInt(account.id), token: 'test-token', sign: 'checked', ...params };
}

function list(account: TestAccount, dir: string | null, order = 'name', desc = '0') {
  return readListing(getFiles(account.ctx, signed(account, { dir, order, desc })));
}

async function setup(config: { cacheMb?: number } = {}): Promise<{ services: TestServices; alice: TestAccount }> {
  const services = await openTestServices({ config });
  return { services, alice: await testAccount(services, 'alice') };
}

describe('order and desc', () => {
  it.each(['name', 'time', 'size', 'share', 'link'])('order=%s is accepted with desc "0" and "1"', (order) => {
    expect(parseListingOrder(order, '0')).toEqual({ key: order, descending: false });
    expect(parseListingOrder(order, '1')).toEqual({ key: order, descending: true });
  });

  it.each([null, '', 'NAME', ' name', 'name ', 'date', 'names'])('order=%j is refused with 400 naming the allowed values', (order) => {
    expect(() => parseListingOrder(order, '0')).toThrow(expect.objectContaining({ code: 400, message: expect.stringContaining('name, time, size, share, link') }));
  });

  it.each([null, '', ' 1', '1 ', 'true', '2', '01', 'desc'])('desc=%j is refused with 400 naming "1" and "0"', (desc) => {
    expect(() => parseListingOrder('name', desc)).toThrow(expect.objectContaining({ code: 400, message: expect.stringMatching(/"1".*"0"/) }));
  });

  it('a listing call with a bad order is refused before anything is read', async () => {
    const { alice } = await setup();
    await expect(getFiles(alice.ctx, signed(alice, { dir: '0', order: 'Name', desc: '0' }))).rejects.toMatchObject({ code: 400 });
    await expect(getRecycleFiles(alice.ctx, signed(alice, { order: 'name', desc: 'yes' }))).rejects.toMatchObject({ code: 400 });
  });
});

describe('GetFiles order', () => {
  it('lists folders first, then files, each by natural case-insensitive name ("file2" before "file10")', async () => {
    const { alice } = await setup();
    for (const name of ['file10.txt', 'File2.txt', 'file1.txt', 'B.txt', 'a.txt']) await alice.file(name);
    for (const name of ['Zeta', 'alpha', 'dir10', 'Dir9']) await alice.folder(name);
    const listing = await list(alice, '0');
    expect(listing.names).toEqual(['alpha', 'Dir9', 'dir10', 'Zeta', 'a.txt', 'B.txt', 'file1.txt', 'File2.txt', 'file10.txt']);
    expect(listing.count).toBe(9);
  });

  it('desc=1 reverses each group, folders still first', async () => {
    const { alice } = await setup();
    for (const name of ['file10.txt', 'file2.txt', 'a.txt']) await alice.file(name);
    for (const name of ['b', 'a']) await alice.folder(name);
    expect((await list(alice, '0', 'name', '1')).names).toEqual(['b', 'a', 'file10.txt', 'file2.txt', 'a.txt']);
  });

  it('names that sort equal ("file2", "file02") are ordered by id, ascending in both directions', async () => {
    const { alice } = await setup();
    await alice.file('file2.txt');
    await alice.file('file02.txt');
    await alice.file('file3.txt');
    expect((await list(alice, '0', 'name', '0')).names).toEqual(['file2.txt', 'file02.txt', 'file3.txt']);
    expect((await list(alice, '0', 'name', '1')).names).toEqual(['file3.txt', 'file2.txt', 'file02.txt']);
  });

  it('order=time sorts by last modification; equal times by name, ascending even when desc=1', async () => {
    const { alice } = await setup();
    await alice.file('c.txt', { updated: at('2026-03-01T00:00:00Z') });
    await alice.file('b.txt', { updated: at('2026-02-01T00:00:00Z') });
    await alice.file('a.txt', { updated: at('2026-02-01T00:00:00Z') });
    await alice.file('d.txt', { updated: at('2026-01-01T00:00:00Z') });
    expect((await list(alice, '0', 'time', '0')).names).toEqual(['d.txt', 'a.txt', 'b.txt', 'c.txt']);
    expect((await list(alice, '0', 'time', '1')).names).toEqual(['c.txt', 'a.txt', 'b.txt', 'd.txt']);
  });

  it('order=size sorts folders and files by size, ties by name', async () => {
    const { alice } = await setup();
    await alice.folder('big', { size: 900 });
    await alice.folder('small', { size: 10 });
    await alice.file('x.bin', { size: 5 });
    await alice.file('y.bin', { size: 50 });
    await alice.file('w.bin', { size: 50 });
    expect((await list(alice, '0', 'size', '0')).names).toEqual(['small', 'big', 'x.bin', 'w.bin', 'y.bin']);
    expect((await list(alice, '0', 'size', '1')).names).toEqual(['big', 'small', 'w.bin', 'y.bin', 'x.bin']);
  });

  it('order=share with desc=1 puts shared items first; desc=0 puts them last; ties by name', async () => {
    const { alice } = await setup();
    await alice.file('b.txt', { shared: true });
    await alice.file('a.txt');
    await alice.file('c.txt', { shared: true });
    await alice.folder('plain');
    await alice.folder('public', { shared: true });
    expect((await list(alice, '0', 'share', '1')).names).toEqual(['public', 'plain', 'b.txt', 'c.txt', 'a.txt']);
    expect((await list(alice, '0', 'share', '0')).names).toEqual(['plain', 'public', 'a.txt', 'b.txt', 'c.txt']);
  });

  it('order=link with desc=1 puts linked files first; ties by name', async () => {
    const { alice } = await setup();
    await alice.file('b.txt');
    await alice.file('z.txt', { linked: true });
    await alice.file('a.txt');
    await alice.file('y.txt', { linked: true });
    expect((await list(alice, '0', 'link', '1')).names).toEqual(['y.txt', 'z.txt', 'a.txt', 'b.txt']);
    expect((await list(alice, '0', 'link', '0')).names).toEqual(['a.txt', 'b.txt', 'y.txt', 'z.txt']);
  });
});

describe('GetFiles contents', () => {
  it('"0", "" and an absent dir all list the root', async () => {
    const { alice } = await setup();
    await alice.file('top.txt');
    for (const dir of ['0', '', null]) expect((await list(alice, dir)).names).toEqual(['top.txt']);
  });

  it('lists only the live children of the folder, and counts them', async () => {
    const { alice } = await setup();
    const docs = await alice.folder('Docs');
    const binned = await alice.folder('Old', { parent: docs, deleted: { at: at('2026-01-02T00:00:00Z'), from: '/Docs' } });
    await alice.file('inside-old.txt', { parent: binned, binnedUnder: binned });
    await alice.file('gone.txt', { parent: docs, deleted: { at: at('2026-01-02T00:00:00Z'), from: '/Docs' } });
    const sub = await alice.folder('Sub', { parent: docs });
    await alice.file('deeper.txt', { parent: sub });
    await alice.file('kept.txt', { parent: docs });
    await alice.file('at-root.txt');
    const listing = await list(alice, String(docs));
    expect(listing.names).toEqual(['Sub', 'kept.txt']);
    expect(listing.count).toBe(2);
  });

  it('gives each item its attributes', async () => {
    const { alice } = await setup();
    const docs = await alice.folder('Docs', { size: 1234, updated: at('2026-02-03T04:05:06Z'), shared: true });
    const file = await alice.file('Report.PDF', { parent: docs, size: 77, updated: at('2026-02-04T00:00:00Z'), linked: true });
    const root = await list(alice, '0');
    expect(root.folders[0]).toEqual({
      type: 'folder',
      id: docs,
      dir: 0,
      name: 'Docs',
      size: 1234,
      time: at('2026-02-03T04:05:06Z'),
      shared: true,
      linked: false,
      encrypted: false,
    });
    const inDocs = await list(alice, String(docs));
    expect(inDocs.files[0]).toEqual({
      type: 'file',
      id: file,
      dir: docs,
      name: 'Report.PDF',
      ext: 'pdf',
      size: 77,
      hash: 'ab'.repeat(32),
      time: at('2026-02-04T00:00:00Z'),
      shared: false,
      linked: true,
      encrypted: false,
    });
    expect(inDocs.files[0].path).toBeUndefined();
  });

  it("another account's folder is not found (404), the same answer as a missing one", async () => {
    const { services, alice } = await setup();
    const bob = await testAccount(services, 'bob');
    const bobs = await bob.folder('Private');
    await expect(list(alice, String(bobs))).rejects.toMatchObject({ code: 404, message: 'folder not found' });
    await expect(list(alice, '999999')).rejects.toMatchObject({ code: 404, message: 'folder not found' });
    await expect(list(alice, '99999999999999999999999')).rejects.toMatchObject({ code: 404 });
  });

  it('a folder in the bin, or beneath one, is not found (404)', async () => {
    const { alice } = await setup();
    const binned = await alice.folder('Old', { deleted: { at: at('2026-01-02T00:00:00Z'), from: '/' } });
    const beneath = await alice.folder('Inner', { parent: binned, binnedUnder: binned });
    await expect(list(alice, String(binned))).rejects.toMatchObject({ code: 404 });
    await expect(list(alice, String(beneath))).rejects.toMatchObject({ code: 404 });
  });

  it.each(['abc', '-1', '1.5', ' 1', '1 ', '0x10', '１'])('a dir that is not decimal digits (%j) is refused with 400', async (dir) => {
    const { alice } = await setup();
    await expect(list(alice, dir)).rejects.toMatchObject({ code: 400 });
  });
});

describe('GetFilesWhitPath', () => {
  it('gives the path of a folder 50 levels deep, root first, and each item its path', async () => {
    const { alice } = await setup();
    let parent = 0;
    const chain: Array<{ id: number; name: string }> = [{ id: 0, name: '' }];
    for (let level = 1; level <= 50; level++) {
      parent = await alice.folder(`level ${level}`, { parent });
      chain.push({ id: parent, name: `level ${level}` });
    }
    await alice.file('leaf.txt', { parent });
    await alice.folder('child', { parent });
    const expectedPath = chain
      .slice(1)
      .map((link) => `/${link.name}`)
      .join('');
    const listing = await readListing(getFilesWhitPath(alice.ctx, signed(alice, { dir: String(parent), order: 'name', desc: '0' })));
    expect(listing.path).toEqual({ value: expectedPath, dirs: chain });
    expect(listing.folders.map((item) => item.path)).toEqual([`${expectedPath}/child`]);
    expect(listing.files.map((item) => item.path)).toEqual([`${expectedPath}/leaf.txt`]);
    expect(listing.count).toBe(2);
  });

  it('at the root the path is "/" with the root alone, and items are "/name"', async () => {
    const { alice } = await setup();
    await alice.folder('A');
    await alice.file('b.txt');
    const listing = await readListing(getFilesWhitPath(alice.ctx, signed(alice, { dir: '', order: 'name', desc: '0' })));
    expect(listing.path).toEqual({ value: '/', dirs: [{ id: 0, name: '' }] });
    expect([...listing.folders, ...listing.files].map((item) => item.path)).toEqual(['/A', '/b.txt']);
  });

  it("another account's folder, or one in the bin, is not found (404)", async () => {
    const { services, alice } = await setup();
    const bob = await testAccount(services, 'bob');
    const bobs = await bob.folder('Private');
    const binned = await alice.folder('Old', { deleted: { at: at('2026-01-02T00:00:00Z'), from: '/' } });
    for (const dir of [bobs, binned]) {
      await expect(readListing(getFilesWhitPath(alice.ctx, signed(alice, { dir: String(dir), order: 'name', desc: '0' })))).rejects.toMatchObject({ code: 404 });
    }
  });
});

describe('a folder of 100,000 files', () => {
  it('is counted, then streamed from a cursor: every item, in natural order', async () => {
    const { alice } = await setup();
    const folder = await alice.folder('Big');
    const COUNT = 100_000;
    const names = Array.from({ length: COUNT }, (_, i) => `file ${COUNT - i}.dat`);
    await alice.files(names, { parent: folder });

    const listing = (await getFiles(alice.ctx, signed(alice, { dir: String(folder), order: 'name', desc: '0' }))) as Listing;
    expect(listing.count).toBe(COUNT);
    expect(Array.isArray(listing.files)).toBe(false);
    expect(Symbol.asyncIterator in listing.files).toBe(true);

    let seen = 0;
    let previous = 0;
    for await (const item of listing.files) {
      const number = Number(/^file (\d+)\.dat$/.exec(item.name)?.[1]);
      expect(number).toBe(previous + 1);
      previous = number;
      seen++;
    }
    expect(seen).toBe(COUNT);
  }, 60_000);

  // Row by row from the table (the (account, parent) index SQLite picks without statistics), a
  // count of 100,000 files takes two to three times as long, in one step of the event loop.
  it.runIf(testEngine() === 'sqlite')('is counted from the listing indexes of live items, not from the table', async () => {
    const { services, alice } = await setup();
    const query = childCountQuery(services.db, alice.id, 0).compile(services.db);
    const { rows } = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
    expect(rows.map((row) => row.detail).filter((detail) => detail.startsWith('SEARCH'))).toEqual([
      expect.stringMatching(/^SEARCH folders USING (COVERING )?INDEX folders_listing \(/),
      expect.stringMatching(/^SEARCH files USING (COVERING )?INDEX files_listing \(/),
    ]);
  });
});

// A folder's listing is streamed from a cursor when the listing cache does not keep it (too big,
// or the cache off, as here): what these say of cursors is said of that path.
const streamed = { cacheMb: 0 };

describe('listings and the database connection', () => {
  it('a listing that is never read holds nothing: the next call runs', async () => {
    const { alice } = await setup(streamed);
    await alice.file('a.txt');
    await getFiles(alice.ctx, signed(alice, { dir: '0', order: 'name', desc: '0' }));
    expect((await list(alice, '0')).names).toEqual(['a.txt']);
  });

  it.each([
    ['name', '0'],
    ['name', '1'],
    ['time', '1'],
    ['size', '0'],
    ['share', '1'],
  ])('a reader that pauses lets go of the database, then resumes in order (order=%s desc=%s)', async (order, desc) => {
    const { alice } = await setup(streamed);
    for (let i = 1; i <= 30; i++) {
      await alice.file(`f${i}.txt`, { updated: new Date(Date.UTC(2026, 0, 1 + (i % 3))), size: i % 4, shared: i % 5 === 0 });
    }
    await alice.file('f02.txt');
    const expected = (await list(alice, '0', order, desc)).names;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });

    const listing = (await getFiles(alice.ctx, signed(alice, { dir: '0', order, desc }))) as Listing;
    const reader = (listing.files as AsyncIterable<{ name: string }>)[Symbol.asyncIterator]();
    const read: string[] = [];
    for (let i = 0; i < 10; i++) read.push((await reader.next()).value.name);
    await vi.advanceTimersByTimeAsync(3 * CURSOR_IDLE_MS);
    // Were the paused cursor still open, this call would wait for SQLite's one connection forever.
    expect((await list(alice, '0')).count).toBe(31);
    for (let next = await reader.next(); !next.done; next = await reader.next()) read.push(next.value.name);
    expect(read).toEqual(expected);
  });

  it('a listing abandoned half-way releases its cursor', async () => {
    const { alice } = await setup(streamed);
    await alice.files(Array.from({ length: 50 }, (_, i) => `f${i}.txt`));
    const listing = (await getFiles(alice.ctx, signed(alice, { dir: '0', order: 'name', desc: '0' }))) as Listing;
    let read = 0;
    for await (const _ of listing.files) if (++read === 5) break;
    expect((await list(alice, '0')).count).toBe(50);
  });
});

describe('GetNewUploadFiles', () => {
  it('lists live files added in the last 30 days, with their paths', async () => {
    const { services, alice } = await setup();
    const now = services.clock.now().getTime();
    const docs = await alice.folder('Docs');
    await alice.file('old.txt', { created: new Date(now - 31 * DAY) });
    await alice.file('recent.txt', { created: new Date(now - 29 * DAY), parent: docs });
    await alice.file('today.txt', { created: new Date(now - 1000) });
    await alice.file('binned.txt', { created: new Date(now - 1000), deleted: { at: new Date(now), from: '/' } });
    const listing = await readListing(getNewUploadFiles(alice.ctx, signed(alice, { order: 'name', desc: '0' })));
    expect(listing.files.map((item) => [item.name, item.path])).toEqual([
      ['recent.txt', '/Docs/recent.txt'],
      ['today.txt', '/today.txt'],
    ]);
    expect(listing.folders).toEqual([]);
    expect(listing.count).toBe(2);
  });

  it('the window moves with the clock', async () => {
    const { services, alice } = await setup();
    await alice.file('a.txt', { created: services.clock.now() });
    services.clock.advance(30 * DAY + 1);
    const listing = await readListing(getNewUploadFiles(alice.ctx, signed(alice, { order: 'name', desc: '0' })));
    expect(listing.count).toBe(0);
  });

  it('answers the newest 500, sorted by the order asked for', async () => {
    const { services, alice } = await setup();
    const now = services.clock.now().getTime();
    for (let i = 0; i < 510; i++) await alice.file(`n${i}.txt`, { created: new Date(now - (510 - i) * 60_000), size: i });
    const listing = await readListing(getNewUploadFiles(alice.ctx, signed(alice, { order: 'size', desc: '1' })));
    expect(listing.count).toBe(500);
    expect(listing.files[0].name).toBe('n509.txt');
    expect(listing.files.at(-1)?.name).toBe('n10.txt');
    expect(listing.names).not.toContain('n9.txt');
  });
});

describe('GetRecycleFiles', () => {
  it('lists the items deleted directly with deleted, from, purge and their original path', async () => {
    const { services, alice } = await setup();
    const deletedAt = at('2026-01-10T12:00:00Z');
    const old = await alice.folder('Old', { deleted: { at: deletedAt, from: '/' } });
    await alice.file('inside.txt', { parent: old, binnedUnder: old });
    const docs = await alice.folder('Docs');
    await alice.file('gone.txt', { parent: docs, deleted: { at: deletedAt, from: '/Docs' } });
    await alice.file('live.txt', { parent: docs });
    const listing = await readListing(getRecycleFiles(alice.ctx, signed(alice, { order: 'name', desc: '0' })));
    expect(listing.count).toBe(2);
    const purge = new Date(deletedAt.getTime() + services.config.recycleRetentionDays * DAY);
    expect(listing.folders).toEqual([expect.objectContaining({ name: 'Old', dir: 0, path: '/Old', bin: { deleted: deletedAt, from: '/', purge } })]);
    expect(listing.files).toEqual([
      expect.objectContaining({ name: 'gone.txt', dir: docs, path: '/Docs/gone.txt', bin: { deleted: deletedAt, from: '/Docs', purge } }),
    ]);
  });

  it('the purge date follows the configured retention', async () => {
    const services = await openTestServices({ config: { recycleRetentionDays: 7 } });
    const alice = await testAccount(services, 'alice');
    await alice.file('gone.txt', { deleted: { at: at('2026-01-10T00:00:00Z'), from: '/' } });
    const listing = await readListing(getRecycleFiles(alice.ctx, signed(alice, { order: 'name', desc: '0' })));
    expect(listing.files[0].bin?.purge).toEqual(at('2026-01-17T00:00:00Z'));
  });

  it('order=time sorts the bin by deletion time', async () => {
    const { alice } = await setup();
    await alice.file('a.txt', { updated: at('2026-01-01T00:00:00Z'), deleted: { at: at('2026-01-05T00:00:00Z'), from: '/' } });
    await alice.file('b.txt', { updated: at('2026-01-03T00:00:00Z'), deleted: { at: at('2026-01-04T00:00:00Z'), from: '/' } });
    await alice.file('c.txt', { updated: at('2026-01-02T00:00:00Z'), deleted: { at: at('2026-01-06T00:00:00Z'), from: '/' } });
    expect((await readListing(getRecycleFiles(alice.ctx, signed(alice, { order: 'time', desc: '0' })))).names).toEqual(['b.txt', 'a.txt', 'c.txt']);
    expect((await readListing(getRecycleFiles(alice.ctx, signed(alice, { order: 'time', desc: '1' })))).names).toEqual(['c.txt', 'a.txt', 'b.txt']);
  });

  it("does not list another account's bin", async () => {
    const { services, alice } = await setup();
    const bob = await testAccount(services, 'bob');
    await bob.file('bobs.txt', { deleted: { at: at('2026-01-10T00:00:00Z'), from: '/' } });
    expect((await readListing(getRecycleFiles(alice.ctx, signed(alice, { order: 'name', desc: '0' })))).count).toBe(0);
  });
});

describe('GetShareFiles and GetLinkFiles', () => {
  async function share(account: TestAccount, itemType: 'folder' | 'file', itemId: number, code: string) {
    await account.db
      .insertInto('shares')
      .values({ account_id: account.id, item_type: itemType, item_id: itemId, code, download_limit: 5, downloads: 2, description: 'for you', created_at: 0, updated_at: 0 })
      .execute();
  }

  async function link(account: TestAccount, fileId: number, code: string, hits = 0) {
    await account.db.insertInto('links').values({ account_id: account.id, file_id: fileId, code, hits, created_at: 0 }).execute();
  }

  it('are empty while nothing is shared or linked', async () => {
    const { alice } = await setup();
    await alice.file('a.txt');
    expect((await readListing(getShareFiles(alice.ctx, signed(alice, { order: 'name', desc: '0' })))).count).toBe(0);
    expect((await readListing(getLinkFiles(alice.ctx, signed(alice, { order: 'name', desc: '0' })))).count).toBe(0);
  });

  it('GetShareFiles lists shared live items with their share attributes and paths', async () => {
    const { alice } = await setup();
    const docs = await alice.folder('Docs', { shared: true });
    const file = await alice.file('plan b.txt', { parent: docs, shared: true });
    const binned = await alice.file('binned.txt', { shared: true, deleted: { at: at('2026-01-02T00:00:00Z'), from: '/' } });
    await share(alice, 'folder', docs, 'code-docs');
    await share(alice, 'file', file, 'code-plan');
    await share(alice, 'file', binned, 'code-binned');
    const listing = await readListing(getShareFiles(alice.ctx, signed(alice, { order: 'name', desc: '0' })));
    expect(listing.count).toBe(2);
    expect(listing.names).toEqual(['Docs', 'plan b.txt']);
    expect(listing.folders[0]).toMatchObject({ path: '/Docs', share: { code: 'code-docs', url: 'http://fss.test/s/code-docs' } });
    expect(listing.files[0]).toMatchObject({
      path: '/Docs/plan b.txt',
      share: { code: 'code-plan', url: 'http://fss.test/s/code-plan', downpwd: '', downValue: 5, downloads: 2, description: 'for you', image: '' },
    });
  });

  it('GetLinkFiles lists linked live files with url and hits', async () => {
    const { alice } = await setup();
    const docs = await alice.folder('Docs');
    const file = await alice.file('a b&c.txt', { parent: docs, linked: true });
    const binned = await alice.file('binned.txt', { linked: true, deleted: { at: at('2026-01-02T00:00:00Z'), from: '/' } });
    await link(alice, file, 'lnk1', 42);
    await link(alice, binned, 'lnk2');
    const listing = await readListing(getLinkFiles(alice.ctx, signed(alice, { order: 'name', desc: '0' })));
    expect(listing.count).toBe(1);
    expect(listing.files[0]).toMatchObject({
      name: 'a b&c.txt',
      path: '/Docs/a b&c.txt',
      link: { url: 'http://fss.test/l/lnk1/a%20b%26c.txt', hits: 42 },
    });
  });
});
