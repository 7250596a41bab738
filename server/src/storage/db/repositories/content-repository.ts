/** SQL for content rows, the content-removal queue and a file's content; the rules are in operations/content/. */
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
  return db.selectFrom('content').select(['id', 'sha256', 'size', 'storage_key as storageKey']).where('sha256', '=', sha256).where('encrypted', '=', 0).executeTakeFirst();
}

/**
 * Inserts plaintext content; undefined when content with that hash exists (a concurrent upload won). The conflict
 * target repeats the partial index's predicate, as both engines require to match a partial unique index.
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
      'files.id as fileId',
      'files.account_id as accountId',
      'files.name',
      'files.ext',
      'files.content_id as contentId',
      'content.sha256',
      'content.size',
      'content.storage_key as storageKey',
      'content.encrypted',
    ])
    .where('files.id', '=', fileId)
    .where('files.account_id', '=', accountId)
    .where('files.deleted_at', 'is', null)
    .where('files.binned_under', 'is', null)
    .executeTakeFirst();
  return row && { ...row, encrypted: row.encrypted === 1 };
}

// ---- Removal -------------------------------------------------------------------------------

/** Content that no file and no completed upload references. */
const unreferenced = (eb: ExpressionBuilder<Database, 'content'>) =>
  eb.and([
    eb.not(eb.exists(eb.selectFrom('files').select(sql.lit(1).as('one')).whereRef('files.content_id', '=', 'content.id'))),
    eb.not(eb.exists(eb.selectFrom('uploads').select(sql.lit(1).as('one')).whereRef('uploads.content_id', '=', 'content.id'))),
  ]);

/**
 * Deletes those of content rows `ids` nothing references (content encryption or decryption just replaced) and queues their
 * keys, in `tx`; the delete itself tests references. On PostgreSQL the rows are locked first, so a concurrent FileAdd's
 * reference is seen, not a FK failure.
 */
export async function deleteUnreferencedContentAmong(tx: Kysely<Database>, ids: readonly number[], now: Date): Promise<string[]> {
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

/** Deletes up to `limit` unreferenced content rows and queues their keys, in the caller's `tx`; returns the keys. */
export async function deleteUnreferencedContent(tx: Kysely<Database>, now: Date, limit: number): Promise<string[]> {
  const candidates = await tx.selectFrom('content').select('id').where(unreferenced).orderBy('id').limit(limit).execute();
  return deleteUnreferencedContentAmong(
    tx,
    candidates.map((row) => row.id),
    now,
  );
}

/** Marks these queued, due keys as being deleted (as startDueRemovals does) and returns them. */
export async function startRemovalsOf(db: Kysely<Database>, keys: readonly string[], now: Date): Promise<string[]> {
  return keys.length === 0 ? [] : startRemovals(db, now, { keys });
}

/** Queues `key` for deletion from `dueAt` (a write intent, or an orphan); never revives or reschedules a queued key. */
export async function queueRemoval(db: Kysely<Database>, key: string, now: Date, dueAt: Date): Promise<void> {
  await db
    .insertInto('content_removals')
    .values({ storage_key: key, created_at: now.getTime(), due_at: dueAt.getTime() })
    .onConflict((oc) => oc.column('storage_key').doNothing())
    .execute();
}

/** Makes a still-queued key due now (a copy that lost a race); a withdrawn intent is never queued again this way. */
export async function expediteRemoval(db: Kysely<Database>, key: string, now: Date): Promise<void> {
  await db.updateTable('content_removals').set({ due_at: now.getTime() }).where('storage_key', '=', key).execute();
}

/** Withdraws `key`'s write intent so a content row may adopt it; false once its deletion has begun (it must not go live). */
export async function withdrawWriteIntent(tx: Kysely<Database>, key: string): Promise<boolean> {
  const result = await tx.deleteFrom('content_removals').where('storage_key', '=', key).where('started_at', 'is', null).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Marks up to `limit` due keys as being deleted (none may go live after) and returns them; unfinished ones are due
 * again. Only rows the statement updated count, so an intent withdrawn meanwhile is not returned.
 */
export function startDueRemovals(db: Kysely<Database>, now: Date, limit: number): Promise<string[]> {
  return startRemovals(db, now, { limit });
}

/** Marks due keys as being deleted: those of `keys`, or the `limit` longest due. */
async function startRemovals(db: Kysely<Database>, now: Date, which: { readonly keys: readonly string[] } | { readonly limit: number }): Promise<string[]> {
  const at = now.getTime();
  const rows = await db
    .updateTable('content_removals')
    .set((eb) => ({ started_at: eb.fn.coalesce('started_at', eb.val(at)), attempts: eb('attempts', '+', 1) }))
    .where((eb) =>
      'keys' in which
        ? eb('storage_key', 'in', which.keys)
        : eb('storage_key', 'in', eb.selectFrom('content_removals').select('storage_key').where('due_at', '<=', at).orderBy('due_at').limit(which.limit)),
    )
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
  return db.selectFrom('content').select(['id', 'storage_key as storageKey', 'size']).where('id', '>', afterId).orderBy('id').limit(limit).execute();
}

/** Which of these SHA-256 hashes plaintext content has, as `<sha256>-<size>` (derived images' sources). */
export async function plaintextContentAmong(db: Kysely<Database>, sha256s: readonly string[]): Promise<Set<string>> {
  if (sha256s.length === 0) return new Set();
  const rows = await db.selectFrom('content').select(['sha256', 'size']).where('sha256', 'in', sha256s).where('encrypted', '=', 0).execute();
  return new Set(rows.map((row) => `${row.sha256}-${row.size}`));
}
