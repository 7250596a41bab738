/**
 * The folder depth limit (limits.maxFolderDepth, docs/protocol.md §7): FolderAdd and Move refuse
 * with 413 what would nest a folder deeper, a restore that would is taken to the root instead, and
 * folders at the deepest level allowed answer their whole path. Most tests use a limit of 4; the
 * last ones the default (256), with names as long as names may be.
 */
import { describe, expect, test } from 'vitest';
import { defaultLimits } from '../../src/config';
import type { FileItem, FolderItem, Listing, Services } from '../../src/operations/context';
import { ResultCode } from '../../src/operations/errors';
import { folderAdd, folderRename, move } from '../../src/operations/tree/folders';
import { getFilesWhitPath, getShareFiles } from '../../src/operations/tree/listings';
import { folderAndFileDelete, folderAndFileRestore } from '../../src/operations/tree/recycle-bin';
import { folderShare } from '../../src/operations/sharing/shares';
import { nameKey, naturalSortKey } from '../../src/operations/tree/names';
import { openTestServices, type TestServices } from '../helpers/database';
import { readListing } from '../helpers/listing-fixtures';
import { rejected } from '../helpers/refusals';
import { addFile, addFolder, addFolderChain, as, countingStatements, recomputedSize, snapshot, testAccount } from '../helpers/tree';

const signed = { uid: 0n, token: 'test-token', sign: '' };
const LIMIT = 4;

async function withLimit(maxFolderDepth = LIMIT): Promise<{ services: TestServices; alice: number }> {
  const services = await openTestServices({ config: { limits: { ...defaultLimits, maxFolderDepth } } });
  return { services, alice: await testAccount(services, 'alice') };
}

const callFolderAdd = (services: Services, accountId: number, dirid: number, name: string) =>
  folderAdd(as(services, accountId), { ...signed, dirid: BigInt(dirid), name }).then((r) => r.item as FolderItem);
const callMove = (services: Services, accountId: number, dirids: string, fids: string, todir: number) =>
  move(as(services, accountId), { ...signed, dirids, fids, todir: BigInt(todir) });
const toBin = (services: Services, accountId: number, dirids: string, fids: string) =>
  folderAndFileDelete(as(services, accountId), { ...signed, dirids, fids, is_real: 0 });
const restore = async (services: Services, accountId: number, dirids: string, fids: string) => {
  const listing = (await folderAndFileRestore(as(services, accountId), { ...signed, dirids, fids })) as Listing;
  return { folders: listing.folders as FolderItem[], files: listing.files as FileItem[] };
};

/** A chain of folders written as rows, past any limit (as an installation made before the limit holds them). */
async function insertChain(services: Services, accountId: number, parentId: number, depth: number): Promise<number[]> {
  const ids: number[] = [];
  for (let level = 1; level <= depth; level++) {
    const name = `L${level}`;
    const row = await services.db
      .insertInto('folders')
      .values({ account_id: accountId, parent_id: ids.at(-1) ?? parentId, name, name_key: nameKey(name), sort_key: naturalSortKey(name), created_at: 0, updated_at: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(row.id);
  }
  return ids;
}

async function parentOf(services: Services, folderId: number): Promise<number> {
  return (await services.db.selectFrom('folders').select('parent_id').where('id', '=', folderId).executeTakeFirstOrThrow()).parent_id;
}

describe('FolderAdd', () => {
  test('adds a folder at the deepest level allowed, and refuses one below it with 413, adding nothing', async () => {
    const { services, alice } = await withLimit();
    const chain = await addFolderChain(services, alice, LIMIT);
    const before = await snapshot(services.db, alice);

    const error = await rejected(callFolderAdd(services, alice, chain[LIMIT - 1].id, 'too deep'));

    expect([error.code, error.message]).toEqual([ResultCode.TooLarge, `no folder can be added here: folders nest at most ${LIMIT} levels deep`]);
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('a name taken is 409 before the depth is looked at', async () => {
    const { services, alice } = await withLimit();
    const chain = await addFolderChain(services, alice, LIMIT);
    await addFile(services, alice, chain[LIMIT - 1].id, 'taken', 1);
    expect((await rejected(callFolderAdd(services, alice, chain[LIMIT - 1].id, 'taken'))).code).toBe(ResultCode.Conflict);
  });

  test('a folder deeper than the limit (made before it) takes no subfolder, but files and renames as before', async () => {
    const { services, alice } = await withLimit();
    const legacy = await insertChain(services, alice, 0, LIMIT + 3);
    const deepest = legacy.at(-1)!;

    expect((await rejected(callFolderAdd(services, alice, deepest, 'sub'))).code).toBe(ResultCode.TooLarge);
    await addFile(services, alice, deepest, 'still.txt', 3);
    await folderRename(as(services, alice), { ...signed, dirid: BigInt(deepest), newname: 'renamed' });
    expect(await recomputedSize(services.db, alice, legacy[0])).toBe(3);
  });
});

describe('Move', () => {
  test('a folder whose subtree would reach deeper than the limit is 413, and nothing moves', async () => {
    const { services, alice } = await withLimit();
    const [outer, inner] = await addFolderChain(services, alice, 2);
    const x = await callFolderAdd(services, alice, 0, 'X');
    const b = await callFolderAdd(services, alice, x.id, 'B');
    await callFolderAdd(services, alice, b.id, 'C');
    const before = await snapshot(services.db, alice);

    // X would lie at 3 and C at 5.
    const error = await rejected(callMove(services, alice, String(x.id), '', inner.id));

    expect([error.code, error.message]).toEqual([ResultCode.TooLarge, `"X" cannot be moved there: folders nest at most ${LIMIT} levels deep`]);
    expect(await snapshot(services.db, alice)).toEqual(before);
    // One level higher, C lies at the deepest level allowed.
    await callMove(services, alice, String(x.id), '', outer.id);
    expect(await parentOf(services, x.id)).toBe(outer.id);
  });

  test('into a folder at the deepest level, a folder is 413 but a file moves', async () => {
    const { services, alice } = await withLimit();
    const chain = await addFolderChain(services, alice, LIMIT);
    const folder = await callFolderAdd(services, alice, 0, 'empty');
    const file = await addFile(services, alice, 0, 'f.txt', 2);

    expect((await rejected(callMove(services, alice, String(folder.id), String(file.id), chain[LIMIT - 1].id))).code).toBe(ResultCode.TooLarge);
    await callMove(services, alice, '', String(file.id), chain[LIMIT - 1].id);
    expect(await recomputedSize(services.db, alice, chain[0].id)).toBe(2);
  });

  test('a folder moved together with a folder inside it: each subtree counts where it will be', async () => {
    const { services, alice } = await withLimit();
    const [, inner] = await addFolderChain(services, alice, 2);
    const x = await callFolderAdd(services, alice, 0, 'X');
    const b = await callFolderAdd(services, alice, x.id, 'B');
    await callFolderAdd(services, alice, b.id, 'C');

    // B leaves X: X lies at 3 alone, B at 3 and C at 4.
    await callMove(services, alice, `${x.id},${b.id}`, '', inner.id);

    expect([await parentOf(services, x.id), await parentOf(services, b.id)]).toEqual([inner.id, inner.id]);
  });

  test('a folder moved up out of a subtree deeper than the limit is fine; down into it is 413', async () => {
    const { services, alice } = await withLimit();
    const legacy = await insertChain(services, alice, 0, LIMIT + 2);
    await callMove(services, alice, String(legacy[LIMIT + 1]), '', 0);
    expect(await parentOf(services, legacy[LIMIT + 1])).toBe(0);
    expect((await rejected(callMove(services, alice, String(legacy[LIMIT + 1]), '', legacy[LIMIT]))).code).toBe(ResultCode.TooLarge);
  });
});

describe('FolderAndFileRestore', () => {
  /** Top/P/F/G with F deleted to the bin, then P moved down under Q/R: F would come back at 4 and G at 5. */
  async function parentMovedDeeper() {
    const { services, alice } = await withLimit();
    const top = await callFolderAdd(services, alice, 0, 'Top');
    const p = await callFolderAdd(services, alice, top.id, 'P');
    const f = await callFolderAdd(services, alice, p.id, 'F');
    const g = await callFolderAdd(services, alice, f.id, 'G');
    const file = await addFile(services, alice, g.id, 'g.txt', 7);
    await toBin(services, alice, String(f.id), '');
    const q = await callFolderAdd(services, alice, 0, 'Q');
    const r = await callFolderAdd(services, alice, q.id, 'R');
    await callMove(services, alice, String(p.id), '', r.id);
    return { services, alice, p, f, g, file };
  }

  test('a folder that no longer fits under its old parent comes back to the root, and says so', async () => {
    const { services, alice, p, f } = await parentMovedDeeper();

    const back = await restore(services, alice, String(f.id), '');

    expect(back.folders.map((item) => [item.id, item.dir, item.path])).toEqual([[f.id, 0, '/F']]);
    expect(await parentOf(services, f.id)).toBe(0);
    expect(await recomputedSize(services.db, alice, p.id)).toBe(0);
    expect(await recomputedSize(services.db, alice, f.id)).toBe(7);
  });

  test('an entry restored into a folder that goes to the root follows that folder there', async () => {
    const { services, alice } = await withLimit(5);
    const [, p] = await addFolderChain(services, alice, 2);
    const f = await callFolderAdd(services, alice, p.id, 'F');
    const g = await callFolderAdd(services, alice, f.id, 'G');
    const h = await callFolderAdd(services, alice, g.id, 'H');
    // H goes to the bin on its own, then F (with G); then P moves down to depth 4.
    await toBin(services, alice, String(h.id), '');
    await toBin(services, alice, String(f.id), '');
    const q = await callFolderAdd(services, alice, 0, 'Q');
    const r = await callFolderAdd(services, alice, q.id, 'R');
    const s = await callFolderAdd(services, alice, r.id, 'S');
    await callMove(services, alice, String(p.id), '', s.id);

    // F (with G) would reach 6 under P: it goes to the root, and H back into G, at 3.
    const back = await restore(services, alice, `${f.id},${h.id}`, '');

    expect(back.folders.map((item) => [item.name, item.dir, item.path])).toEqual([
      ['F', 0, '/F'],
      ['H', g.id, '/F/G/H'],
    ]);
  });

  test('an entry restored beneath a folder that comes back goes to the root when it would lie too deep there', async () => {
    const { services, alice } = await withLimit(5);
    const [, p] = await addFolderChain(services, alice, 2);
    const f = await callFolderAdd(services, alice, p.id, 'F');
    const g = await callFolderAdd(services, alice, f.id, 'G');
    const h = await callFolderAdd(services, alice, g.id, 'H');
    await toBin(services, alice, String(h.id), '');
    await toBin(services, alice, String(f.id), '');
    const q = await callFolderAdd(services, alice, 0, 'Q');
    const r = await callFolderAdd(services, alice, q.id, 'R');
    await callMove(services, alice, String(p.id), '', r.id);

    // P lies at 3: F fits under it (F at 4, G at 5), but H would lie at 6 in G.
    const back = await restore(services, alice, `${f.id},${h.id}`, '');

    expect(back.folders.map((item) => [item.name, item.dir, item.path])).toEqual([
      ['F', p.id, '/Q/R/A2/F'],
      ['H', 0, '/H'],
    ]);
  });

  test('a folder that fits nowhere (the limit was lowered since it was deleted) is 413, and nothing changes', async () => {
    const { services, alice } = await withLimit();
    const legacy = await insertChain(services, alice, 0, LIMIT + 1);
    await toBin(services, alice, String(legacy[0]), '');
    const before = await snapshot(services.db, alice);

    const error = await rejected(restore(services, alice, String(legacy[0]), ''));

    expect([error.code, error.message]).toEqual([ResultCode.TooLarge, `folder ${legacy[0]} cannot be restored, not even to the root: folders nest at most ${LIMIT} levels deep`]);
    expect(await snapshot(services.db, alice)).toEqual(before);
  });

  test('a folder that fits under its old parent goes back there', async () => {
    const { services, alice } = await withLimit();
    const chain = await addFolderChain(services, alice, LIMIT);
    await toBin(services, alice, String(chain[LIMIT - 1].id), '');

    const back = await restore(services, alice, String(chain[LIMIT - 1].id), '');

    expect(back.folders.map((item) => item.dir)).toEqual([chain[LIMIT - 2].id]);
  });
});

describe('at the default limit, with the longest names', () => {
  const depth = defaultLimits.maxFolderDepth;
  const longName = (level: number) => `${level} `.padEnd(defaultLimits.maxNameLength, 'n');

  async function deepestChain() {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const chain: FolderItem[] = [];
    for (let level = 1; level <= depth; level++) chain.push(await addFolder(services, alice, chain.at(-1)?.id ?? 0, longName(level)));
    return { services, alice, chain };
  }

  test('GetFilesWhitPath of the deepest folder answers its whole chain and path, and nothing deeper can be added', async () => {
    const { services, alice, chain } = await deepestChain();
    await addFile(services, alice, chain[depth - 1].id, 'leaf.txt', 1);

    const listing = await readListing(getFilesWhitPath(as(services, alice), { ...signed, dir: String(chain[depth - 1].id), order: 'name', desc: '0' }));

    const path = chain.map((folder) => `/${folder.name}`).join('');
    expect(listing.path).toEqual({ value: path, dirs: [{ id: 0, name: '' }, ...chain.map((folder) => ({ id: folder.id, name: folder.name }))] });
    expect(listing.files.map((item) => item.path)).toEqual([`${path}/leaf.txt`]);
    expect((await rejected(callFolderAdd(services, alice, chain[depth - 1].id, 'one more'))).code).toBe(ResultCode.TooLarge);
  });

  test('the walk up is the same statements at depth 1 and at the deepest level', async () => {
    const { services, alice, chain } = await deepestChain();
    const statementsFor = async (folderId: number) => {
      const counting = countingStatements(services.db);
      const counted = { ...services, db: counting.db };
      // No listing cache: every call reads what a first call reads.
      await readListing(getFilesWhitPath(as(counted, alice), { ...signed, dir: String(folderId), order: 'name', desc: '1' }));
      return counting.count();
    };
    expect(await statementsFor(chain[depth - 1].id)).toBe(await statementsFor(chain[0].id));
  });

  test('GetShareFiles gives every shared folder of the chain its path', async () => {
    const { services, alice, chain } = await deepestChain();
    const shared = chain.filter((_, i) => i % 64 === 63);
    await folderShare(as(services, alice), { ...signed, dirids: shared.map((folder) => folder.id).join(','), downpwd: '', downValue: 0, description: '' });

    const listing = await readListing(getShareFiles(as(services, alice), { ...signed, order: 'name', desc: '0' }));

    const pathOf = (folder: FolderItem) => chain.slice(0, chain.indexOf(folder) + 1).map((f) => `/${f.name}`).join('');
    expect(listing.folders.map((item) => item.path).sort()).toEqual(shared.map(pathOf).sort());
  });
});
