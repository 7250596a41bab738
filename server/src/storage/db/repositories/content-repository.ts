/**
 * SQL for content rows, the content-removal queue, and the content a file points to. Rows become
 * camelCase objects here. Rules (when content may be removed, when a key may become live) are in
 * operations/content/uploads.ts and operations/content/content-removal.ts; this module only runs the statements
 * they need, each in the database or transaction it is given.
 */
import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { lockRows } from '../engine/dialect';
import type { Database } from '../schema';

export interface StoredContent {
  readonly id: number;
  readonly sha256: string;
  readonly size: number;
  readonly storageKey: string;
}

/** A live file (not in the bin, not beneath a folder in the bin) and the content it points to. */
export interface LiveFileContent {
  readonly fileId: number;
  readonly accountId: number;
  readonly name: string;
  readonly ext: string;
  readonly contentId: number;
  readonly sha256: string;
  readonly size: number;
  readonly storageKey: string;
  readonly encrypted: boolean;
}

/** The plaintext content with this hash (there is at most one: content_plaintext_sha256). */
export async function findPlaintextContent(db: Kysely<Database>, sha256: string): Promise<StoredContent | undefined> {
  const row = await db
    .selectFrom('content')
    .select(['id', 'sha256', 'size', 'storage_key'])
    .where('sha256', '=', sha256)
    .where('encrypted', '=', 0)
    .executeTakeFirst();
  return row && { id: row.id, sha256: row.sha256, size: row.size, storageKey: row.storage_key };
}

/**
 * Inserts plaintext content; returns its id, or undefined when plaintext content with that hash
 * exists already (a concurrent upload of the same bytes won). The conflict target repeats the
 * partial index's predicate literally, as both engines require to match a partial unique index.
 */
export async function insertPlaintextContent(
  db: Kysely<Database>,
  content: { readonly sha256: string; readonly size: number; readonly storageKey: string; readonly createdAt: Date },
): Promise<number | undefined> {
  const row = await db
    .insertInto('content')
    .values({ sha256: content.sha256, size: content.size, storage_key: content.storageKey, encrypted: 0, created_at: content.createdAt.getTime() })
    .onConflict((oc) => oc.column('sha256').where(sql.ref('encrypted'), '=', sql.lit(0)).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

/** The plaintext content with this hash and size that a file of the account (live or binned) points to. */
export async function findOwnedPlaintextContent(db: Kysely<Database>, accountId: number, sha256: string, size: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('content')
    .select('content.id')
    .where('content.sha256', '=', sha256)
    .where('content.size', '=', size)
    .where('content.encrypted', '=', 0)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('files')
          .select(sql.lit(1).as('one'))
          .whereRef('files.content_id', '=', 'content.id')
          .where('files.account_id', '=', accountId),
      ),
    )
    .executeTakeFirst();
  return row?.id;
}

/** A live file of `accountId` with the content it points to; undefined when none. */
export async function findLiveFileContent(db: Kysely<Database>, fileId: number, accountId: number): Promise<LiveFileContent | undefined> {
  const row = await db
    .selectFrom('files')
    .innerJoin('content', 'content.id', 'files.content_id')
    .select([
      'files.id as file_id',
      'files.account_id',
      'files.name',
      'files.ext',
      'files.content_id',
      'content.sha256',
      'content.size',
      'content.storage_key',
      'content.encrypted',
    ])
    .where('files.id', '=', fileId)
    .where('files.account_id', '=', accountId)
    .where('files.deleted_at', 'is', null)
    .where('files.binned_under', 'is', null)
    .executeTakeFirst();
  return (
    row && {
      fileId: row.file_id,
      accountId: row.account_id,
      name: row.name,
      ext: row.ext,
      contentId: row.content_id,
      sha256: row.sha256,
      size: row.size,
      storageKey: row.storage_key,
      encrypted: row.encrypted === 1,
    }
  );
}

// ---- Removal -------------------------------------------------------------------------------

/** Content that no file and no completed upload references. */
const unreferenced = (eb: ExpressionBuilder<Database, 'content'>) =>
  eb.and([
    eb.not(eb.exists(eb.selectFrom('files').select(sql.lit(1).as('one')).whereRef('files.content_id', '=', 'content.id'))),
    eb.not(eb.exists(eb.selectFrom('uploads').select(sql.lit(1).as('one')).whereRef('uploads.content_id', '=', 'content.id'))),
  ]);

/**
 * Deletes those of the content rows `ids` that nothing references and queues their keys, due now,
 * in `tx`. The delete itself tests the references, so one added meanwhile keeps its content (and
 * the foreign keys refuse the rest). On PostgreSQL the rows are locked first (dialect.lockRows):
 * a reference that a concurrent transaction was adding is then committed and seen by the delete,
 * instead of making it fail on the foreign key; one added after the lock waits for this
 * transaction, and finds its content gone (FileAdd then decides again). Returns the keys queued.
 */
async function deleteAndQueue(tx: Kysely<Database>, ids: readonly number[], now: Date): Promise<string[]> {
  if (ids.length === 0) return [];
  await lockRows(tx, 'content', ids);
  const deleted = await tx.deleteFrom('content').where('id', 'in', ids).where(unreferenced).returning('storage_key').execute();
  if (deleted.length === 0) return [];
  const at = now.getTime();
  await tx
    .insertInto('content_removals')
    .values(deleted.map((row) => ({ storage_key: row.storage_key, created_at: at, due_at: at })))
    // Keys are never reused, so a key cannot be queued already; if it were, its row stays.
    .onConflict((oc) => oc.column('storage_key').doNothing())
    .execute();
  return deleted.map((row) => row.storage_key);
}

/**
 * Deletes up to `limit` content rows that no file and no upload references, and queues their
 * keys for deletion from the store, in the transaction `tx` (the caller's: both or neither).
 * Returns the keys queued.
 */
export async function deleteUnreferencedContent(tx: Kysely<Database>, now: Date, limit: number): Promise<string[]> {
  const candidates = await tx.selectFrom('content').select('id').where(unreferenced).orderBy('id').limit(limit).execute();
  return deleteAndQueue(
    tx,
    candidates.map((row) => row.id),
    now,
  );
}

/**
 * Like deleteUnreferencedContent, for the given content rows only (content that encryption or
 * decryption has just replaced). Returns the keys queued.
 */
export function deleteUnreferencedContentAmong(tx: Kysely<Database>, contentIds: readonly number[], now: Date): Promise<string[]> {
  return deleteAndQueue(tx, contentIds, now);
}

/** Marks these queued, due keys as being deleted (as startDueRemovals does) and returns them. */
export async function startRemovalsOf(db: Kysely<Database>, keys: readonly string[], now: Date): Promise<string[]> {
  if (keys.length === 0) return [];
  const at = now.getTime();
  const rows = await db
    .updateTable('content_removals')
    .set((eb) => ({ started_at: eb.fn.coalesce('started_at', eb.val(at)), attempts: eb('attempts', '+', 1) }))
    .where('storage_key', 'in', keys)
    .where('due_at', '<=', at)
    .returning('storage_key')
    .execute();
  return rows.map((row) => row.storage_key);
}

/**
 * Queues `key` for deletion from `dueAt` on: a write intent, or a blob found to be an orphan. A key
 * queued already keeps its row: this never revives or reschedules a queued key.
 */
export async function queueRemoval(db: Kysely<Database>, key: string, now: Date, dueAt: Date): Promise<void> {
  await db
    .insertInto('content_removals')
    .values({ storage_key: key, created_at: now.getTime(), due_at: dueAt.getTime() })
    .onConflict((oc) => oc.column('storage_key').doNothing())
    .execute();
}

/**
 * Makes a queued key due now (a copy that lost a race with identical bytes). Only a key still
 * queued is affected: a withdrawn intent (its content row exists) is never queued again this way.
 */
export async function expediteRemoval(db: Kysely<Database>, key: string, now: Date): Promise<void> {
  await db.updateTable('content_removals').set({ due_at: now.getTime() }).where('storage_key', '=', key).execute();
}

/**
 * Withdraws the write intent of `key` so that a content row may adopt it. False when its deletion
 * has begun (or it was never queued): then the key must not become live.
 */
export async function withdrawWriteIntent(tx: Kysely<Database>, key: string): Promise<boolean> {
  const result = await tx.deleteFrom('content_removals').where('storage_key', '=', key).where('started_at', 'is', null).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Marks up to `limit` due keys as being deleted (from now on none of them may become live) and
 * returns them. Keys started before and not finished (a crash, a failed delete) are due again.
 * One statement, and only the rows it updated count: a write intent withdrawn meanwhile (its
 * content row committed) is not returned.
 */
export async function startDueRemovals(db: Kysely<Database>, now: Date, limit: number): Promise<string[]> {
  const at = now.getTime();
  const rows = await db
    .updateTable('content_removals')
    .set((eb) => ({ started_at: eb.fn.coalesce('started_at', eb.val(at)), attempts: eb('attempts', '+', 1) }))
    .where('storage_key', 'in', (eb) => eb.selectFrom('content_removals').select('storage_key').where('due_at', '<=', at).orderBy('due_at').limit(limit))
    .where('due_at', '<=', at)
    .returning('storage_key')
    .execute();
  return rows.map((row) => row.storage_key);
}

/** The blob of `key` is gone: forget it. */
export async function finishRemoval(db: Kysely<Database>, key: string): Promise<void> {
  await db.deleteFrom('content_removals').where('storage_key', '=', key).execute();
}

/** Deleting the blob of `key` failed: try again from `retryAt`. */
export async function postponeRemoval(db: Kysely<Database>, key: string, error: string, retryAt: Date): Promise<void> {
  await db
    .updateTable('content_removals')
    .set({ last_error: error.slice(0, 500), due_at: retryAt.getTime() })
    .where('storage_key', '=', key)
    .execute();
}

// ---- Integrity -----------------------------------------------------------------------------

/** Of `keys`, those the database knows: a content row, a queued removal, or a share's cover image. */
export async function knownStorageKeys(db: Kysely<Database>, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db
    .selectFrom('content')
    .select('storage_key as key')
    .where('storage_key', 'in', keys)
    .union(db.selectFrom('content_removals').select('storage_key as key').where('storage_key', 'in', keys))
    .union(db.selectFrom('shares').select('image_key as key').where('image_key', 'in', keys).$narrowType<{ key: string }>())
    .execute();
  return new Set(rows.map((row) => row.key));
}

/** Content rows in id order, `limit` at a time after `afterId` (for integrity checks). */
export async function contentKeysAfter(db: Kysely<Database>, afterId: number, limit: number): Promise<Array<{ id: number; storageKey: string; size: number }>> {
  const rows = await db.selectFrom('content').select(['id', 'storage_key', 'size']).where('id', '>', afterId).orderBy('id').limit(limit).execute();
  return rows.map((row) => ({ id: row.id, storageKey: row.storage_key, size: row.size }));
}

/** Which of these SHA-256 hashes plaintext content has, as `<sha256>-<size>` (derived images' sources). */
export async function plaintextContentAmong(db: Kysely<Database>, sha256s: readonly string[]): Promise<Set<string>> {
  if (sha256s.length === 0) return new Set();
  const rows = await db.selectFrom('content').select(['sha256', 'size']).where('sha256', 'in', sha256s).where('encrypted', '=', 0).execute();
  return new Set(rows.map((row) => `${row.sha256}-${row.size}`));
}
