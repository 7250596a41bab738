/**
 * Removing unreferenced content (docs/uploads-and-downloads.md §3): rows deleted and keys queued in one transaction,
 * then each blob, then its queue row; so a blob goes only after the commit that removed its last reference;
 * its derived images (thumbnails) go with it.
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
const MAX_BATCHES = 100;
/** A failed blob deletion (say, the object store is down) is retried after this. */
const RETRY_AFTER_MS = 10 * 60_000;
/** Temporary files of interrupted writes are removed once this old. */
const PARTIAL_WRITE_AGE_MS = 3600_000;
/** A write intent (a key queued before its blob is written) falls due this long after: far beyond any write. */
export const WRITE_INTENT_GRACE_MS = 24 * 3600_000;

export interface RemovalReport {
  readonly rowsRemoved: number;
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
    const done = await deleteBlobs(services, keys, now);
    blobsDeleted += done.deleted;
    failures += done.failures;
    if (keys.length < BATCH) break;
  }

  await store.sweepPartialWrites(new Date(Date.now() - PARTIAL_WRITE_AGE_MS));
  return { rowsRemoved, blobsDeleted, failures };
}

/** Deletes each started key's blob, then its queue row; a failed deletion is postponed for a retry. */
async function deleteBlobs(services: Services, keys: readonly string[], now: Date): Promise<{ deleted: number; failures: number }> {
  const { db } = services;
  const store = contentStoreFor(services.config);
  let deleted = 0;
  let failures = 0;
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
    deleted++;
  }
  return { deleted, failures };
}

/** Removes these content rows now if nothing references them, then their blobs: plaintext that encryption just replaced. */
export async function removeContentIfUnreferenced(services: Services, contentIds: readonly number[]): Promise<RemovalReport> {
  const { db } = services;
  const keys = await db.transaction().execute((tx) => deleteUnreferencedContentAmong(tx, contentIds, services.now()));
  const now = services.now();
  const done = await deleteBlobs(services, await startRemovalsOf(db, keys, now), now);
  return { rowsRemoved: keys.length, blobsDeleted: done.deleted, failures: done.failures };
}

export interface ContentAudit {
  /** Blobs nothing in the database knows (no content row, queued removal or cover image). */
  readonly orphans: readonly string[];
  /** Content rows whose blob is missing or has another size. */
  readonly damaged: ReadonlyArray<{ readonly contentId: number; readonly storageKey: string; readonly problem: 'missing' | 'size' }>;
}

/**
 * Checks the whole store against the database (an operator's command: it lists every blob). `repair` queues
 * orphans for removal (no row and no write intent: never live); damaged rows are only reported.
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
