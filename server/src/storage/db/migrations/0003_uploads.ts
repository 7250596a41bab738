/**
 * tus uploads (owned, reserved against the quota, then claimable by FileAdd) and `content_removals`, the blobs to
 * delete. A key is queued before anything happens to its blob: by the commit that drops its last reference, or as
 * a write intent before it is written (removed when its content row commits), so a crash leaves no orphan.
 */
import { sql, type Kysely } from 'kysely';
import { migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    await db.schema
      .createTable('uploads')
      // The tus upload id: 128 random bits, hex. It is in the upload's URL.
      .addColumn('id', 'text', (col) => col.primaryKey())
      .addColumn('account_id', 'bigint', (col) => col.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('length', 'bigint', (col) => col.notNull().check(sql`length >= 0`))
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      // In progress: created_at + the upload lifetime; completed: completed_at + the claim lifetime.
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      // Set once the bytes are hashed, before they move into the content store.
      .addColumn('sha256', 'text')
      // The key the bytes are being moved to (with its write intent): a completion interrupted
      // after the move finds its bytes there and adopts them instead of losing the upload.
      .addColumn('staged_key', 'text')
      .addColumn('completed_at', 'bigint')
      .addColumn('content_id', 'bigint', (col) => col.references('content.id'))
      .addCheckConstraint(
        'uploads_completion',
        sql`(completed_at is null and content_id is null) or (completed_at is not null and sha256 is not null and content_id is not null)`,
      )
      .execute();
    // FileAdd's claim (account, sha256) and the quota reservation (account).
    await db.schema.createIndex('uploads_account').on('uploads').columns(['account_id', 'sha256']).execute();
    // Whether content is still referenced by a completed upload, before it is removed.
    await db.schema.createIndex('uploads_content').on('uploads').column('content_id').where('content_id', 'is not', null).execute();
    await db.schema.createIndex('uploads_expiry').on('uploads').column('expires_at').execute();

    await db.schema
      .createTable('content_removals')
      // Keys are never reused (storage/content/content-store.ts), so one row per key.
      .addColumn('storage_key', 'text', (col) => col.primaryKey())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      // Not before: now for content that lost its last reference; far ahead for a write intent.
      .addColumn('due_at', 'bigint', (col) => col.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('attempts', 'bigint', (col) => col.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .execute();
    await db.schema.createIndex('content_removals_due').on('content_removals').column('due_at').execute();
  });
}
