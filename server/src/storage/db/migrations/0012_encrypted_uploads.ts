/**
 * Uploads encrypted as they arrive (docs/encryption.md, "Uploads into an encrypted folder"). An
 * upload created for a folder encrypted with key K, by a session that has K unlocked, is written to
 * the upload area as ciphertext from its first byte: the content format of
 * operations/crypto/content-cipher.ts, whose blob id and chunk size are fixed when the upload is
 * created. The row keeps them, so that the completion makes the encrypted content row the blob's
 * header was written for, and every later request on the upload knows which key to ask its
 * session for.
 *
 * - `key_id`, `blob_id`, `chunk_size`: all three set (an encrypted upload) or all null (plaintext).
 *   The key is not deleted while an upload uses it (encryption-repository keyIsUnused); the
 *   cascade only matters when the account goes, which takes the upload with it anyway.
 */
import { sql, type Kysely } from 'kysely';
import { engineOf, migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    await db.schema.alterTable('uploads').addColumn('key_id', 'bigint', (col) => col.references('encryption_keys.id').onDelete('cascade')).execute();
    await db.schema.alterTable('uploads').addColumn('blob_id', 'text').execute();
    await db.schema.alterTable('uploads').addColumn('chunk_size', 'bigint').execute();
    // SQLite cannot add a constraint to an existing table; the rule is kept by the one writer
    // (uploads-repository insertUpload) there, and by the constraint on PostgreSQL.
    if (engineOf(db) === 'postgres') {
      await sql`alter table uploads add constraint uploads_encryption check (
        (key_id is null and blob_id is null and chunk_size is null)
        or (key_id is not null and blob_id is not null and chunk_size is not null))`.execute(db);
    }
    // Whether a key is still used by an upload (keyIsUnused).
    await db.schema.createIndex('uploads_key').on('uploads').column('key_id').where('key_id', 'is not', null).execute();
  });
}
