/**
 * Removing content from storage when nothing references it any more (DECISIONS.md §8, §11).
 *
 * Two steps, each safe to interrupt at any point and to run on several instances at once:
 * 1. In one transaction, content rows that no file and no upload references are deleted and
 *    their storage keys queued (content_removals). Either both happen or neither.
 * 2. Each due queued key is marked started (it can never become live again), its blob deleted
 *    (deleting a missing blob succeeds), and only then its queue row deleted. A crash before the
 *    row goes leaves the key queued, and the next run deletes it again: harmless.
 * Blobs are therefore only ever deleted after the commit that removed their last reference, and
 * a blob whose reference was removed is always deleted eventually. Keys are never reused, so a
 * late deletion can never hit a newer upload of the same bytes.
 *
 * Derived images (thumbnails, operations/previews/derived-images.ts) go with the blob, in step 2.
 *
 * The same queue holds write intents (operations/content/uploads.ts): keys of blobs being written, due
 * long after; a crash between writing a blob and inserting its row is cleaned up by step 2.
 */
import {
  contentKeysAfter,
  deleteUnreferencedContent,
  deleteUnreferencedContentAmong,
  finishRemoval,
  knownStorageKeys,
  postponeRemoval,
  queueRemoval,
  startDueRemovals,
  startRemovalsOf,
} from '../../storage/db/repositories/content-repository';
import { contentStoreFor } from '../../storage/content/stores';
import type { Services } from '../context';
import { removeDerivedImagesOf } from '../previews/derived-images';

const BATCH = 500;
/** Work per run is bounded; what is left waits for the next run. */
const MAX_BATCHES = 100;
/** A failed blob deletion (say, the object store is down) is retried after this. */
const RETRY_AFTER_MS = 10 * 60_000;
/** Temporary files of interrupted writes are removed once this old. */
const PARTIAL_WRITE_AGE_MS = 3600_000;

export interface RemovalReport {
  /** Content rows deleted (their keys queued). */
  readonly rowsRemoved: number;
  /** Blobs deleted from the store. */
  readonly blobsDeleted: number;
  /** Blob deletions that failed and will be retried. */
  readonly failures: number;
}

/** Housekeeping: deletes unreferenced content rows, then the queued blobs that are due. */
export async function removeUnreferencedContent(services: Services): Promise<RemovalReport> {
  const { db } = services;
  const store = contentStoreFor(services.config);

  let rowsRemoved = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const keys = await db.transaction().execute((tx) => deleteUnreferencedContent(tx, services.now(), BATCH));
    rowsRemoved += keys.length;
    if (keys.length < BATCH) break;
  }

  let blobsDeleted = 0;
  let failures = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const now = services.now();
    const keys = await startDueRemovals(db, now, BATCH);
    for (const key of keys) {
      try {
        await store.delete(key);
        await removeDerivedImagesOf(services, key);
      } catch (error) {
        failures++;
        await postponeRemoval(db, key, error instanceof Error ? error.message : String(error), new Date(now.getTime() + RETRY_AFTER_MS));
        continue;
      }
      await finishRemoval(db, key);
      blobsDeleted++;
    }
    if (keys.length < BATCH) break;
  }

  await store.sweepPartialWrites(new Date(Date.now() - PARTIAL_WRITE_AGE_MS));
  return { rowsRemoved, blobsDeleted, failures };
}

/**
 * Removes the given content rows now if nothing references them, and then their blobs, by the same
 * two steps as removeUnreferencedContent. For content that encryption (operations/encryption/encryption.ts)
 * has just replaced, so that plaintext does not wait for the next housekeeping run; content that a
 * file or an upload still references is left exactly as it is. A failed blob deletion stays queued
 * for housekeeping.
 */
export async function removeContentIfUnreferenced(services: Services, contentIds: readonly number[]): Promise<RemovalReport> {
  const { db } = services;
  const keys = await db.transaction().execute((tx) => deleteUnreferencedContentAmong(tx, contentIds, services.now()));
  const now = services.now();
  const store = contentStoreFor(services.config);
  let blobsDeleted = 0;
  let failures = 0;
  for (const key of await startRemovalsOf(db, keys, now)) {
    try {
      await store.delete(key);
      await removeDerivedImagesOf(services, key);
    } catch (error) {
      failures++;
      await postponeRemoval(db, key, error instanceof Error ? error.message : String(error), new Date(now.getTime() + RETRY_AFTER_MS));
      continue;
    }
    await finishRemoval(db, key);
    blobsDeleted++;
  }
  return { rowsRemoved: keys.length, blobsDeleted, failures };
}

export interface ContentAudit {
  /** Blobs that nothing in the database knows (no content row, no queued removal, no cover image). */
  readonly orphans: readonly string[];
  /** Content rows whose blob is missing or has another size. */
  readonly damaged: ReadonlyArray<{ readonly contentId: number; readonly storageKey: string; readonly problem: 'missing' | 'size' }>;
}

/**
 * An integrity check of the whole store against the database (for an operator's command, not
 * periodic: it lists every blob). With `repair`, orphans are queued for removal: a blob with no row
 * and no write intent can never become live, so deleting it is safe. Damaged rows are only
 * reported: the bytes are gone, and a person decides what to tell the owners.
 */
export async function auditContent(services: Services, options: { readonly repair?: boolean } = {}): Promise<ContentAudit> {
  const { db } = services;
  const store = contentStoreFor(services.config);

  const orphans: string[] = [];
  const checkBatch = async (keys: string[]) => {
    const known = await knownStorageKeys(db, keys);
    for (const key of keys) {
      // Listed, unknown, and still there: a removal that finished meanwhile is not an orphan.
      if (!known.has(key) && (await store.stat(key)) !== null) orphans.push(key);
    }
  };
  let pending: string[] = [];
  for await (const key of store.listKeys()) {
    pending.push(key);
    if (pending.length === BATCH) {
      await checkBatch(pending);
      pending = [];
    }
  }
  await checkBatch(pending);
  if (options.repair) {
    for (const key of orphans) await queueRemoval(db, key, services.now(), services.now());
  }

  const damaged: Array<{ contentId: number; storageKey: string; problem: 'missing' | 'size' }> = [];
  for (let after = 0; ; ) {
    const rows = await contentKeysAfter(db, after, BATCH);
    for (const row of rows) {
      const stat = await store.stat(row.storageKey);
      if (stat === null) damaged.push({ contentId: row.id, storageKey: row.storageKey, problem: 'missing' });
      else if (stat.size !== row.size) damaged.push({ contentId: row.id, storageKey: row.storageKey, problem: 'size' });
    }
    if (rows.length < BATCH) break;
    after = rows[rows.length - 1].id;
  }
  return { orphans, damaged };
}
