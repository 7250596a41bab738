/** SQL for tus uploads in progress and completed uploads FileAdd may claim (rules: operations/content/uploads.ts). */
import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Database, UploadsTable } from '../schema';

export interface UploadCompletion {
  readonly sha256: string;
  readonly contentId: number;
  readonly completedAt: Date;
}

/** Bytes hashed and on their way into the content store under `key`. */
export interface UploadStaging {
  readonly sha256: string;
  readonly key: string;
}

/** An upload encrypted as it arrives (0012_encrypted_uploads): what its blob's header was written with. */
export interface UploadEncryption {
  readonly keyId: number;
  /** 128 bits, hex. */
  readonly blobId: string;
  readonly chunkSize: number;
}

export interface Upload {
  readonly id: string;
  readonly accountId: number;
  readonly length: number;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  /** Set while a completion moves the bytes into the store (and kept after). */
  readonly staging: UploadStaging | null;
  /** Null while the bytes are still arriving (or being stored). */
  readonly completion: UploadCompletion | null;
  /** Null for a plaintext upload. */
  readonly encryption: UploadEncryption | null;
}

const toUpload = (row: Selectable<UploadsTable>): Upload => ({
  id: row.id,
  accountId: row.account_id,
  length: row.length,
  createdAt: new Date(row.created_at),
  expiresAt: new Date(row.expires_at),
  staging: row.sha256 !== null && row.staged_key !== null ? { sha256: row.sha256, key: row.staged_key } : null,
  completion:
    row.completed_at !== null && row.sha256 !== null && row.content_id !== null
      ? { sha256: row.sha256, contentId: row.content_id, completedAt: new Date(row.completed_at) }
      : null,
  encryption:
    row.key_id !== null && row.blob_id !== null && row.chunk_size !== null
      ? { keyId: Number(row.key_id), blobId: row.blob_id, chunkSize: Number(row.chunk_size) }
      : null,
});

/** A new upload: nothing staged or completed yet. */
export async function insertUpload(db: Kysely<Database>, upload: Omit<Upload, 'staging' | 'completion'>): Promise<void> {
  await db
    .insertInto('uploads')
    .values({
      id: upload.id,
      account_id: upload.accountId,
      length: upload.length,
      created_at: upload.createdAt.getTime(),
      expires_at: upload.expiresAt.getTime(),
      key_id: upload.encryption?.keyId ?? null,
      blob_id: upload.encryption?.blobId ?? null,
      chunk_size: upload.encryption?.chunkSize ?? null,
    })
    .execute();
}

export async function findUpload(db: Kysely<Database>, id: string): Promise<Upload | undefined> {
  const row = await db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toUpload(row);
}

/** Bytes the account's unexpired uploads (in progress, or completed and not yet claimed) hold. */
export async function reservedBytes(db: Kysely<Database>, accountId: number, now: Date): Promise<number> {
  const row = await db
    .selectFrom('uploads')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('length'), eb.lit(0)).as('total'))
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now.getTime())
    .executeTakeFirstOrThrow();
  // SUM of bigint is numeric on PostgreSQL (a string through pg); an integer on SQLite.
  return Number(row.total);
}

/** Records where the hashed bytes of an upload in progress are going; false when it is not in progress. */
export function stageUpload(db: Kysely<Database>, id: string, staging: UploadStaging): Promise<boolean> {
  return updateInProgress(db, id, { sha256: staging.sha256, staged_key: staging.key });
}

/** Records the completion of an upload still in progress; false when it was not (any more). */
export function markUploadCompleted(
  db: Kysely<Database>,
  id: string,
  completion: { readonly sha256: string; readonly contentId: number; readonly completedAt: Date; readonly expiresAt: Date },
): Promise<boolean> {
  return updateInProgress(db, id, {
    sha256: completion.sha256,
    content_id: completion.contentId,
    completed_at: completion.completedAt.getTime(),
    expires_at: completion.expiresAt.getTime(),
  });
}

async function updateInProgress(db: Kysely<Database>, id: string, change: Updateable<UploadsTable>): Promise<boolean> {
  const result = await db.updateTable('uploads').set(change).where('id', '=', id).where('completed_at', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** What a claim of a completed upload gives the new file: its content, and the key that content is encrypted with. */
export interface ClaimedUpload {
  readonly contentId: number;
  readonly keyId: number | null;
}

/**
 * Consumes the account's oldest unexpired completed upload with this hash and size (preferring key `preferredKeyId`),
 * in the transaction that creates the file, so the content is always referenced by one or the other.
 */
export async function claimCompletedUpload(
  db: Kysely<Database>,
  accountId: number,
  sha256: string,
  size: number,
  now: Date,
  preferredKeyId: number | null,
): Promise<ClaimedUpload | undefined> {
  const candidates = await db
    .selectFrom('uploads')
    .select(['id', 'content_id', 'key_id'])
    .where('account_id', '=', accountId)
    .where('sha256', '=', sha256)
    .where('length', '=', size)
    .where('completed_at', 'is not', null)
    .where('expires_at', '>', now.getTime())
    .orderBy(sql`case when key_id = ${preferredKeyId ?? -1} then 0 when key_id is null then 1 else 2 end`)
    .orderBy('completed_at')
    .limit(2)
    .execute();
  // A concurrent claim may take the first between the select and the delete: then try the next.
  for (const candidate of candidates) {
    const result = await db.deleteFrom('uploads').where('id', '=', candidate.id).executeTakeFirst();
    if (result.numDeletedRows > 0n && candidate.content_id !== null) {
      return { contentId: candidate.content_id, keyId: candidate.key_id === null ? null : Number(candidate.key_id) };
    }
  }
  return undefined;
}

export async function deleteUpload(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('uploads').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Ids of up to `limit` uploads expired at `now`. */
export async function expiredUploadIds(db: Kysely<Database>, now: Date, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('uploads').select('id').where('expires_at', '<=', now.getTime()).orderBy('expires_at').limit(limit).execute();
  return rows.map((row) => row.id);
}

export async function existingUploadIds(db: Kysely<Database>, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('uploads').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
}
