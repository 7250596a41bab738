/**
 * Copied files are indexed for FileSearch in the background (0015_deferred_search_index,
 * operations/admin/search-indexing.ts): search finds them at once and after indexing, the FTS5 and
 * character-pair indexes stay consistent whatever happens to a file before it is indexed, a restart
 * indexes what a stopped service left, and fsck sees nothing wrong.
 */
import { sql } from 'kysely';
import { describe, expect, test } from 'vitest';
import { buildApp } from '../../src/app';
import { checkIntegrity, problemCount } from '../../src/operations/admin/integrity';
import { indexPendingNames } from '../../src/operations/admin/search-indexing';
import type { Services } from '../../src/operations/context';
import { copy } from '../../src/operations/tree/copy';
import { fileSearch } from '../../src/operations/tree/listings';
import { openTestServices } from '../helpers/database';
import { readListing } from '../helpers/listing-fixtures';
import { testEngine } from '../helpers/postgres';
import { addFileRecord } from '../../src/operations/tree/file-records';
import { storeTestContent } from '../helpers/stored-files';
import { addFolder, as, testAccount } from '../helpers/tree';

const onSqlite = testEngine() === 'sqlite';
const signed = { uid: 0n, token: 'test-token', sign: '' };

async function found(services: Services, accountId: number, keyword: string): Promise<number> {
  return (await readListing(fileSearch(as(services, accountId), { ...signed, keyword, order: 'name', desc: '0' }))).count;
}

async function pendingCount(services: Services): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from files where search_indexed = 0`.execute(services.db);
  return Number(rows[0].n);
}

/** SQLite: FTS5's own check against the files table (rank 1; rank 0: the index alone), and the pairs of 0010 exactly those of indexed names. */
async function checkIndexes(services: Services, againstFiles = true): Promise<void> {
  if (!onSqlite) return;
  await sql`insert into files_name_search (files_name_search, rank) values ('integrity-check', ${againstFiles ? 1 : 0})`.execute(services.db);
  const expected = sql`select account_id, substr(name_key, n, 2), id from files join file_name_gram_positions on n <= length(name_key) where search_indexed = 1`;
  const stored = sql`select account_id, gram, file_id from file_name_grams`;
  const { rows } = await sql<{ missing: number; extra: number }>`select
    (select count(*) from (${expected} except ${stored})) as missing,
    (select count(*) from (${stored} except ${expected})) as extra`.execute(services.db);
  expect(rows.map((row) => [Number(row.missing), Number(row.extra)])).toEqual([[0, 0]]);
}

/** A file whose bytes are really in the store (fsck checks them), added as FileAdd adds it. */
async function addFile(services: Services, accountId: number, folderId: number, name: string) {
  const content = await storeTestContent(services, name);
  const claimContent = async () => ({ contentId: content.contentId, keyId: null });
  return services.db.transaction().execute((tx) => addFileRecord(tx, services, accountId, { name, ext: name.split('.').pop()!, size: content.size, folderId, sha256: content.sha256, claimContent }));
}

/** alice's folder "src" with two files, copied into "dst"; returns the ids of the copies. */
async function copiedTree(services: Services) {
  const alice = await testAccount(services, 'alice');
  const source = await addFolder(services, alice, 0, 'src');
  const target = await addFolder(services, alice, 0, 'dst');
  await addFile(services, alice, source.id, 'Quarterly report.pdf');
  await addFile(services, alice, source.id, 'zebra.txt');
  await copy(as(services, alice), { ...signed, dirids: String(source.id), fids: '', todir: BigInt(target.id) });
  const copies = await services.db.selectFrom('files').innerJoin('folders', 'folders.id', 'files.folder_id').select(['files.id', 'files.name']).where('folders.parent_id', '=', target.id).execute();
  return { alice, copies: new Map(copies.map((row) => [row.name, Number(row.id)])) };
}

describe('search indexing of copies', () => {
  test("indexing leaves the account's listing version alone: no listing shows whether a name is indexed", async () => {
    const services = await openTestServices();
    const { alice } = await copiedTree(services);
    const version = () => sql<{ v: number }>`select coalesce(sum(version), 0) as v from listing_versions where account_id = ${alice}`.execute(services.db).then(({ rows }) => Number(rows[0].v));
    const before = await version();
    await indexPendingNames(services);
    expect(await version()).toBe(before);
  });

  test('FileSearch finds copies at once and after indexing, with keys of 1, 2 and 3 or more characters', async () => {
    const services = await openTestServices();
    const { alice } = await copiedTree(services);
    if (onSqlite) expect(await pendingCount(services)).toBe(2);
    for (const keyword of ['q', 'qu', 'REPORT', 'z']) expect([keyword, await found(services, alice, keyword)]).toEqual([keyword, 2]);
    expect(await found(services, alice, 'report.txt')).toBe(0);
    await checkIndexes(services, false);

    const figures = await indexPendingNames(services);
    expect(figures.files).toBe(onSqlite ? 2 : 0);
    expect(await pendingCount(services)).toBe(0);
    for (const keyword of ['q', 'qu', 'REPORT', 'z']) expect([keyword, await found(services, alice, keyword)]).toEqual([keyword, 2]);
    await checkIndexes(services);
  });

  test('renaming or deleting a copy before it is indexed leaves both indexes consistent', async () => {
    const services = await openTestServices();
    const { alice, copies } = await copiedTree(services);
    await services.db.updateTable('files').set({ name: 'Annual plan.pdf', name_key: 'annual plan.pdf' }).where('id', '=', copies.get('Quarterly report.pdf')!).execute();
    await services.db.deleteFrom('files').where('id', '=', copies.get('zebra.txt')!).execute();
    await checkIndexes(services, false);
    expect([await found(services, alice, 'annual'), await found(services, alice, 'report'), await found(services, alice, 'z')]).toEqual([1, 1, 1]);

    await indexPendingNames(services);
    await checkIndexes(services);
    expect([await found(services, alice, 'annual'), await found(services, alice, 'an'), await found(services, alice, 'report')]).toEqual([1, 1, 1]);
    // Indexed now: a rename and a delete go through the triggers again.
    await services.db.updateTable('files').set({ name: 'x.pdf', name_key: 'x.pdf' }).where('id', '=', copies.get('Quarterly report.pdf')!).execute();
    await checkIndexes(services);
    await services.db.deleteFrom('files').where('id', '=', copies.get('Quarterly report.pdf')!).execute();
    await checkIndexes(services);
  });

  test.runIf(onSqlite)('files a stopped service left unindexed are indexed when the service starts', async () => {
    const services = await openTestServices();
    const { alice } = await copiedTree(services);
    expect(await pendingCount(services)).toBe(2);
    const app = await buildApp(services.config, { housekeeping: false, encryptionJobs: false, mailSender: false });
    try {
      for (let waited = 0; (await pendingCount(services)) > 0 && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await pendingCount(services)).toBe(0);
    } finally {
      await app.close();
    }
    await checkIndexes(services);
    expect(await found(services, alice, 'report')).toBe(2);
  });

  test('fsck finds nothing wrong after a Copy, before and after indexing', async () => {
    const services = await openTestServices();
    await copiedTree(services);
    expect(problemCount(await checkIntegrity(services))).toBe(0);
    await indexPendingNames(services);
    expect(problemCount(await checkIntegrity(services))).toBe(0);
  });
});
