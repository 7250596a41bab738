/**
 * Uploads encrypted as they arrive (docs/encryption.md): `key_id`, `blob_id`, `chunk_size` (all set or all null) fix
 * the blob's header at creation, so completion makes the right content row and later requests know the key.
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
