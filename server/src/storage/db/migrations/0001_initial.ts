/**
 * The initial schema. Times are bigint epoch ms (plain integer SQL on both engines; ISO at the protocol edge);
 * case-insensitive names are unique indexes on normalized `*_key` columns, partial over live items only.
 * No secret is stored in the clear (hashes, or sealed under the token or server secret: docs/security.md).
 */
import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import { addIdColumn, migrateAtomically, startIdsAt } from '../engine/dialect';

const FIRST_ACCOUNT_ID = 1001;

export async function up(db: Kysely<any>): Promise<void> {
  await migrateAtomically(db, async (db) => {
    await createAccounts(db);
    await createSessions(db);
    await createContent(db);
    await createItems(db);
    await createSharing(db);
  });
}

/** Columns every owned row starts with. */
function owned<T extends string>(db: Kysely<any>, name: T): CreateTableBuilder<T, any> {
  return addIdColumn(db, db.schema.createTable(name)).addColumn('account_id', 'bigint', (col) =>
    col.notNull().references('accounts.id').onDelete('cascade'),
  );
}

/** A 0/1 flag column. */
const flag = <T extends string>(table: CreateTableBuilder<T, any>, tableName: string, name: string) =>
  table
    .addColumn(name, 'smallint', (col) => col.notNull().defaultTo(0))
    .addCheckConstraint(`${tableName}_${name}_flag`, sql`${sql.ref(name)} in (0, 1)`);

async function createAccounts(db: Kysely<any>): Promise<void> {
  await addIdColumn(db, db.schema.createTable('accounts'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('name_key', 'text', (col) => col.notNull().unique())
    .addColumn('password_hash', 'text', (col) => col.notNull())
    .addColumn('quota_bytes', 'bigint', (col) => col.notNull().check(sql`quota_bytes >= 0`))
    .addColumn('used_bytes', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await startIdsAt(db, 'accounts', FIRST_ACCOUNT_ID);

  await owned(db, 'api_keys')
    .addColumn('key_hash', 'text', (col) => col.notNull().unique())
    .addColumn('label', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();
}

async function createSessions(db: Kysely<any>): Promise<void> {
  await owned(db, 'tokens')
    .addColumn('api_key_id', 'bigint', (col) => col.references('api_keys.id').onDelete('cascade'))
    // The hot path: every call looks its token up by this unique index, and by nothing else.
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('sealed_signing_key', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('last_seen_at', 'bigint', (col) => col.notNull())
    .addColumn('idle_expires_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('tokens_account').on('tokens').column('account_id').execute();
  await db.schema.createIndex('tokens_api_key').on('tokens').column('api_key_id').execute();
  // idle_expires_at never exceeds expires_at, so it alone finds every expired token to purge.
  await db.schema.createIndex('tokens_idle_expiry').on('tokens').column('idle_expires_at').execute();

  // Kept in the database, not in memory, so that every instance sees the same counts.
  await db.schema
    .createTable('throttle')
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('failures', 'bigint', (col) => col.notNull())
    .addColumn('window_start', 'bigint', (col) => col.notNull())
    .addColumn('blocked_until', 'bigint', (col) => col.notNull().defaultTo(0))
    .execute();
}

async function createContent(db: Kysely<any>): Promise<void> {
  let table = addIdColumn(db, db.schema.createTable('content'))
    .addColumn('sha256', 'text', (col) => col.notNull())
    .addColumn('size', 'bigint', (col) => col.notNull())
    .addColumn('storage_key', 'text', (col) => col.notNull().unique())
    .addColumn('created_at', 'bigint', (col) => col.notNull());
  table = flag(table, 'content', 'encrypted');
  await table.execute();
  // Plaintext content is stored once per hash, whoever uploads it; encrypted content is per file.
  await db.schema
    .createIndex('content_plaintext_sha256')
    .on('content')
    .column('sha256')
    .unique()
    .where(sql.ref('encrypted'), '=', 0)
    .execute();
}

async function createItems(db: Kysely<any>): Promise<void> {
  for (const [table, parent] of [
    ['folders', 'parent_id'],
    ['files', 'folder_id'],
  ] as const) {
    let builder = owned(db, table)
      // 0 is the account's root, which has no row: hence no foreign key.
      .addColumn(parent, 'bigint', (col) => col.notNull())
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('name_key', 'text', (col) => col.notNull())
      .addColumn('size', 'bigint', (col) => col.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('updated_at', 'bigint', (col) => col.notNull())
      .addColumn('deleted_at', 'bigint')
      .addColumn('binned_under', 'bigint')
      .addColumn('deleted_from', 'text');
    if (table === 'files') {
      builder = builder
        .addColumn('ext', 'text', (col) => col.notNull().defaultTo(''))
        .addColumn('sha256', 'text', (col) => col.notNull())
        .addColumn('content_id', 'bigint', (col) => col.notNull().references('content.id'));
    }
    for (const name of ['shared', 'linked', 'encrypted']) builder = flag(builder, table, name);
    await builder.execute();

    await db.schema
      .createIndex(`${table}_live_name`)
      .on(table)
      .columns(['account_id', parent, 'name_key'])
      .unique()
      .where(sql<boolean>`deleted_at is null and binned_under is null`)
      .execute();
    // Listing a folder, and walking a subtree (which includes binned items), by parent.
    await db.schema.createIndex(`${table}_parent`).on(table).columns(['account_id', parent]).execute();
    await db.schema.createIndex(`${table}_binned_under`).on(table).column('binned_under').where('binned_under', 'is not', null).execute();
    await db.schema
      .createIndex(`${table}_bin`)
      .on(table)
      .columns(['account_id', 'deleted_at'])
      .where(sql.ref('deleted_at'), 'is not', null)
      .execute();
  }
  // Whether content is still referenced, before it is removed from storage.
  await db.schema.createIndex('files_content').on('files').column('content_id').execute();
  // GetNewUploadFiles: the newest files of an account. FileSearch's substring index differs per
  // engine (FTS5 or trigram on SQLite, pg_trgm on PostgreSQL) and comes with its own migration.
  await db.schema.createIndex('files_recent').on('files').columns(['account_id', 'created_at']).execute();
}

async function createSharing(db: Kysely<any>): Promise<void> {
  await owned(db, 'shares')
    .addColumn('item_type', 'text', (col) => col.notNull().check(sql`item_type in ('folder', 'file')`))
    .addColumn('item_id', 'bigint', (col) => col.notNull())
    .addColumn('code', 'text', (col) => col.notNull().unique())
    .addColumn('downpwd_sealed', 'text')
    .addColumn('download_limit', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('downloads', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('description', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('image_key', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    // One share per item: sharing again updates it.
    .addUniqueConstraint('shares_item', ['item_type', 'item_id'])
    .execute();
  await db.schema.createIndex('shares_account').on('shares').column('account_id').execute();

  await owned(db, 'links')
    .addColumn('file_id', 'bigint', (col) => col.notNull().unique().references('files.id').onDelete('cascade'))
    .addColumn('code', 'text', (col) => col.notNull().unique())
    .addColumn('hits', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('links_account').on('links').column('account_id').execute();

  await addIdColumn(db, db.schema.createTable('emails'))
    .addColumn('share_id', 'bigint', (col) => col.notNull().references('shares.id').onDelete('cascade'))
    .addColumn('recipient', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) =>
      col.notNull().defaultTo('queued').check(sql`status in ('queued', 'sent', 'failed')`),
    )
    .addColumn('attempts', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  // The sender's queue: due messages first.
  await db.schema.createIndex('emails_due').on('emails').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('emails_share').on('emails').column('share_id').execute();
}
