/**
 * FileSearch on a real database (SQLite, or PostgreSQL): case-insensitive substring matching in every script,
 * only the caller's live files, literal keywords, the 1,000-hit limit, and the substring index. FolderSearch (an
 * extension) applies the same rules to folder names.
 */
import { CompiledQuery, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { folderEncrypt, unlock } from '../../src/operations/encryption/encryption';
import { folderAdd } from '../../src/operations/tree/folders';
import { fileSearch, folderSearch } from '../../src/operations/tree/listings';
import { nameKey, naturalSortKey } from '../../src/operations/tree/names';
import { fileNameMatches } from '../../src/storage/db/engine/dialect';
import { fileSearchCandidates } from '../../src/storage/db/repositories/search-repository';
import { openTestServices, type TestServices } from '../helpers/database';
import { openSession, signed, storeFile } from '../helpers/encryption';
import { testEngine } from '../helpers/postgres';
import { readListing, testAccount, type TestAccount } from '../helpers/listing-fixtures';

const at = (iso: string) => new Date(iso);

function search(account: TestAccount, keyword: string | null, order = 'name', desc = '0') {
  return readListing(fileSearch(account.ctx, { uid: BigInt(account.id), token: 'test-token', sign: 'checked', keyword, order, desc }));
}

async function names(account: TestAccount, keyword: string): Promise<string[]> {
  return (await search(account, keyword)).names;
}

async function setup(): Promise<{ services: TestServices; alice: TestAccount }> {
  const services = await openTestServices();
  return { services, alice: await testAccount(services, 'alice') };
}

describe('FileSearch matches', () => {
  it('case-insensitively in Latin script: "REPORT" finds "Quarterly report.pdf"', async () => {
    const { alice } = await setup();
    await alice.file('Quarterly report.pdf');
    await alice.file('Invoice.pdf');
    expect(await names(alice, 'REPORT')).toEqual(['Quarterly report.pdf']);
  });

  it('case-insensitively in Cyrillic: "ФАЙЛ" finds "мой файл.txt"', async () => {
    const { alice } = await setup();
    await alice.file('мой файл.txt');
    await alice.file('другой.txt');
    expect(await names(alice, 'ФАЙЛ')).toEqual(['мой файл.txt']);
  });

  it('two Chinese characters: "报告" finds "季度报告.docx"', async () => {
    const { alice } = await setup();
    await alice.file('季度报告.docx');
    await alice.file('报.txt');
    await alice.file('季度总结.docx');
    expect(await names(alice, '报告')).toEqual(['季度报告.docx']);
  });

  it('three or more Chinese characters use the index alike: "度报告" finds "季度报告.docx"', async () => {
    const { alice } = await setup();
    await alice.file('季度报告.docx');
    await alice.file('年度总结.docx');
    expect(await names(alice, '度报告')).toEqual(['季度报告.docx']);
  });

  it('a single character finds every name containing it', async () => {
    const { alice } = await setup();
    await alice.file('x-ray.png');
    await alice.file('Box.doc');
    await alice.file('plain.doc');
    expect(await names(alice, 'X')).toEqual(['Box.doc', 'x-ray.png']);
  });

  it('matches anywhere in the name, including the extension', async () => {
    const { alice } = await setup();
    await alice.file('notes.markdown');
    expect(await names(alice, 'es.mark')).toEqual(['notes.markdown']);
  });

  it('a keyword in decomposed Unicode (NFD) finds the composed name', async () => {
    const { alice } = await setup();
    await alice.file('Café menu.txt');
    expect(await names(alice, 'CAFE\u0301')).toEqual(['Café menu.txt']);
  });

  it('the keyword is not trimmed: " report" needs the space before "report"', async () => {
    const { alice } = await setup();
    await alice.file('Quarterly report.pdf');
    await alice.file('report.pdf');
    expect(await names(alice, ' report')).toEqual(['Quarterly report.pdf']);
  });

  it('searches every folder of the account and gives each hit its path', async () => {
    const { alice } = await setup();
    const a = await alice.folder('A');
    const b = await alice.folder('B', { parent: a });
    await alice.file('plan 1.txt', { parent: b });
    await alice.file('plan 2.txt', { parent: a });
    await alice.file('plan 3.txt');
    const listing = await search(alice, 'plan');
    expect(listing.files.map((item) => item.path)).toEqual(['/A/B/plan 1.txt', '/A/plan 2.txt', '/plan 3.txt']);
    expect(listing.folders).toEqual([]);
    expect(listing.count).toBe(3);
    expect(listing.truncated).toBe(false);
  });

  it('sorts hits by the order asked for', async () => {
    const { alice } = await setup();
    await alice.file('plan a.txt', { size: 2 });
    await alice.file('plan b.txt', { size: 3 });
    await alice.file('plan c.txt', { size: 1 });
    expect((await search(alice, 'plan', 'size', '1')).names).toEqual(['plan b.txt', 'plan a.txt', 'plan c.txt']);
  });

  it('searches file names only, not folder names', async () => {
    const { alice } = await setup();
    await alice.folder('report folder');
    expect(await names(alice, 'report')).toEqual([]);
  });
});

describe('FileSearch does not find', () => {
  it("another account's files", async () => {
    const { services, alice } = await setup();
    const bob = await testAccount(services, 'bob');
    await bob.file('bob report.pdf');
    await bob.file('报告.txt');
    expect(await names(alice, 'report')).toEqual([]);
    expect(await names(alice, '报告')).toEqual([]);
  });

  it('files in the bin, or beneath a folder in the bin', async () => {
    const { alice } = await setup();
    const old = await alice.folder('Old', { deleted: { at: at('2026-01-02T00:00:00Z'), from: '/' } });
    await alice.file('report in bin.txt', { deleted: { at: at('2026-01-02T00:00:00Z'), from: '/' } });
    await alice.file('report beneath.txt', { parent: old, binnedUnder: old });
    await alice.file('报告 in bin.txt', { deleted: { at: at('2026-01-02T00:00:00Z'), from: '/' } });
    await alice.file('live report.txt');
    expect(await names(alice, 'report')).toEqual(['live report.txt']);
    expect(await names(alice, '报告')).toEqual([]);
  });
});

describe('FileSearch keywords are literal', () => {
  it('"%" and "_" match only themselves (LIKE wildcards elsewhere)', async () => {
    const { alice } = await setup();
    await alice.file('50% off.txt');
    await alice.file('500 off.txt');
    await alice.file('a_b.txt');
    await alice.file('axb.txt');
    expect(await names(alice, '%')).toEqual(['50% off.txt']);
    expect(await names(alice, '0%')).toEqual(['50% off.txt']);
    expect(await names(alice, '50% off')).toEqual(['50% off.txt']);
    expect(await names(alice, '_')).toEqual(['a_b.txt']);
    expect(await names(alice, 'a_b')).toEqual(['a_b.txt']);
  });

  it('"*", quotes and FTS5 operators are text, never query syntax', async () => {
    const { alice } = await setup();
    await alice.file('report.pdf');
    await alice.file('report OR x.txt');
    await alice.file("it's (ok) - NEAR.txt");
    for (const keyword of ['*', '"', 'rep*', '"report"', 're"po', 'report*', 'NEAR(', '^rep', 'a:b', '\\']) {
      expect(await names(alice, keyword), keyword).toEqual([]);
    }
    expect(await names(alice, 'report OR x')).toEqual(['report OR x.txt']);
    expect(await names(alice, "it's (ok) -")).toEqual(["it's (ok) - NEAR.txt"]);
  });
});

describe('FileSearch keyword length', () => {
  it('an empty or absent keyword is refused with 400', async () => {
    const { alice } = await setup();
    await expect(search(alice, '')).rejects.toMatchObject({ code: 400, message: 'keyword is empty' });
    await expect(search(alice, null)).rejects.toMatchObject({ code: 400 });
  });

  it('100 characters are accepted, 101 refused with 400 (characters, not UTF-16 units)', async () => {
    const { alice } = await setup();
    expect((await search(alice, '报'.repeat(100))).count).toBe(0);
    expect((await search(alice, '😀'.repeat(100))).count).toBe(0);
    await expect(search(alice, 'a'.repeat(101))).rejects.toMatchObject({ code: 400, message: 'keyword is longer than 100 characters' });
  });

  it('a bad order is refused with 400 like every listing', async () => {
    const { alice } = await setup();
    await expect(search(alice, 'report', 'relevance')).rejects.toMatchObject({ code: 400 });
  });
});

describe('FileSearch limit', () => {
  it('answers 1,000 hits with truncated="1" when more match, sorted by the order asked for', async () => {
    const { alice } = await setup();
    await alice.files(Array.from({ length: 1_005 }, (_, i) => `match ${i}.txt`));
    await alice.file('other.txt');
    const listing = await search(alice, 'match');
    expect(listing.count).toBe(1_000);
    expect(listing.files).toHaveLength(1_000);
    expect(listing.truncated).toBe(true);
    const numbers = listing.files.map((item) => Number(/\d+/.exec(item.name)?.[0]));
    expect(numbers).toEqual([...numbers].sort((x, y) => x - y));
  });

  it('exactly 1,000 hits are not truncated', async () => {
    const { alice } = await setup();
    await alice.files(Array.from({ length: 1_000 }, (_, i) => `match ${i}.txt`));
    const listing = await search(alice, 'match');
    expect(listing.count).toBe(1_000);
    expect(listing.truncated).toBe(false);
  });

  it('short keywords stop at the limit too', async () => {
    const { alice } = await setup();
    await alice.files(Array.from({ length: 1_001 }, (_, i) => `报告 ${i}.txt`));
    const listing = await search(alice, '报告');
    expect(listing.count).toBe(1_000);
    expect(listing.truncated).toBe(true);
  });
});

const onSqlite = testEngine() === 'sqlite';
const onPostgres = testEngine() === 'postgres';

/**
 * SQLite: FTS5's own check that the index agrees with the files table, and the character pairs of
 * migration 0010 are exactly those of the files' names. PostgreSQL keeps its GIN index itself.
 */
async function checkIndexIntegrity(services: TestServices): Promise<void> {
  if (!onSqlite) return;
  await sql`insert into files_name_search (files_name_search, rank) values ('integrity-check', 1)`.execute(services.db);
  const expected = sql`select account_id, substr(name_key, n, 2), id from files join file_name_gram_positions on n <= length(name_key)`;
  const stored = sql`select account_id, gram, file_id from file_name_grams`;
  const { rows } = await sql<{ missing: number; extra: number }>`select
    (select count(*) from (${expected} except ${stored})) as missing,
    (select count(*) from (${stored} except ${expected})) as extra`.execute(services.db);
  expect(rows).toEqual([{ missing: 0, extra: 0 }]);
}

describe('the file-name index', () => {
  async function plan(services: TestServices, accountId: number, keyword: string): Promise<string[]> {
    const query = fileSearchCandidates(services.db, accountId, keyword, 1_001).compile();
    const result = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
    return result.rows.map((row) => row.detail);
  }

  it.runIf(onSqlite)('a keyword of 3 or more characters is answered from the FTS5 index, not a scan of files', async () => {
    const { services, alice } = await setup();
    const details = await plan(services, alice.id, 'report');
    expect(details.some((detail) => /files_name_search VIRTUAL TABLE/.test(detail))).toBe(true);
    expect(details.filter((detail) => /\bfiles\b/.test(detail))).toEqual(['SEARCH files USING INTEGER PRIMARY KEY (rowid=?)']);
    expect(details.some((detail) => /TEMP B-TREE/.test(detail))).toBe(false);
  });

  it.runIf(onSqlite)('a keyword of 2 characters is one lookup of the character pairs (0010), newest first, not a scan of files', async () => {
    const { services, alice } = await setup();
    const details = await plan(services, alice.id, 'q7');
    expect(details).toContain('SEARCH file_name_grams USING PRIMARY KEY (account_id=? AND gram=?)');
    expect(details.filter((detail) => /\bfiles\b/.test(detail))).toEqual(['SEARCH files USING INTEGER PRIMARY KEY (rowid=?)']);
    expect(details.some((detail) => /TEMP B-TREE/.test(detail))).toBe(false);
  });

  it.runIf(onSqlite)('a keyword of 1 character is a range of the character pairs (0010), not a scan of files', async () => {
    const { services, alice } = await setup();
    const details = await plan(services, alice.id, 'q');
    expect(details).toContain('SEARCH file_name_grams USING PRIMARY KEY (account_id=? AND gram>? AND gram<?)');
    expect(details.filter((detail) => /\bfiles\b/.test(detail))).toEqual(['SEARCH files USING INTEGER PRIMARY KEY (rowid=?)']);
    expect(details.some((detail) => /TEMP B-TREE FOR ORDER BY/.test(detail))).toBe(false);
  });

  it('a keyword of 1 character is found at the start, inside and at the end of a name', async () => {
    const { alice } = await setup();
    await alice.files(['abc', 'xyz', 'zzq', '报告']);
    expect(await names(alice, 'A')).toEqual(['abc']);
    expect(await names(alice, 'y')).toEqual(['xyz']);
    expect(await names(alice, 'q')).toEqual(['zzq']);
    expect(await names(alice, '告')).toEqual(['报告']);
    expect(await names(alice, 'z')).toEqual(['xyz', 'zzq']);
  });

  it('a keyword of 1 or 2 characters outside the Basic Multilingual Plane is matched whole', async () => {
    const { alice } = await setup();
    await alice.files(['📁a.txt', '📁.txt', 'b📁.txt']);
    expect(await names(alice, '📁')).toEqual(['b📁.txt', '📁.txt', '📁a.txt']);
    expect(await names(alice, '📁a')).toEqual(['📁a.txt']);
    expect(await names(alice, 'b📁')).toEqual(['b📁.txt']);
  });

  it('a keyword of 1 or 2 characters finds live files only, of the caller only', async () => {
    const { services, alice } = await setup();
    const bob = await testAccount(services, 'bob');
    await alice.files(['q7 live.txt', 'q7 binned.txt', 'other.txt']);
    await bob.file('q7 of bob.txt');
    await services.db.updateTable('files').set({ deleted_at: Date.now(), deleted_from: '/' }).where('name', '=', 'q7 binned.txt').execute();
    expect(await names(alice, 'Q7')).toEqual(['q7 live.txt']);
  });

  it('a keyword of 1 or 2 characters hides files beneath a folder locked for the session, until it is unlocked', async () => {
    const services = await openTestServices();
    const alice = await openSession(services, 'alice');
    const folder = await folderAdd(alice.ctx, signed(alice, { dirid: 0n, name: 'Private' }));
    const privateId = (folder.item as { id: number }).id;
    await storeFile(services, alice, privateId, 'q7 secret.txt', 'secret');
    await storeFile(services, alice, 0, 'q7 public.txt', 'public');
    await folderEncrypt(alice.ctx, signed(alice, { dirid: BigInt(privateId), password: 'open sesame', password_tip: 'tip' }));
    const shortSearch = async () =>
      (await readListing(fileSearch(alice.ctx, signed(alice, { keyword: 'q7', order: 'name', desc: '0' })))).names;
    expect(await shortSearch()).toEqual(['q7 public.txt']);
    await unlock(alice.ctx, signed(alice, { dirid: BigInt(privateId), fid: 0n, password: 'open sesame' }));
    expect(await shortSearch()).toEqual(['q7 public.txt', 'q7 secret.txt']);
  });

  it.runIf(onPostgres)('a keyword of 3 or more characters is answered from the pg_trgm index, not a scan of files', async () => {
    const { services, alice } = await setup();
    await alice.files(['Quarterly report.pdf', 'report 2.pdf', 'other.txt']);
    // A table this small is cheaper to scan; what matters is that the index can serve the
    // condition, which the planner then chooses as the table grows (a scan is made to cost more).
    // The substring condition alone; how it is joined to the account's live files is the planner's
    // choice from its statistics (with few files of the account, their index drives).
    const query = services.db.selectFrom(fileNameMatches(services.db, 'report')!).select('name_matches.id').compile();
    const details = await services.db.transaction().execute(async (tx) => {
      await sql`set local enable_seqscan = off`.execute(tx);
      const result = await tx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]));
      return result.rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(details).toMatch(/Bitmap Index Scan on files_name_key_trgm/);
    expect(details).not.toMatch(/Seq Scan on files/);
    expect(await names(alice, 'report')).toEqual(['Quarterly report.pdf', 'report 2.pdf']);
  });

  it('follows renames and deletions, and stays consistent with the files table', async () => {
    const { services, alice } = await setup();
    const id = await alice.file('draft.txt');
    const other = await alice.file('draft two.txt');
    await services.db.updateTable('files').set({ name: 'final.txt', name_key: 'final.txt', sort_key: 'final.txt' }).where('id', '=', id).execute();
    await services.db.updateTable('files').set({ size: 99, updated_at: 5 }).where('id', '=', other).execute();
    expect(await names(alice, 'draft')).toEqual(['draft two.txt']);
    expect(await names(alice, 'final')).toEqual(['final.txt']);
    expect(await names(alice, 'dr')).toEqual(['draft two.txt']);
    expect(await names(alice, 'fi')).toEqual(['final.txt']);
    await services.db.deleteFrom('files').where('id', '=', other).execute();
    expect(await names(alice, 'draft')).toEqual([]);
    expect(await names(alice, 'dr')).toEqual([]);
    expect(await names(alice, 'w')).toEqual([]);
    await checkIndexIntegrity(services);
  });

  it("is cleaned when an account is removed with its files", async () => {
    const { services, alice } = await setup();
    await alice.files(['a report.txt', 'b report.txt']);
    await services.db.deleteFrom('files').where('account_id', '=', alice.id).execute();
    await services.db.deleteFrom('accounts').where('id', '=', alice.id).execute();
    await checkIndexIntegrity(services);
    const bob = await testAccount(services, 'bob');
    await bob.file('bob report.txt');
    expect(await names(bob, 'report')).toEqual(['bob report.txt']);
  });
});

function searchFolders(account: { id: number; ctx: TestAccount['ctx'] }, keyword: string, order = 'name', desc = '0') {
  return readListing(folderSearch(account.ctx, { uid: BigInt(account.id), token: 'test-token', sign: 'checked', keyword, order, desc }));
}

describe('FolderSearch (extension)', () => {
  it('finds folders whose names contain the keyword, case-insensitively, and no files', async () => {
    const { alice } = await setup();
    await alice.folder('Quarterly REPORTS');
    await alice.folder('报告 2026');
    await alice.folder('Invoices');
    await alice.file('report.pdf');
    const listing = await searchFolders(alice, 'report');
    expect(listing.names).toEqual(['Quarterly REPORTS']);
    expect(listing.files).toEqual([]);
    expect((await searchFolders(alice, '报告')).names).toEqual(['报告 2026']);
  });

  it('searches every folder of the account and gives each hit its own path, sorted as every listing', async () => {
    const { alice } = await setup();
    const a = await alice.folder('Plans A', { size: 1 });
    await alice.folder('Old plans', { parent: a, size: 3 });
    await alice.folder('plans', { size: 2 });
    const listing = await searchFolders(alice, 'PLANS');
    expect(listing.folders.map((item) => item.path)).toEqual(['/Plans A/Old plans', '/plans', '/Plans A']);
    expect(listing.count).toBe(3);
    expect(listing.truncated).toBe(false);
    expect((await searchFolders(alice, 'plans', 'size', '1')).names).toEqual(['Old plans', 'plans', 'Plans A']);
  });

  it('takes "%" and "_" literally', async () => {
    const { alice } = await setup();
    await alice.folder('100% done');
    await alice.folder('1000 done');
    await alice.folder('a_b');
    await alice.folder('axb');
    expect((await searchFolders(alice, '0%')).names).toEqual(['100% done']);
    expect((await searchFolders(alice, '_')).names).toEqual(['a_b']);
  });

  it("does not find folders in the bin, beneath a folder in the bin, or another account's", async () => {
    const { services, alice } = await setup();
    const old = await alice.folder('Old report', { deleted: { at: at('2026-01-02T00:00:00Z'), from: '/' } });
    await alice.folder('report beneath', { parent: old, binnedUnder: old });
    await alice.folder('live report');
    const bob = await testAccount(services, 'bob');
    await bob.folder('bob report');
    expect((await searchFolders(alice, 'report')).names).toEqual(['live report']);
  });

  it('does not find folders in or beneath a folder locked for the session, until it is unlocked; the locked folder itself is found', async () => {
    const services = await openTestServices();
    const alice = await openSession(services, 'alice');
    const made = await folderAdd(alice.ctx, signed(alice, { dirid: 0n, name: 'Private plans' }));
    const privateId = (made.item as { id: number }).id;
    const inner = await folderAdd(alice.ctx, signed(alice, { dirid: BigInt(privateId), name: 'secret plans' }));
    await folderAdd(alice.ctx, signed(alice, { dirid: BigInt((inner.item as { id: number }).id), name: 'deep plans' }));
    await folderEncrypt(alice.ctx, signed(alice, { dirid: BigInt(privateId), password: 'open sesame', password_tip: 'tip' }));
    const found = async () => (await readListing(folderSearch(alice.ctx, signed(alice, { keyword: 'plans', order: 'name', desc: '0' })))).names;
    expect(await found()).toEqual(['Private plans']);
    await unlock(alice.ctx, signed(alice, { dirid: BigInt(privateId), fid: 0n, password: 'open sesame' }));
    expect(await found()).toEqual(['deep plans', 'Private plans', 'secret plans']);
  });

  it('answers 1,000 hits with truncated="1" when more match; an empty keyword is 400', async () => {
    const { alice } = await setup();
    const rows = Array.from({ length: 1_001 }, (_, i) => {
      const name = `match ${i}`;
      return { account_id: alice.id, parent_id: 0, name, name_key: nameKey(name), sort_key: naturalSortKey(name), created_at: 0, updated_at: 0 };
    });
    await alice.db.insertInto('folders').values(rows).execute();
    const listing = await searchFolders(alice, 'match');
    expect(listing.count).toBe(1_000);
    expect(listing.folders).toHaveLength(1_000);
    expect(listing.truncated).toBe(true);
    await expect(searchFolders(alice, '')).rejects.toMatchObject({ code: 400 });
  });
});
