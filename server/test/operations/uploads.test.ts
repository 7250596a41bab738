import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { defaultLimits } from '../../src/config';
import { OpError, ResultCode } from '../../src/operations/errors';
import {
  beginUpload,
  CLAIM_LIFETIME_MS,
  claimContent,
  completeIfArrived,
  completeUpload,
  findOwnUpload,
  purgeExpiredUploads,
  UPLOAD_LIFETIME_MS,
} from '../../src/operations/content/uploads';
import { removeUnreferencedContent } from '../../src/operations/content/content-removal';
import { sha256OfStream } from '../../src/storage/content/running-hashes';
import { contentStoreFor, localUploadAreaFor } from '../../src/storage/content/stores';
import { queueRemoval } from '../../src/storage/db/repositories/content-repository';
import { stageUpload } from '../../src/storage/db/repositories/uploads-repository';
import { openTestServices, type TestServices } from '../helpers/database';
import { insertTestAccount, insertTestFile, sha256Of, stageTestUpload, storeTestContent } from '../helpers/stored-files';

async function refusal(promise: Promise<unknown>): Promise<OpError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpError);
  return error as OpError;
}

const newId = () => randomBytes(16).toString('hex');
const DAY = 24 * 3600_000;

async function contentRows(services: TestServices) {
  return services.db.selectFrom('content').selectAll().execute();
}

async function storedKeys(services: TestServices): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of contentStoreFor(services.config).listKeys()) keys.push(key);
  return keys;
}

const claim = (services: TestServices, accountId: number, sha256: string, size: number) =>
  services.db.transaction().execute(async (tx) => (await claimContent(tx, services, accountId, sha256, size, 0)).contentId);

describe('creating an upload', () => {
  test('an upload over the upload limit is refused with 413', async () => {
    const services = await openTestServices({ config: { limits: { ...defaultLimits, maxUploadBytes: 100 } } });
    const alice = await insertTestAccount(services, 'alice');
    const error = await refusal(beginUpload(services, alice, newId(), 101));
    expect(error.code).toBe(ResultCode.TooLarge);
    await beginUpload(services, alice, newId(), 100);
  });

  test('an upload over the remaining quota is refused with 413; unexpired uploads reserve their length', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice', 1000);
    await services.db.updateTable('accounts').set({ used_bytes: 300 }).where('id', '=', alice).execute();
    expect((await refusal(beginUpload(services, alice, newId(), 701))).code).toBe(ResultCode.TooLarge);
    await beginUpload(services, alice, newId(), 400);
    // 1000 − 300 used − 400 reserved = 300 left.
    expect((await refusal(beginUpload(services, alice, newId(), 301))).code).toBe(ResultCode.TooLarge);
    await beginUpload(services, alice, newId(), 300);
  });

  test('an expired upload no longer reserves quota', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice', 1000);
    await beginUpload(services, alice, newId(), 1000);
    expect((await refusal(beginUpload(services, alice, newId(), 1))).code).toBe(ResultCode.TooLarge);
    services.clock.advance(UPLOAD_LIFETIME_MS);
    await beginUpload(services, alice, newId(), 1000);
  });

  test('another account’s upload is not found by its id', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const bob = await insertTestAccount(services, 'bob');
    const id = newId();
    await beginUpload(services, alice, id, 10);
    expect(await findOwnUpload(services, alice, id)).toMatchObject({ id, length: 10, sha256: null });
    expect(await findOwnUpload(services, bob, id)).toBeNull();
  });
});

describe('completing an upload', () => {
  test('the bytes are hashed, moved into the content store under a new key, and recorded for the account', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const id = await stageTestUpload(services, alice, 'hello, world');
    const done = await completeUpload(services, alice, id);

    expect(done.sha256).toBe(sha256Of('hello, world'));
    const [content] = await contentRows(services);
    expect(content).toMatchObject({ id: done.contentId, sha256: done.sha256, size: 12, encrypted: 0 });
    expect(await storedKeys(services)).toEqual([content.storage_key]);
    expect(await findOwnUpload(services, alice, id)).toMatchObject({ sha256: done.sha256 });
    // The upload folder holds nothing of it any more, and no write intent is left behind.
    const area = localUploadAreaFor(services.config);
    expect(existsSync(area.dataPath(id)) || existsSync(`${area.dataPath(id)}.json`)).toBe(false);
    expect(await services.db.selectFrom('content_removals').selectAll().execute()).toEqual([]);
  });

  test('bytes stored before (by anyone) are stored once: the new copy is discarded and the content reused', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const bob = await insertTestAccount(services, 'bob');
    const first = await completeUpload(services, alice, await stageTestUpload(services, alice, 'same bytes'));
    const secondId = await stageTestUpload(services, bob, 'same bytes');
    const second = await completeUpload(services, bob, secondId);

    expect(second).toEqual(first);
    expect(await contentRows(services)).toHaveLength(1);
    expect(await storedKeys(services)).toHaveLength(1);
    expect(existsSync(localUploadAreaFor(services.config).dataPath(secondId))).toBe(false);
  });

  test('an empty upload completes to the hash of nothing', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const done = await completeUpload(services, alice, await stageTestUpload(services, alice, ''));
    expect(done.sha256).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  test('completing twice (a repeated last request) gives the same answer and stores nothing more', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const id = await stageTestUpload(services, alice, 'twice');
    const [a, b] = await Promise.all([completeUpload(services, alice, id), completeUpload(services, alice, id)]);
    expect(b).toEqual(a);
    expect(await completeUpload(services, alice, id)).toEqual(a);
    expect(await contentRows(services)).toHaveLength(1);
    expect(await storedKeys(services)).toHaveLength(1);
  });

  test('another account cannot complete an upload', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const bob = await insertTestAccount(services, 'bob');
    const id = await stageTestUpload(services, alice, 'mine');
    expect((await refusal(completeUpload(services, bob, id))).code).toBe(ResultCode.NotFound);
  });

  test('bytes that do not have the declared length are not stored', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const id = newId();
    await beginUpload(services, alice, id, 10);
    const area = localUploadAreaFor(services.config);
    await mkdir(area.directory, { recursive: true });
    await writeFile(area.dataPath(id), 'short');
    await expect(completeUpload(services, alice, id)).rejects.toThrow(/5 bytes, not the 10 declared/);
    expect(await contentRows(services)).toEqual([]);
  });

  test('hashing streams the file and gives its size', async () => {
    const services = await openTestServices();
    const file = `${services.config.dataDir}/big`;
    const data = randomBytes(3 * 1024 * 1024 + 7);
    await writeFile(file, data);
    expect(await sha256OfStream(createReadStream(file))).toEqual({ sha256: sha256Of(data), size: data.length });
  });
});

describe('completion interrupted by a crash (kill -9) at each step', () => {
  /** The state a completion leaves when killed right after committing its intent and staged key. */
  async function stageKey(services: TestServices, id: string, bytes: string): Promise<string> {
    const key = contentStoreFor(services.config).newKey(sha256Of(bytes));
    await services.db.transaction().execute(async (tx) => {
      await queueRemoval(tx, key, services.now(), new Date(services.now().getTime() + DAY));
      await stageUpload(tx, id, { sha256: sha256Of(bytes), key });
    });
    return key;
  }

  test('killed while hashing: nothing was recorded; completing again does it all', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const id = await stageTestUpload(services, alice, 'hashed twice');
    expect(await completeIfArrived(services, alice, id)).toMatchObject({ sha256: sha256Of('hashed twice') });
  });

  test('killed after the bytes moved into the store, before their row: the next attempt adopts them', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const id = await stageTestUpload(services, alice, 'moved, not recorded');
    const key = await stageKey(services, id, 'moved, not recorded');
    await contentStoreFor(services.config).putFile(key, localUploadAreaFor(services.config).dataPath(id));

    const done = await completeIfArrived(services, alice, id);
    expect(done?.sha256).toBe(sha256Of('moved, not recorded'));
    const [content] = await contentRows(services);
    expect(content).toMatchObject({ id: done!.contentId, storage_key: key });
    // The intent was withdrawn with the row: the blob is never removed while referenced.
    expect(await services.db.selectFrom('content_removals').selectAll().execute()).toEqual([]);
    services.clock.advance(2 * DAY);
    await insertTestFile(services, { accountId: alice, name: 'kept.txt', contentId: done!.contentId, sha256: done!.sha256, size: 19 });
    await removeUnreferencedContent(services);
    expect(await storedKeys(services)).toEqual([key]);
  });

  test('killed after the intent, before the move: the next attempt stores under a new key; the stale intent deletes nothing', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const id = await stageTestUpload(services, alice, 'not moved yet');
    const staleKey = await stageKey(services, id, 'not moved yet');

    const done = await completeUpload(services, alice, id);
    const [content] = await contentRows(services);
    expect(content.storage_key).not.toBe(staleKey);
    await insertTestFile(services, { accountId: alice, name: 'kept.txt', contentId: done.contentId, sha256: done.sha256, size: 13 });
    services.clock.advance(DAY);
    expect((await removeUnreferencedContent(services)).blobsDeleted).toBe(1); // the stale key: nothing there
    expect(await storedKeys(services)).toEqual([content.storage_key]);
  });

  test('killed after the row was committed, before the upload folder was cleaned: the upload stands completed', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const id = await stageTestUpload(services, alice, 'done');
    const done = await completeUpload(services, alice, id);
    // What the cleanup would have removed, back again.
    await writeFile(`${localUploadAreaFor(services.config).dataPath(id)}.json`, '{}');
    expect(await completeIfArrived(services, alice, id)).toEqual(done);
    expect(await completeUpload(services, alice, id)).toEqual(done);
  });

  test('while bytes are still missing, nothing is completed', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const id = newId();
    await beginUpload(services, alice, id, 10);
    const area = localUploadAreaFor(services.config);
    await mkdir(area.directory, { recursive: true });
    await writeFile(area.dataPath(id), 'part');
    expect(await completeIfArrived(services, alice, id)).toBeNull();
    expect(await contentRows(services)).toEqual([]);
  });
});

describe('claimContent (what FileAdd calls)', () => {
  test('a completed upload of the account with that hash and size is claimed once', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const done = await completeUpload(services, alice, await stageTestUpload(services, alice, 'report'));
    expect(await claim(services, alice, done.sha256, 6)).toBe(done.contentId);
    expect((await refusal(claim(services, alice, done.sha256, 6))).code).toBe(ResultCode.NotFound);
  });

  test('a hash that is not 64 lowercase hex digits, or a negative size, is a 400', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const hash = sha256Of('x');
    for (const bad of [hash.toUpperCase(), hash.slice(1), `${hash}0`, '', 'z'.repeat(64)]) {
      expect((await refusal(claim(services, alice, bad, 1))).code).toBe(ResultCode.InvalidArgument);
    }
    expect((await refusal(claim(services, alice, hash, -1))).code).toBe(ResultCode.InvalidArgument);
  });

  test('nothing uploaded or owned with that hash and size is a 404', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const error = await refusal(claim(services, alice, sha256Of('never'), 5));
    expect(error.code).toBe(ResultCode.NotFound);
    expect(error.message).toBe('no completed upload or owned content with that hash and size');
  });

  test('the size must match too', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const done = await completeUpload(services, alice, await stageTestUpload(services, alice, 'sized'));
    expect((await refusal(claim(services, alice, done.sha256, 6))).code).toBe(ResultCode.NotFound);
  });

  test('another account’s completed upload cannot be claimed', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const bob = await insertTestAccount(services, 'bob');
    const done = await completeUpload(services, alice, await stageTestUpload(services, alice, 'private'));
    expect((await refusal(claim(services, bob, done.sha256, 7))).code).toBe(ResultCode.NotFound);
  });

  test('a completed upload that waited past its claim lifetime cannot be claimed', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const done = await completeUpload(services, alice, await stageTestUpload(services, alice, 'late'));
    services.clock.advance(CLAIM_LIFETIME_MS);
    expect((await refusal(claim(services, alice, done.sha256, 4))).code).toBe(ResultCode.NotFound);
  });

  test('instant upload: content the account already has in a live file, or in the bin, needs no transfer', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const live = await storeTestContent(services, 'live bytes');
    await insertTestFile(services, { accountId: alice, name: 'a.txt', ...live });
    const binned = await storeTestContent(services, 'binned bytes');
    await insertTestFile(services, { accountId: alice, name: 'b.txt', ...binned, deletedAt: 1 });

    expect(await claim(services, alice, live.sha256, live.size)).toBe(live.contentId);
    // Any number of times: nothing is consumed.
    expect(await claim(services, alice, live.sha256, live.size)).toBe(live.contentId);
    expect(await claim(services, alice, binned.sha256, binned.size)).toBe(binned.contentId);
  });

  test('content that only another account has is not an instant upload', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const bob = await insertTestAccount(services, 'bob');
    const theirs = await storeTestContent(services, 'bob only');
    await insertTestFile(services, { accountId: bob, name: 'x.txt', ...theirs });
    expect((await refusal(claim(services, alice, theirs.sha256, theirs.size))).code).toBe(ResultCode.NotFound);
  });

  test('encrypted content with the same plaintext hash is not an instant upload', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const hash = sha256Of('secret');
    const encrypted = await services.db
      .insertInto('content')
      .values({ sha256: hash, size: 6, storage_key: 'enc-key', encrypted: 1, created_at: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await insertTestFile(services, { accountId: alice, name: 's.txt', contentId: encrypted.id, sha256: hash, size: 6 });
    expect((await refusal(claim(services, alice, hash, 6))).code).toBe(ResultCode.NotFound);
  });

  test('a claim rolled back with FileAdd’s transaction leaves the upload claimable', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const done = await completeUpload(services, alice, await stageTestUpload(services, alice, 'again'));
    await expect(
      services.db.transaction().execute(async (tx) => {
        await claimContent(tx, services, alice, done.sha256, 5, 0);
        throw new Error('the file record could not be created');
      }),
    ).rejects.toThrow(/could not be created/);
    expect(await claim(services, alice, done.sha256, 5)).toBe(done.contentId);
  });
});

describe('purging expired uploads', () => {
  test('an unfinished upload past its lifetime goes with its bytes', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const id = await stageTestUpload(services, alice, 'half');
    services.clock.advance(UPLOAD_LIFETIME_MS - 1);
    expect(await purgeExpiredUploads(services)).toEqual({ uploads: 0, strays: 0 });
    services.clock.advance(1);
    expect(await purgeExpiredUploads(services)).toEqual({ uploads: 1, strays: 0 });
    expect(await findOwnUpload(services, alice, id)).toBeNull();
    expect(existsSync(localUploadAreaFor(services.config).dataPath(id))).toBe(false);
  });

  test('a completed upload never claimed goes after its claim lifetime', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const id = await stageTestUpload(services, alice, 'unclaimed');
    await completeUpload(services, alice, id);
    services.clock.advance(CLAIM_LIFETIME_MS);
    expect((await purgeExpiredUploads(services)).uploads).toBe(1);
    expect(await findOwnUpload(services, alice, id)).toBeNull();
  });

  test('files of uploads that no longer exist are removed once old; fresh ones and live uploads stay', async () => {
    const services = await openTestServices();
    const alice = await insertTestAccount(services, 'alice');
    const live = await stageTestUpload(services, alice, 'live');
    const area = localUploadAreaFor(services.config);
    const old = newId();
    const fresh = newId();
    for (const id of [old, fresh]) {
      await writeFile(area.dataPath(id), 'left behind');
      await writeFile(`${area.dataPath(id)}.json`, '{}');
    }
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    for (const file of [area.dataPath(old), `${area.dataPath(old)}.json`, area.dataPath(live)]) await utimes(file, twoHoursAgo, twoHoursAgo);

    expect(await purgeExpiredUploads(services)).toEqual({ uploads: 0, strays: 1 });
    expect(existsSync(area.dataPath(old)) || existsSync(`${area.dataPath(old)}.json`)).toBe(false);
    expect(existsSync(area.dataPath(fresh))).toBe(true);
    expect(existsSync(area.dataPath(live))).toBe(true);
  });
});
