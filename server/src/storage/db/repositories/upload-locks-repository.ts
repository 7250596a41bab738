/**
 * SQL of the upload locks (operations/content/upload-locks.ts): taking one is an insert that takes over the row only
 * when its lease ran out, and later steps name the holder, so of several instances racing exactly one wins.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema';

export interface LockClaim {
  readonly name: string;
  readonly holder: string;
  readonly instance: string;
  readonly now: Date;
  readonly expiresAt: Date;
}

/** Takes lock `name` when it is free or its lease has run out; false when someone holds it. */
export async function claimUploadLock(db: Kysely<Database>, claim: LockClaim): Promise<boolean> {
  const lease = { holder: claim.holder, instance: claim.instance, acquired_at: claim.now.getTime(), expires_at: claim.expiresAt.getTime(), release_requested: 0 as const };
  const row = await db
    .insertInto('upload_locks')
    .values({ name: claim.name, ...lease })
    .onConflict((oc) => oc.column('name').doUpdateSet(lease).where('upload_locks.expires_at', '<=', claim.now.getTime()))
    .returning('holder')
    .executeTakeFirst();
  return row?.holder === claim.holder;
}

/** Asks whoever holds lock `name` to let go (idempotent: writes only the first time). */
export async function requestUploadLockRelease(db: Kysely<Database>, name: string): Promise<void> {
  await db.updateTable('upload_locks').set({ release_requested: 1 }).where('name', '=', name).where('release_requested', '=', 0).execute();
}

/** Lets go of lock `name` if `holder` still holds it. */
export async function releaseUploadLock(db: Kysely<Database>, name: string, holder: string): Promise<void> {
  await db.deleteFrom('upload_locks').where('name', '=', name).where('holder', '=', holder).execute();
}

export interface HeldLock {
  readonly name: string;
  readonly holder: string;
}

/** Extends the lease of every lock the instance holds; returns those it still holds. */
export async function renewUploadLocks(db: Kysely<Database>, instance: string, expiresAt: Date): Promise<HeldLock[]> {
  return db
    .updateTable('upload_locks')
    .set({ expires_at: expiresAt.getTime() })
    .where('instance', '=', instance)
    .returning(['name', 'holder'])
    .execute();
}

/** The locks of the instance that another request has asked it to let go. */
export async function uploadLocksToRelease(db: Kysely<Database>, instance: string): Promise<HeldLock[]> {
  return db.selectFrom('upload_locks').select(['name', 'holder']).where('instance', '=', instance).where('release_requested', '=', 1).execute();
}

/** Housekeeping: deletes locks whose lease ran out before `before` (their instance is gone). */
export async function deleteExpiredUploadLocks(db: Kysely<Database>, before: Date): Promise<number> {
  const result = await db.deleteFrom('upload_locks').where('expires_at', '<', before.getTime()).executeTakeFirst();
  return Number(result.numDeletedRows);
}
