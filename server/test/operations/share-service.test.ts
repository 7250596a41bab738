/**
 * The anonymous ShareService (DECISIONS.md §9) on a real SQLite file: ShareOpen, ShareList and
 * ShareDownload; extraction codes and their throttling; shares of items in the bin; the download
 * limit, counted atomically; and the download URLs a share issues, bound to it.
 */
import { describe, expect, test } from 'vitest';
import type { CallContext, FileItem, FolderItem, ItemResult, Listing, Services, UrlResult } from '../../src/operations/context';
import { openGrantedFile, verifyDownloadToken } from '../../src/operations/content/downloads';
import { ResultCode } from '../../src/operations/errors';
import { move } from '../../src/operations/tree/folders';
import { folderAndFileDelete, folderAndFileRestore } from '../../src/operations/tree/recycle-bin';
import { shareDownload, shareList, shareOpen } from '../../src/operations/sharing/share-service';
import { fileShare, folderShare, unshare } from '../../src/operations/sharing/shares';
import { shareRules } from '../../src/operations/accounts/throttle';
import { callContext, openTestServices, type TestServices } from '../helpers/database';
import { rejected } from '../helpers/refusals';
import { addFile, addFolder, as, testAccount } from '../helpers/tree';

const signed = { uid: 0n, token: 'test-token', sign: '' };
const MINUTE = 60_000;

const visitor = (services: Services, address = '198.51.100.1'): CallContext => callContext(services, null, address);

async function shareOf(services: Services, accountId: number, type: 'file' | 'folder', id: number, downpwd = '', downValue = 0): Promise<string> {
  const params = { ...signed, downpwd, downValue, description: 'have a look' };
  const result = (
    type === 'file'
      ? await fileShare(as(services, accountId), { ...params, fids: String(id) })
      : await folderShare(as(services, accountId), { ...params, dirids: String(id) })
  ) as Listing;
  const [item] = [...(result.folders as FolderItem[]), ...(result.files as FileItem[])];
  return item.share!.code;
}

const open = (services: Services, code: string, downpwd = '', address?: string) =>
  shareOpen(visitor(services, address), { code, downpwd }) as Promise<ItemResult>;
const list = async (services: Services, code: string, dir = '0', order = 'name', desc = '0', downpwd = '') => {
  const listing = (await shareList(visitor(services), { code, downpwd, dir, order, desc })) as Listing;
  const folders: FolderItem[] = [];
  const files: FileItem[] = [];
  for await (const folder of listing.folders) folders.push(folder);
  for await (const file of listing.files) files.push(file);
  return { count: listing.count, folders, files, names: [...folders, ...files].map((item) => item.name) };
};
const download = (services: Services, code: string, fid: number, downpwd = '', address?: string) =>
  shareDownload(visitor(services, address), { code, downpwd, fid: BigInt(fid) }) as Promise<UrlResult>;

/** What the /d/ route would do with the URL: verify its token, then look the file up. */
async function opened(services: Services, url: string): Promise<string> {
  const token = /\/d\/([^/]+)\//.exec(url)![1];
  const check = verifyDownloadToken(services.secret, token, services.now());
  if (check.kind !== 'valid') return check.kind;
  return (await openGrantedFile(services, check.grant)).kind;
}

async function setUp(): Promise<{ services: TestServices; alice: number; bob: number }> {
  const services = await openTestServices();
  return { services, alice: await testAccount(services, 'alice'), bob: await testAccount(services, 'bob') };
}

const toBin = (services: Services, accountId: number, dirids: string, fids: string) =>
  folderAndFileDelete(as(services, accountId), { ...signed, dirids, fids, is_real: 0 });
const restore = (services: Services, accountId: number, dirids: string, fids: string) =>
  folderAndFileRestore(as(services, accountId), { ...signed, dirids, fids });

describe('ShareOpen', () => {
  test('answers the shared item with its share attributes, never the extraction code', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'report.pdf', 42);
    const code = await shareOf(services, alice, 'file', file.id, 'abcd', 3);

    const { item } = await open(services, code, 'abcd');
    expect(item).toMatchObject({ type: 'file', id: file.id, name: 'report.pdf', size: 42, shared: true });
    expect(item.path).toBeUndefined();
    expect(item.share).toEqual({
      code,
      url: `http://fss.test/s/${code}`,
      downpwd: '',
      downValue: 3,
      downloads: 0,
      description: 'have a look',
      image: '',
    });
  });

  test('an unknown or malformed code is 404', async () => {
    const { services } = await setUp();
    for (const code of ['AAAAAAAAAAAAAAAAAAAAAA', 'nope', '', '../../etc/passwd']) {
      expect((await rejected(open(services, code))).code).toBe(ResultCode.NotFound);
    }
    expect((await rejected(shareOpen(visitor(services), { code: null, downpwd: null }))).code).toBe(ResultCode.NotFound);
  });

  test('a share with an extraction code: none given is 403 "needs", a wrong one 403; the right one (in any Unicode form) opens', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const code = await shareOf(services, alice, 'file', file.id, 'Café');
    const none = await rejected(open(services, code, ''));
    expect(none.code).toBe(ResultCode.Forbidden);
    expect(none.message).toContain('needs its extraction code');
    expect(none.reason).toBe('downpwd-required');
    const wrong = await rejected(open(services, code, 'cafe'));
    expect(wrong.code).toBe(ResultCode.Forbidden);
    expect(wrong.reason).toBe('downpwd-wrong');
    await open(services, code, 'Café');
    await open(services, code, 'Cafe\u0301');
  });

  test('a share whose item is in the bin, or beneath a binned folder, answers 404 at once, and again after a restore', async () => {
    const { services, alice } = await setUp();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const inner = await addFolder(services, alice, docs.id, 'Inner');
    const file = await addFile(services, alice, inner.id, 'a.txt', 1);
    const folderCode = await shareOf(services, alice, 'folder', inner.id);
    const fileCode = await shareOf(services, alice, 'file', file.id);

    await toBin(services, alice, String(docs.id), '');
    for (const code of [folderCode, fileCode]) expect((await rejected(open(services, code))).code).toBe(ResultCode.NotFound);
    await restore(services, alice, String(docs.id), '');
    await open(services, folderCode);
    await open(services, fileCode);

    await toBin(services, alice, '', String(file.id));
    expect((await rejected(open(services, fileCode))).code).toBe(ResultCode.NotFound);
    await restore(services, alice, '', String(file.id));
    expect((await open(services, fileCode)).item.id).toBe(file.id);
  });

  test('an encrypted item answers 423 without its tip (the owner’s hint is not for visitors)', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const code = await shareOf(services, alice, 'file', file.id, 'abcd');
    await services.db.updateTable('files').set({ encrypted: 1 }).where('id', '=', file.id).execute();
    // The extraction code comes first: without it, nothing is said about the item.
    expect((await rejected(open(services, code, 'wxyz'))).code).toBe(ResultCode.Forbidden);
    const error = await rejected(open(services, code, 'abcd'));
    expect(error.code).toBe(ResultCode.Locked);
    expect(error.details).toEqual({ id: file.id });
  });
});

describe('throttling', () => {
  test('wrong share codes are counted per address: beyond the limit 429 with retryAfter; other addresses are not affected', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const code = await shareOf(services, alice, 'file', file.id);
    for (let i = 0; i < shareRules.address.limit; i++) await rejected(open(services, `wrong-code-${i}`, '', '203.0.113.9'));

    const blocked = await rejected(open(services, code, '', '203.0.113.9'));
    expect(blocked.code).toBe(ResultCode.TooManyAttempts);
    expect(blocked.details.retryAfter).toBe(60);
    await open(services, code, '', '203.0.113.10');

    services.clock.advance(MINUTE);
    await open(services, code, '', '203.0.113.9');
  });

  test('wrong extraction codes are counted per share and address: then even the right code waits; another address may try', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const code = await shareOf(services, alice, 'file', file.id, 'right-code');
    for (let i = 0; i < shareRules.pair.limit; i++) {
      expect((await rejected(open(services, code, `guess-${i}`, '203.0.113.20'))).code).toBe(ResultCode.Forbidden);
    }
    const blocked = await rejected(open(services, code, 'right-code', '203.0.113.20'));
    expect(blocked.code).toBe(ResultCode.TooManyAttempts);
    expect(blocked.details.retryAfter).toBeGreaterThan(0);
    await open(services, code, 'right-code', '203.0.113.21');
    // ShareList and ShareDownload check the same counters.
    await expect(download(services, code, file.id, 'right-code', '203.0.113.20')).rejects.toMatchObject({ code: ResultCode.TooManyAttempts });
  });

  test('wrong extraction codes from many addresses block the share for everyone, for a while', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const code = await shareOf(services, alice, 'file', file.id, 'right-code');
    for (let i = 0; i < shareRules.share.limit; i++) await rejected(open(services, code, 'nope', `192.0.2.${i}`));
    expect((await rejected(open(services, code, 'right-code', '192.0.2.200'))).code).toBe(ResultCode.TooManyAttempts);
    services.clock.advance(shareRules.share.firstBlockMs);
    await open(services, code, 'right-code', '192.0.2.200');
  });

  test('asking without an extraction code is not a wrong guess, and a share in the bin is not a wrong code', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const code = await shareOf(services, alice, 'file', file.id, 'right-code');
    for (let i = 0; i < shareRules.pair.limit + 1; i++) expect((await rejected(open(services, code, ''))).code).toBe(ResultCode.Forbidden);
    await open(services, code, 'right-code');
    await toBin(services, alice, '', String(file.id));
    for (let i = 0; i < shareRules.address.limit + 1; i++) expect((await rejected(open(services, code))).code).toBe(ResultCode.NotFound);
    await restore(services, alice, '', String(file.id));
    await open(services, code, 'right-code');
  });
});

describe('ShareList', () => {
  test('lists the shared folder and folders inside it, in the order asked for, without paths', async () => {
    const { services, alice } = await setUp();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const sub = await addFolder(services, alice, docs.id, 'Sub');
    await addFolder(services, alice, docs.id, 'Alpha');
    await addFile(services, alice, docs.id, 'file10.txt', 5);
    await addFile(services, alice, docs.id, 'file2.txt', 50);
    await addFile(services, alice, sub.id, 'deep.txt', 1);
    const code = await shareOf(services, alice, 'folder', docs.id);

    const root = await list(services, code);
    expect(root.count).toBe(4);
    expect(root.names).toEqual(['Alpha', 'Sub', 'file2.txt', 'file10.txt']);
    expect([...root.folders, ...root.files].every((item) => item.path === undefined)).toBe(true);
    // Sub holds 1 byte, Alpha none; folders first in every order.
    expect((await list(services, code, '', 'size', '1')).names).toEqual(['Sub', 'Alpha', 'file2.txt', 'file10.txt']);
    expect((await list(services, code, String(docs.id), 'name', '1')).names).toEqual(['Sub', 'Alpha', 'file10.txt', 'file2.txt']);
    expect((await list(services, code, String(sub.id))).names).toEqual(['deep.txt']);
  });

  test('a folder outside the shared subtree, a binned one, or a file share is 404; a bad order or dir is 400', async () => {
    const { services, alice, bob } = await setUp();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const sub = await addFolder(services, alice, docs.id, 'Sub');
    const outside = await addFolder(services, alice, 0, 'Private');
    const theirs = await addFolder(services, bob, 0, 'Theirs');
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const code = await shareOf(services, alice, 'folder', sub.id);
    const fileCode = await shareOf(services, alice, 'file', file.id);

    for (const dir of [outside.id, docs.id, theirs.id, 999_999]) {
      expect((await rejected(list(services, code, String(dir)))).code).toBe(ResultCode.NotFound);
    }
    expect((await rejected(list(services, fileCode))).code).toBe(ResultCode.NotFound);
    expect((await rejected(list(services, code, '0', 'NAME'))).code).toBe(ResultCode.InvalidArgument);
    expect((await rejected(list(services, code, '0', 'name', 'yes'))).code).toBe(ResultCode.InvalidArgument);
    expect((await rejected(list(services, code, '-1'))).code).toBe(ResultCode.InvalidArgument);

    const inner = await addFolder(services, alice, sub.id, 'Inner');
    await toBin(services, alice, String(inner.id), '');
    expect((await rejected(list(services, code, String(inner.id)))).code).toBe(ResultCode.NotFound);
  });

  test('a folder inside that is encrypted answers 423; the rest of the share still lists', async () => {
    const { services, alice } = await setUp();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const vault = await addFolder(services, alice, docs.id, 'Vault');
    const code = await shareOf(services, alice, 'folder', docs.id);
    await services.db.updateTable('folders').set({ encrypted: 1 }).where('id', '=', vault.id).execute();
    expect((await rejected(list(services, code, String(vault.id)))).code).toBe(ResultCode.Locked);
    expect((await list(services, code)).names).toEqual(['Vault']);
  });

  test('needs the extraction code like every call of the share', async () => {
    const { services, alice } = await setUp();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const code = await shareOf(services, alice, 'folder', docs.id, 'abcd');
    expect((await rejected(list(services, code))).code).toBe(ResultCode.Forbidden);
    expect((await list(services, code, '0', 'name', '0', 'abcd')).count).toBe(0);
  });
});

describe('ShareDownload', () => {
  test('a file share: a short-lived URL for that file, counted; another fid is 404', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'report.pdf', 10);
    const other = await addFile(services, alice, 0, 'other.pdf', 10);
    const code = await shareOf(services, alice, 'file', file.id);

    const result = await download(services, code, file.id);
    expect(result.url).toMatch(/^http:\/\/fss\.test\/d\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}\/report\.pdf$/);
    expect(result.expires!.getTime() - services.now().getTime()).toBe(10 * MINUTE);
    expect(await opened(services, result.url)).toBe('found');
    expect((await rejected(download(services, code, other.id))).code).toBe(ResultCode.NotFound);
    const [row] = await services.db.selectFrom('shares').select('downloads').execute();
    expect(row.downloads).toBe(1);
  });

  test('a folder share: any live file beneath it; not one outside, nor an encrypted one', async () => {
    const { services, alice } = await setUp();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const sub = await addFolder(services, alice, docs.id, 'Sub');
    const deep = await addFile(services, alice, sub.id, 'deep.txt', 1);
    const outside = await addFile(services, alice, 0, 'outside.txt', 1);
    const locked = await addFile(services, alice, docs.id, 'locked.txt', 1);
    await services.db.updateTable('files').set({ encrypted: 1 }).where('id', '=', locked.id).execute();
    const code = await shareOf(services, alice, 'folder', docs.id);

    expect(await opened(services, (await download(services, code, deep.id)).url)).toBe('found');
    expect((await rejected(download(services, code, outside.id))).code).toBe(ResultCode.NotFound);
    expect((await rejected(download(services, code, locked.id))).code).toBe(ResultCode.Locked);
    expect((await rejected(download(services, code, 0))).code).toBe(ResultCode.NotFound);
  });

  test('downValue: the limit is kept, refused calls use nothing up, and the limit reached is 403', async () => {
    const { services, alice } = await setUp();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const file = await addFile(services, alice, docs.id, 'a.txt', 1);
    const outside = await addFile(services, alice, 0, 'b.txt', 1);
    const code = await shareOf(services, alice, 'folder', docs.id, 'abcd', 2);

    await rejected(download(services, code, outside.id, 'abcd'));
    await rejected(download(services, code, file.id, 'wrong'));
    await download(services, code, file.id, 'abcd');
    await download(services, code, file.id, 'abcd');
    const refused = await rejected(download(services, code, file.id, 'abcd'));
    expect(refused.code).toBe(ResultCode.Forbidden);
    expect(refused.message).toContain('download limit reached');
    expect(refused.reason).toBe('download-limit');
    expect((await open(services, code, 'abcd')).item.share).toMatchObject({ downValue: 2, downloads: 2 });
  });

  test('concurrent downloads never pass the limit: downValue=2, 20 at once → exactly 2 URLs', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const code = await shareOf(services, alice, 'file', file.id, '', 2);
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => download(services, code, file.id)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    const refusals = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(refusals).toHaveLength(18);
    expect(refusals.every((o) => o.reason.code === ResultCode.Forbidden)).toBe(true);
  });

  test('the URL is bound to the share: unsharing, binning, moving the file out or a new extraction code ends it; a restore brings it back', async () => {
    const { services, alice } = await setUp();
    const docs = await addFolder(services, alice, 0, 'Docs');
    const file = await addFile(services, alice, docs.id, 'a.txt', 1);
    const code = await shareOf(services, alice, 'folder', docs.id, 'abcd');
    const url = (await download(services, code, file.id, 'abcd')).url;
    expect(await opened(services, url)).toBe('found');

    await toBin(services, alice, String(docs.id), '');
    expect(await opened(services, url)).toBe('notFound');
    await restore(services, alice, String(docs.id), '');
    expect(await opened(services, url)).toBe('found');

    await move(as(services, alice), { ...signed, dirids: '', fids: String(file.id), todir: 0n });
    expect(await opened(services, url)).toBe('notFound');
    await move(as(services, alice), { ...signed, dirids: '', fids: String(file.id), todir: BigInt(docs.id) });
    expect(await opened(services, url)).toBe('found');

    // The same code again keeps the URL; another code ends it.
    await shareOf(services, alice, 'folder', docs.id, 'abcd');
    expect(await opened(services, url)).toBe('found');
    await shareOf(services, alice, 'folder', docs.id, 'efgh');
    expect(await opened(services, url)).toBe('notFound');

    const again = (await download(services, code, file.id, 'efgh')).url;
    await unshare(as(services, alice), { ...signed, dirids: String(docs.id), fids: '' });
    expect(await opened(services, again)).toBe('notFound');
  });

  test('a URL whose share id was altered is not genuine', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const code = await shareOf(services, alice, 'file', file.id);
    const url = (await download(services, code, file.id)).url;
    const token = /\/d\/([^/]+)\//.exec(url)![1];
    const [payload, mac] = token.split('.');
    const fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    expect(fields.s).toBeTypeOf('number');
    const forged = Buffer.from(JSON.stringify({ ...fields, s: fields.s + 1 })).toString('base64url');
    expect(verifyDownloadToken(services.secret, `${forged}.${mac}`, services.now()).kind).toBe('invalid');
  });
});
