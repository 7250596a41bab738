import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { auditContent, removeUnreferencedContent } from '../../src/operations/content/content-removal';
import { runHousekeeping } from '../../src/operations/admin/housekeeping';
import { CLAIM_LIFETIME_MS, completeUpload } from '../../src/operations/content/uploads';
import { contentStoreFor } from '../../src/storage/content/stores';
import { deleteUnreferencedContent, insertPlaintextContent, queueRemoval, startDueRemovals, withdrawWriteIntent } from '../../src/storage/db/repositories/content-repository';
import { testContent } from '../helpers/content';
import { openTestServices, type TestServices } from '../helpers/database';
import { insertTestAccount, insertTestFile, sha256Of, stageTestUpload, storeTestContent } from '../helpers/stored-files';

const DAY = 24 * 3600_000;

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function storedKeys(services: TestServices): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of contentStoreFor(services.config).listKeys()) keys.push(key);
  return keys.sort();
}

const queue = (services: TestServices) => services.db.selectFrom('content_removals').selectAll().execute();
const contentIds = async (services: TestServices) => (await services.db.selectFrom('content').select('id').orderBy('id').execute()).map((row) => row.id);

/** A blob in the store with no row, as a crash between writing and inserting its row leaves it. */
async function putBlob(services: TestServices, bytes: string): Promise<string> {
  const store = contentStoreFor(services.config);
  const source = path.join(services.config.dataDir, `blob-${Math.random()}`);
  await writeFile(source, bytes);
  const key = store.newKey(sha256Of(bytes));
  await store.putFile(key, source);
  return key;
}

describe('removing unreferenced content', () => {
  test('content no file and no upload references is removed, row and blob', async () => {
    const services = await openTestServices();
    const orphan = await storeTestContent(services, 'nobody wants me');
    expect(await removeUnreferencedContent(services)).toEqual({ rowsRemoved: 1, blobsDeleted: 1, failures: 0 });
    expect(await contentIds(services)).toEqual([]);
    expect(await contentStoreFor(services.config).stat(orphan.key)).toBeNull();
    expect(await queue(services)).toEqual([]);
  });

  test('content a live file, a binned file or a completed upload references stays', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const live = await storeTestContent(services, 'live');
    await insertTestFile(services, { accountId: alice, name: 'live.txt', ...live });
    const binned = await storeTestContent(services, 'binned');
    await insertTestFile(services, { accountId: alice, name: 'binned.txt', ...binned, deletedAt: 1 });
    const uploaded = await completeUpload(services, alice, await stageTestUpload(services, alice, 'uploaded, not yet added'));

    expect(await removeUnreferencedContent(services)).toEqual({ rowsRemoved: 0, blobsDeleted: 0, failures: 0 });
    expect(await contentIds(services)).toEqual([live.contentId, binned.contentId, uploaded.contentId]);
    expect(await storedKeys(services)).toHaveLength(3);
  });

  test('content whose last file is deleted for good goes on the next run', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const content = await storeTestContent(services, 'short-lived');
    const a = await insertTestFile(services, { accountId: alice, name: 'a.txt', ...content });
    const b = await insertTestFile(services, { accountId: alice, name: 'b.txt', ...content });
    await services.db.deleteFrom('files').where('id', '=', a).execute();
    expect((await removeUnreferencedContent(services)).rowsRemoved).toBe(0);
    await services.db.deleteFrom('files').where('id', '=', b).execute();
    expect((await removeUnreferencedContent(services)).blobsDeleted).toBe(1);
    expect(await storedKeys(services)).toEqual([]);
  });

  test('a completed upload that expires unclaimed lets its content go (housekeeping, in one run)', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    await completeUpload(services, alice, await stageTestUpload(services, alice, 'never added'));
    services.clock.advance(CLAIM_LIFETIME_MS);
    const errors: unknown[] = [];
    await runHousekeeping(services, { info: () => {}, warn: () => {}, request: () => {}, error: (...args) => errors.push(args) });
    expect(errors).toEqual([]);
    expect(await contentIds(services)).toEqual([]);
    expect(await storedKeys(services)).toEqual([]);
  });

  test('crash after the commit, before the blob is deleted: the queued key is deleted on the next run', async () => {
    const services = await openTestServices();
    const orphan = await storeTestContent(services, 'queued');
    // The first step alone, as a run killed right after its commit leaves it.
    await services.db.transaction().execute((tx) => deleteUnreferencedContent(tx, services.now(), 10));
    expect(await contentIds(services)).toEqual([]);
    expect(await storedKeys(services)).toEqual([orphan.key]);
    expect((await queue(services)).map((row) => row.storage_key)).toEqual([orphan.key]);

    expect(await removeUnreferencedContent(services)).toEqual({ rowsRemoved: 0, blobsDeleted: 1, failures: 0 });
    expect(await storedKeys(services)).toEqual([]);
    expect(await queue(services)).toEqual([]);
  });

  test('crash after the blob is deleted, before its queue row goes: the next run finishes without complaint', async () => {
    const services = await openTestServices();
    const orphan = await storeTestContent(services, 'half done');
    await services.db.transaction().execute((tx) => deleteUnreferencedContent(tx, services.now(), 10));
    await startDueRemovals(services.db, services.now(), 10);
    await contentStoreFor(services.config).delete(orphan.key);

    expect(await removeUnreferencedContent(services)).toEqual({ rowsRemoved: 0, blobsDeleted: 1, failures: 0 });
    expect(await queue(services)).toEqual([]);
  });

  // Provoked on the local disk (a folder where the blob was); the S3 store's failures take the same path.
  test.skipIf(testContent() === 's3')('a failed blob deletion is kept with its error and retried later', async () => {
    const services = await openTestServices();
    const orphan = await storeTestContent(services, 'stubborn');
    // A directory where the blob was: unlink fails (even for root).
    const file = path.join(services.config.dataDir, 'content', ...orphan.key.split('/'));
    await rm(file);
    await mkdir(path.join(file, 'inside'), { recursive: true });

    expect(await removeUnreferencedContent(services)).toEqual({ rowsRemoved: 1, blobsDeleted: 0, failures: 1 });
    const [row] = await queue(services);
    expect(row).toMatchObject({ storage_key: orphan.key, attempts: 1 });
    expect(row.last_error).toBeTruthy();
    expect(row.due_at).toBeGreaterThan(services.now().getTime());

    await rm(file, { recursive: true });
    expect((await removeUnreferencedContent(services)).blobsDeleted).toBe(0);
    services.clock.advance(10 * 60_000);
    expect((await removeUnreferencedContent(services)).blobsDeleted).toBe(1);
    expect(await queue(services)).toEqual([]);
  });

  test('removing an old copy never touches a newer upload of the same bytes', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const old = await storeTestContent(services, 'same bytes');
    // The old content loses its last reference and is queued, but its blob is not deleted yet…
    await services.db.transaction().execute((tx) => deleteUnreferencedContent(tx, services.now(), 10));
    // …when the same bytes are uploaded again: they get a new row and a new key.
    const again = await completeUpload(services, alice, await stageTestUpload(services, alice, 'same bytes'));
    const row = await services.db.selectFrom('content').selectAll().where('id', '=', again.contentId).executeTakeFirstOrThrow();
    expect(row.storage_key).not.toBe(old.key);

    await removeUnreferencedContent(services);
    expect(await storedKeys(services)).toEqual([row.storage_key]);
    expect(await text(await contentStoreFor(services.config).read(row.storage_key))).toBe('same bytes');
  });

  test('two uploads of the same bytes completing at once end as one row and, after removal, one blob', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const bob = await insertTestAccount(services, 'bob');
    const [a, b] = await Promise.all([
      stageTestUpload(services, alice, 'raced').then((id) => completeUpload(services, alice, id)),
      stageTestUpload(services, bob, 'raced').then((id) => completeUpload(services, bob, id)),
    ]);
    expect(a.contentId).toBe(b.contentId);
    expect(await contentIds(services)).toEqual([a.contentId]);
    await removeUnreferencedContent(services);
    expect(await storedKeys(services)).toHaveLength(1);
  });
});

describe('write intents', () => {
  test('a blob written but never given its row (a crash in between) is deleted when its intent falls due', async () => {
    const services = await openTestServices();
    const key = contentStoreFor(services.config).newKey(sha256Of('interrupted'));
    await queueRemoval(services.db, key, services.now(), new Date(services.now().getTime() + DAY));
    await putBlob(services, 'interrupted').then(async (written) => {
      // putBlob picks its own key; move the intent to it, as completion would have used one key.
      await services.db.updateTable('content_removals').set({ storage_key: written }).where('storage_key', '=', key).execute();
      expect((await removeUnreferencedContent(services)).blobsDeleted).toBe(0);
      expect(await storedKeys(services)).toEqual([written]);
      services.clock.advance(DAY);
      expect((await removeUnreferencedContent(services)).blobsDeleted).toBe(1);
      expect(await storedKeys(services)).toEqual([]);
    });
  });

  test('an intent withdrawn by the content row’s transaction never deletes the blob', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const done = await completeUpload(services, alice, await stageTestUpload(services, alice, 'kept'));
    services.clock.advance(2 * DAY);
    // The upload expired unclaimed, but a file took the content first.
    await insertTestFile(services, { accountId: alice, name: 'kept.txt', contentId: done.contentId, sha256: done.sha256, size: 4 });
    await removeUnreferencedContent(services);
    expect(await storedKeys(services)).toHaveLength(1);
  });

  test('a key whose deletion has begun can no longer be adopted by a content row', async () => {
    const services = await openTestServices();
    const key = await putBlob(services, 'too late');
    await queueRemoval(services.db, key, services.now(), services.now());
    expect(await startDueRemovals(services.db, services.now(), 10)).toEqual([key]);
    const adopted = await services.db.transaction().execute(async (tx) => {
      await insertPlaintextContent(tx, { sha256: sha256Of('too late'), size: 8, storageKey: key, createdAt: services.now() });
      return withdrawWriteIntent(tx, key);
    });
    expect(adopted).toBe(false);
  });

  test('a withdrawn intent is not started by a removal run', async () => {
    const services = await openTestServices();
    const key = await putBlob(services, 'adopted');
    await queueRemoval(services.db, key, services.now(), services.now());
    expect(await services.db.transaction().execute((tx) => withdrawWriteIntent(tx, key))).toBe(true);
    expect(await startDueRemovals(services.db, services.now(), 10)).toEqual([]);
  });
});

describe('content audit', () => {
  test('finds blobs nothing knows and rows whose blob is gone; repair queues the orphans', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const fine = await storeTestContent(services, 'fine');
    await insertTestFile(services, { accountId: alice, name: 'fine.txt', ...fine });
    const lost = await storeTestContent(services, 'lost');
    await insertTestFile(services, { accountId: alice, name: 'lost.txt', ...lost });
    await contentStoreFor(services.config).delete(lost.key);
    const orphan = await putBlob(services, 'orphan');
    const cover = await putBlob(services, 'cover image');
    await services.db
      .insertInto('shares')
      .values({ account_id: alice, item_type: 'file', item_id: 1, code: 'c', image_key: cover, created_at: 0, updated_at: 0 })
      .execute();

    const audit = await auditContent(services, { repair: true });
    expect(audit.orphans).toEqual([orphan]);
    expect(audit.damaged).toEqual([{ contentId: lost.contentId, storageKey: lost.key, problem: 'missing' }]);
    await removeUnreferencedContent(services);
    expect(await storedKeys(services)).toEqual([cover, fine.key].sort());
  });
});
