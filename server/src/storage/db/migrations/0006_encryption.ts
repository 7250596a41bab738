/**
 * Encryption (docs/encryption.md): keys (data key wrapped by the password's scrypt key; no password hash), key marks
 * on folders (the nearest encrypted folder's, so a folder's lock is on its own row) and files, content layouts,
 * unlocks sealed under the token (a database copy opens nothing), and leased background jobs.
 */
import { sql, type Kysely } from 'kysely';
import { addIdColumn, migrateAtomically } from '../engine/dialect';

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    await addIdColumn(db, db.schema.createTable('encryption_keys'))
      .addColumn('account_id', 'bigint', (col) => col.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('item_type', 'text', (col) => col.notNull().check(sql`item_type in ('folder', 'file')`))
      .addColumn('item_id', 'bigint', (col) => col.notNull())
      .addColumn('tip', 'text', (col) => col.notNull().defaultTo(''))
      .addColumn('kdf', 'text', (col) => col.notNull().check(sql`kdf in ('scrypt')`))
      .addColumn('kdf_n', 'bigint', (col) => col.notNull())
      .addColumn('kdf_r', 'bigint', (col) => col.notNull())
      .addColumn('kdf_p', 'bigint', (col) => col.notNull())
      .addColumn('kdf_salt', 'text', (col) => col.notNull())
      .addColumn('wrapped_key', 'text', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .execute();
    await db.schema.createIndex('encryption_keys_account').on('encryption_keys').column('account_id').execute();

    // A column with a REFERENCES clause may be added on SQLite only with a NULL default: it has one.
    await db.schema.alterTable('folders').addColumn('key_id', 'bigint', (col) => col.references('encryption_keys.id')).execute();
    await db.schema.alterTable('files').addColumn('key_id', 'bigint', (col) => col.references('encryption_keys.id')).execute();
    // The folders and files of a key: job candidates, "is the key still used", decrypting a region.
    await db.schema.createIndex('folders_key').on('folders').column('key_id').where('key_id', 'is not', null).execute();
    await db.schema.createIndex('files_key').on('files').column('key_id').where('key_id', 'is not', null).execute();
    // FileSearch's "not beneath a locked folder": an account's encrypted folders, read without a scan.
    await db.schema.createIndex('folders_encrypted').on('folders').column('account_id').where(sql.ref('encrypted'), '=', 1).execute();

    await db.schema
      .createTable('content_encryption')
      .addColumn('content_id', 'bigint', (col) => col.primaryKey().references('content.id').onDelete('cascade'))
      .addColumn('key_id', 'bigint', (col) => col.notNull().references('encryption_keys.id'))
      .addColumn('chunk_size', 'bigint', (col) => col.notNull())
      // 'random96': a random 96-bit nonce per chunk, stored before the chunk (content-cipher.ts).
      .addColumn('nonce_scheme', 'text', (col) => col.notNull().check(sql`nonce_scheme in ('random96')`))
      // 128 random bits (hex), also in the blob's header and in every chunk's associated data.
      .addColumn('blob_id', 'text', (col) => col.notNull())
      .addColumn('plaintext_size', 'bigint', (col) => col.notNull())
      .execute();
    await db.schema.createIndex('content_encryption_key').on('content_encryption').column('key_id').execute();

    await db.schema
      .createTable('unlocks')
      .addColumn('token_id', 'bigint', (col) => col.notNull().references('tokens.id').onDelete('cascade'))
      .addColumn('key_id', 'bigint', (col) => col.notNull().references('encryption_keys.id').onDelete('cascade'))
      .addColumn('sealed_key', 'text', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      // The token's absolute expiry: the cascade removes the row earlier when the token goes.
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .addPrimaryKeyConstraint('unlocks_pk', ['token_id', 'key_id'])
      .execute();
    await db.schema.createIndex('unlocks_key').on('unlocks').column('key_id').execute();
    await db.schema.createIndex('unlocks_expiry').on('unlocks').column('expires_at').execute();

    await addIdColumn(db, db.schema.createTable('encryption_jobs'))
      .addColumn('account_id', 'bigint', (col) => col.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind in ('encrypt', 'decrypt')`))
      .addColumn('key_id', 'bigint', (col) => col.notNull().references('encryption_keys.id').onDelete('cascade'))
      // encrypt: the folder encrypted (informative; the work is every plaintext file in a folder
      // of the key); decrypt: the folder whose subtree is decrypted.
      .addColumn('folder_id', 'bigint', (col) => col.notNull())
      // The data key sealed under the server secret; null once the job has ended.
      .addColumn('sealed_key', 'text')
      .addColumn('total_files', 'bigint', (col) => col.notNull().defaultTo(0))
      .addColumn('total_bytes', 'bigint', (col) => col.notNull().defaultTo(0))
      .addColumn('done_files', 'bigint', (col) => col.notNull().defaultTo(0))
      .addColumn('done_bytes', 'bigint', (col) => col.notNull().defaultTo(0))
      .addColumn('failed_files', 'bigint', (col) => col.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('finished_at', 'bigint')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'bigint', (col) => col.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .execute();
    // What a runner looks for: open jobs whose lease is free.
    await db.schema.createIndex('encryption_jobs_open').on('encryption_jobs').column('lease_until').where(sql.ref('finished_at'), 'is', null).execute();
    await db.schema.createIndex('encryption_jobs_key').on('encryption_jobs').column('key_id').execute();
    await db.schema.createIndex('encryption_jobs_folder').on('encryption_jobs').columns(['account_id', 'folder_id']).execute();
  });
}
