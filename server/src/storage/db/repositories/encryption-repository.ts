/**
 * SQL for encryption (rules: operations/encryption/): keys, key marks on folders and files, encrypted content, unlocks,
 * jobs, and the expressions listings use. What locks an item: every encrypted folder on its way from the root, and a file's own key.
 */
import { sql, type AliasedRawBuilder, type ExpressionBuilder, type Kysely, type RawBuilder, type Selectable, type SqlBool, type Updateable } from 'kysely';
import { encryptedFoldersAbove } from '../engine/hot-queries';
import { alongWaysUp, foldersAbove, MAX_WALK_DEPTH } from './items-repository';
import type { Database, EncryptionJobKind, EncryptionJobsTable } from '../schema';

export type ItemType = 'folder' | 'file';

export interface ItemRef {
  readonly type: ItemType;
  readonly id: number;
}

// ---- Keys ----------------------------------------------------------------------------------------

export interface StoredKdf {
  readonly algorithm: 'scrypt';
  readonly N: number;
  readonly r: number;
  readonly p: number;
  /** base64url. */
  readonly salt: string;
}

export interface StoredKey {
  readonly id: number;
  readonly accountId: number;
  readonly itemType: ItemType;
  readonly itemId: number;
  readonly tip: string;
  readonly kdf: StoredKdf;
  readonly wrappedKey: string;
}

export interface NewKey {
  readonly accountId: number;
  readonly item: ItemRef;
  readonly tip: string;
  readonly kdf: StoredKdf;
  readonly wrappedKey: string;
  readonly createdAt: Date;
}

export async function insertKey(db: Kysely<Database>, key: NewKey): Promise<number> {
  const row = await db
    .insertInto('encryption_keys')
    .values({
      account_id: key.accountId,
      item_type: key.item.type,
      item_id: key.item.id,
      tip: key.tip,
      kdf: key.kdf.algorithm,
      kdf_n: key.kdf.N,
      kdf_r: key.kdf.r,
      kdf_p: key.kdf.p,
      kdf_salt: key.kdf.salt,
      wrapped_key: key.wrappedKey,
      created_at: key.createdAt.getTime(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The key with this id, if it is the account's. */
export async function findKey(db: Kysely<Database>, accountId: number, keyId: number): Promise<StoredKey | undefined> {
  const row = await db.selectFrom('encryption_keys').selectAll().where('id', '=', keyId).where('account_id', '=', accountId).executeTakeFirst();
  return (
    row && {
      id: row.id,
      accountId: row.account_id,
      itemType: row.item_type,
      itemId: row.item_id,
      tip: row.tip,
      kdf: { algorithm: row.kdf, N: row.kdf_n, r: row.kdf_r, p: row.kdf_p, salt: row.kdf_salt },
      wrappedKey: row.wrapped_key,
    }
  );
}

/** The tips of these keys, by id. */
export async function keyTips(db: Kysely<Database>, keyIds: readonly number[]): Promise<Map<number, string>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db.selectFrom('encryption_keys').select(['id', 'tip']).where('id', 'in', keyIds).execute();
  return new Map(rows.map((row) => [row.id, row.tip]));
}

/** Nothing is encrypted with the key any more, and no job or upload is still working with it. */
const keyIsUnused = sql<SqlBool>`
  not exists (select 1 from folders where folders.key_id = encryption_keys.id)
  and not exists (select 1 from files where files.key_id = encryption_keys.id)
  and not exists (select 1 from content_encryption ce where ce.key_id = encryption_keys.id)
  and not exists (select 1 from encryption_jobs j where j.key_id = encryption_keys.id and j.finished_at is null)
  and not exists (select 1 from uploads u where u.key_id = encryption_keys.id)`;

/** Deletes the key if nothing uses it any more (its unlocks and finished jobs go with it). */
export async function deleteKeyIfUnused(db: Kysely<Database>, keyId: number): Promise<boolean> {
  const result = await db.deleteFrom('encryption_keys').where('id', '=', keyId).where(keyIsUnused).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Housekeeping: keys that nothing uses any more (their items deleted for good, decrypted). */
export async function deleteUnusedKeys(db: Kysely<Database>, limit: number): Promise<number> {
  const candidates = await db.selectFrom('encryption_keys').select('id').where(keyIsUnused).orderBy('id').limit(limit).execute();
  if (candidates.length === 0) return 0;
  const result = await db
    .deleteFrom('encryption_keys')
    .where(
      'id',
      'in',
      candidates.map((row) => row.id),
    )
    .where(keyIsUnused)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

// ---- Items ---------------------------------------------------------------------------------------

const isLive = sql<SqlBool>`deleted_at is null and binned_under is null`;

export interface FolderEncryption {
  readonly id: number;
  readonly parentId: number;
  readonly keyId: number | null;
}

export interface FileEncryption {
  readonly id: number;
  readonly accountId: number;
  readonly folderId: number;
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  readonly contentId: number;
  /** The key of the file's own content; null for plaintext. */
  readonly keyId: number | null;
  /** The key of the folder it is in; null for a plain folder (or the root). */
  readonly folderKeyId: number | null;
}

/** A live folder of the account and its key mark; undefined when it is not one. */
export async function findLiveFolderEncryption(db: Kysely<Database>, accountId: number, folderId: number): Promise<FolderEncryption | undefined> {
  return db
    .selectFrom('folders')
    .select(['id', 'parent_id as parentId', 'key_id as keyId'])
    .where('id', '=', folderId)
    .where('account_id', '=', accountId)
    .where(isLive)
    .executeTakeFirst();
}

/** A file (live or in the bin) with its content and keys, read under the names of FileEncryption. */
function fileEncryptionOf(db: Kysely<Database>, fileId: number) {
  return db
    .selectFrom('files')
    .leftJoin('folders as parent', 'parent.id', 'files.folder_id')
    .select([
      'files.id',
      'files.account_id as accountId',
      'files.folder_id as folderId',
      'files.name',
      'files.size',
      'files.sha256',
      'files.content_id as contentId',
      'files.key_id as keyId',
      'parent.key_id as folderKeyId',
    ])
    .where('files.id', '=', fileId);
}

/** A live file of the account, its content and its keys; undefined when it is not one. */
export function findLiveFileEncryption(db: Kysely<Database>, accountId: number, fileId: number): Promise<FileEncryption | undefined> {
  return fileEncryptionOf(db, fileId).where('files.account_id', '=', accountId).where('files.deleted_at', 'is', null).where('files.binned_under', 'is', null).executeTakeFirst();
}

/** Any file of the account (live or in the bin) with its keys: what a job works on. */
export function findFileEncryption(db: Kysely<Database>, fileId: number): Promise<FileEncryption | undefined> {
  return fileEncryptionOf(db, fileId).executeTakeFirst();
}

/** The encrypted item that locks an item: the item itself, or a folder above it; with its key's password tip where read. */
export interface ItemLock {
  readonly type: ItemType;
  readonly id: number;
  readonly tip?: string;
}

/** One key on an item's way from the root: an encrypted folder (or the file itself) and its key. */
export interface LockLink {
  readonly type: ItemType;
  readonly id: number;
  readonly keyId: number;
}

/** The keys that lock an item, root-most first (encrypted folders above it, then a file's own key); [] when none. */
export async function lockChain(db: Kysely<Database>, accountId: number, item: ItemRef): Promise<LockLink[]> {
  let startFolder = item.id;
  const links: LockLink[] = [];
  let own: LockLink | null = null;
  if (item.type === 'file') {
    const file = await db.selectFrom('files').select(['folder_id', 'key_id']).where('id', '=', item.id).where('account_id', '=', accountId).executeTakeFirst();
    if (!file) return [];
    startFolder = file.folder_id;
    if (file.key_id !== null) own = { type: 'file', id: item.id, keyId: file.key_id };
  }
  if (startFolder !== 0) {
    // The walk up runs on every call on a folder: compiled once (hot-queries.ts).
    for (const folder of await encryptedFoldersAbove(db, accountId, startFolder)) links.push({ type: 'folder', ...folder });
  }
  if (own) links.push(own);
  return links;
}

/** lockChain for many folders at once (a Move's sources), one query; folders with nothing encrypted above are absent. */
export async function folderLockChains(db: Kysely<Database>, accountId: number, folderIds: readonly number[]): Promise<Map<number, LockLink[]>> {
  const ways = await foldersAbove(db, accountId, folderIds);
  const none: LockLink[] = [];
  const chains = alongWaysUp<LockLink[]>(ways, [...new Set(folderIds)].filter((id) => id !== 0), none, (id, way, above) =>
    way.keyId === null ? above : [...above, { type: 'folder', id, keyId: way.keyId }],
  );
  for (const [id, chain] of chains) if (chain.length === 0) chains.delete(id);
  return chains;
}

/** Marks `folderId` and every folder beneath it (live or binned) without a key as encrypted with `keyId`; returns how many. */
export async function markSubtreesEncrypted(db: Kysely<Database>, accountId: number, folderIds: readonly number[], keyId: number): Promise<number> {
  if (folderIds.length === 0) return 0;
  const result = await sql`update folders set encrypted = 1, key_id = ${keyId} where key_id is null and id in ${subtreeOf(accountId, folderIds)}`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** Unmarks the region of `keyId` from `folderId` down through folders of that key (one encrypted on its own stays). */
export async function unmarkRegion(db: Kysely<Database>, accountId: number, folderId: number, keyId: number): Promise<number> {
  const result = await sql`update folders set encrypted = 0, key_id = null where id in ${subtreeOf(accountId, [folderId], keyId)}`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** Gives one folder a key mark (a folder just added inside an encrypted folder). */
export async function setFolderKey(db: Kysely<Database>, folderId: number, keyId: number): Promise<void> {
  await db.updateTable('folders').set({ encrypted: 1, key_id: keyId }).where('id', '=', folderId).execute();
}

// ---- Encrypted content ---------------------------------------------------------------------------

export interface EncryptedContentLayout {
  readonly keyId: number;
  readonly chunkSize: number;
  readonly nonceScheme: 'random96';
  /** Hex. */
  readonly blobId: string;
  readonly plaintextSize: number;
}

export interface NewEncryptedContent extends EncryptedContentLayout {
  readonly sha256: string;
  /** Bytes as stored. */
  readonly size: number;
  readonly storageKey: string;
  readonly createdAt: Date;
}

/** Inserts an encrypted content row and its layout; returns the content id. */
export async function insertEncryptedContent(tx: Kysely<Database>, content: NewEncryptedContent): Promise<number> {
  const row = await tx
    .insertInto('content')
    .values({ sha256: content.sha256, size: content.size, storage_key: content.storageKey, encrypted: 1, created_at: content.createdAt.getTime() })
    .returning('id')
    .executeTakeFirstOrThrow();
  await tx
    .insertInto('content_encryption')
    .values({
      content_id: row.id,
      key_id: content.keyId,
      chunk_size: content.chunkSize,
      nonce_scheme: content.nonceScheme,
      blob_id: content.blobId,
      plaintext_size: content.plaintextSize,
    })
    .execute();
  return row.id;
}

export interface StoredContentRef {
  readonly id: number;
  readonly storageKey: string;
  readonly size: number;
  readonly encrypted: boolean;
  /** Set when encrypted. */
  readonly layout: EncryptedContentLayout | null;
}

export async function findContentForCrypt(db: Kysely<Database>, contentId: number): Promise<StoredContentRef | undefined> {
  const row = await db
    .selectFrom('content')
    .leftJoin('content_encryption as ce', 'ce.content_id', 'content.id')
    .select(['content.id', 'content.storage_key', 'content.size', 'content.encrypted', 'ce.key_id', 'ce.chunk_size', 'ce.nonce_scheme', 'ce.blob_id', 'ce.plaintext_size'])
    .where('content.id', '=', contentId)
    .executeTakeFirst();
  if (!row) return undefined;
  const layout =
    row.key_id === null || row.chunk_size === null || row.nonce_scheme === null || row.blob_id === null || row.plaintext_size === null
      ? null
      : { keyId: row.key_id, chunkSize: row.chunk_size, nonceScheme: row.nonce_scheme, blobId: row.blob_id, plaintextSize: row.plaintext_size };
  return { id: row.id, storageKey: row.storage_key, size: row.size, encrypted: row.encrypted === 1, layout };
}

/**
 * Points the file at other content if it still points at `fromContentId` and still sits in a folder of key
 * `folderKeyId`; false when a concurrent change (move, encryption, decryption) won. `keyId` null: plaintext.
 */
export async function switchFileContent(
  tx: Kysely<Database>,
  change: {
    readonly fileId: number;
    readonly fromContentId: number;
    readonly toContentId: number;
    readonly keyId: number | null;
    readonly folderKeyId: number | null;
  },
): Promise<boolean> {
  const inFolderOfKey =
    change.folderKeyId === null
      ? sql<SqlBool>`(files.folder_id = 0 or exists (select 1 from folders d where d.id = files.folder_id and d.key_id is null))`
      : sql<SqlBool>`exists (select 1 from folders d where d.id = files.folder_id and d.key_id = ${change.folderKeyId})`;
  const result = await tx
    .updateTable('files')
    .set({ content_id: change.toContentId, key_id: change.keyId, encrypted: change.keyId === null ? 0 : 1 })
    .where('id', '=', change.fileId)
    .where('content_id', '=', change.fromContentId)
    .where(inFolderOfKey)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

// ---- Work for jobs -------------------------------------------------------------------------------

export interface FileWork {
  readonly id: number;
  readonly size: number;
}

/** Plaintext files (live or binned) in folders of the key, after `afterId`: what an encrypt job still has to do. */
export function plainFilesOfKey(db: Kysely<Database>, keyId: number, afterId: number, limit: number): Promise<FileWork[]> {
  return plainFilesOfKeyQuery(db, keyId).select(['files.id', 'files.size']).where('files.id', '>', afterId).orderBy('files.id').limit(limit).execute();
}

export function countPlainFilesOfKey(db: Kysely<Database>, keyId: number): Promise<{ files: number; bytes: number }> {
  return totalsOf(plainFilesOfKeyQuery(db, keyId).select(WORK_TOTALS).executeTakeFirstOrThrow());
}

function plainFilesOfKeyQuery(db: Kysely<Database>, keyId: number) {
  return db
    .selectFrom('folders')
    .innerJoin('files', 'files.folder_id', 'folders.id')
    .where('folders.key_id', '=', keyId)
    .where('files.key_id', 'is', null)
    .whereRef('files.account_id', '=', 'folders.account_id');
}

/** The ids of folders `seeds` and every folder beneath them, live or in the bin; with `keyId`, only through folders of that key. */
function subtreeOf(accountId: number, seeds: readonly number[], keyId?: number): RawBuilder<unknown> {
  const ofKey = (alias: string) => (keyId === undefined ? sql`` : sql` and ${sql.raw(alias)}key_id = ${keyId}`);
  return sql`(
    with recursive subtree(id, depth) as (
      select id, 0 from folders where account_id = ${accountId} and id in (${sql.join(seeds.map((id) => sql`${id}`))})${ofKey('')}
      union all
      select f.id, s.depth + 1 from folders f join subtree s on f.parent_id = s.id
      where f.account_id = ${accountId}${ofKey('f.')} and s.depth < ${MAX_WALK_DEPTH}
    ) select id from subtree)`;
}

/** Files of the key beneath `folderId` now in a folder no longer encrypted, after `afterId`: a decrypt job's work. */
export function decryptableFilesOfRegion(
  db: Kysely<Database>,
  accountId: number,
  folderId: number,
  keyId: number,
  afterId: number,
  limit: number,
): Promise<FileWork[]> {
  return decryptableFilesQuery(db, accountId, folderId, keyId).select(['files.id', 'files.size']).where('files.id', '>', afterId).orderBy('files.id').limit(limit).execute();
}

export function countDecryptableFilesOfRegion(db: Kysely<Database>, accountId: number, folderId: number, keyId: number): Promise<{ files: number; bytes: number }> {
  return totalsOf(decryptableFilesQuery(db, accountId, folderId, keyId).select(WORK_TOTALS).executeTakeFirstOrThrow());
}

function decryptableFilesQuery(db: Kysely<Database>, accountId: number, folderId: number, keyId: number) {
  return db
    .selectFrom('files')
    .leftJoin('folders as parent', 'parent.id', 'files.folder_id')
    .where('files.account_id', '=', accountId)
    .where('files.key_id', '=', keyId)
    .where('parent.key_id', 'is', null)
    .where(sql<SqlBool>`files.folder_id in ${subtreeOf(accountId, [folderId])}`);
}

/** How many files a job's query finds, and their bytes. */
const WORK_TOTALS = [sql<number>`count(*)`.as('files'), sql<number>`coalesce(sum(files.size), 0)`.as('bytes')];

async function totalsOf(row: Promise<{ files: number; bytes: number }>): Promise<{ files: number; bytes: number }> {
  const { files, bytes } = await row;
  return { files: Number(files), bytes: Number(bytes) };
}

// ---- Unlocks -------------------------------------------------------------------------------------

export async function upsertUnlock(
  db: Kysely<Database>,
  unlock: { readonly tokenId: number; readonly keyId: number; readonly sealedKey: string; readonly createdAt: Date; readonly expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('unlocks')
    .values({
      token_id: unlock.tokenId,
      key_id: unlock.keyId,
      sealed_key: unlock.sealedKey,
      created_at: unlock.createdAt.getTime(),
      expires_at: unlock.expiresAt.getTime(),
    })
    .onConflict((oc) => oc.columns(['token_id', 'key_id']).doUpdateSet((eb) => ({ sealed_key: eb.ref('excluded.sealed_key'), created_at: eb.ref('excluded.created_at') })))
    .execute();
}

/** The sealed data key of `keyId` for the token; undefined when the token has not unlocked it. */
export async function findUnlock(db: Kysely<Database>, tokenId: number, keyId: number): Promise<string | undefined> {
  const row = await db.selectFrom('unlocks').select('sealed_key').where('token_id', '=', tokenId).where('key_id', '=', keyId).executeTakeFirst();
  return row?.sealed_key;
}

/** Forgets the token's unlock of `keyId` (Lock); nothing when there is none. */
export async function deleteUnlock(db: Kysely<Database>, tokenId: number, keyId: number): Promise<void> {
  await db.deleteFrom('unlocks').where('token_id', '=', tokenId).where('key_id', '=', keyId).execute();
}

/** Which of `keyIds` the token has unlocked. */
export async function unlockedKeyIds(db: Kysely<Database>, tokenId: number, keyIds: readonly number[]): Promise<Set<number>> {
  if (keyIds.length === 0) return new Set();
  const rows = await db.selectFrom('unlocks').select('key_id').where('token_id', '=', tokenId).where('key_id', 'in', keyIds).execute();
  return new Set(rows.map((row) => row.key_id));
}

/** The absolute expiry of a token; undefined when it does not exist. */
export async function tokenExpiry(db: Kysely<Database>, tokenId: number): Promise<Date | undefined> {
  const row = await db.selectFrom('tokens').select('expires_at').where('id', '=', tokenId).executeTakeFirst();
  return row && new Date(row.expires_at);
}

export async function deleteExpiredUnlocks(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db.deleteFrom('unlocks').where('expires_at', '<=', now.getTime()).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// ---- Jobs ----------------------------------------------------------------------------------------

export interface NewJob {
  readonly accountId: number;
  readonly kind: EncryptionJobKind;
  readonly keyId: number;
  readonly folderId: number;
  readonly sealedKey: string;
  readonly totalFiles: number;
  readonly totalBytes: number;
  readonly createdAt: Date;
}

export interface JobRecord extends Omit<NewJob, 'sealedKey'> {
  readonly id: number;
  /** Null once the job has finished (finishJob). */
  readonly sealedKey: string | null;
  readonly doneFiles: number;
  readonly doneBytes: number;
  readonly failedFiles: number;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  readonly leaseOwner: string | null;
  readonly leaseUntil: Date;
  readonly lastError: string | null;
}

type JobRow = Selectable<EncryptionJobsTable>;

const toJob = (row: JobRow): JobRecord => ({
  id: row.id,
  accountId: row.account_id,
  kind: row.kind,
  keyId: row.key_id,
  folderId: row.folder_id,
  sealedKey: row.sealed_key,
  totalFiles: row.total_files,
  totalBytes: row.total_bytes,
  doneFiles: row.done_files,
  doneBytes: row.done_bytes,
  failedFiles: row.failed_files,
  createdAt: new Date(row.created_at),
  startedAt: row.started_at === null ? null : new Date(row.started_at),
  finishedAt: row.finished_at === null ? null : new Date(row.finished_at),
  leaseOwner: row.lease_owner,
  leaseUntil: new Date(row.lease_until),
  lastError: row.last_error,
});

export async function insertJob(db: Kysely<Database>, job: NewJob): Promise<number> {
  const row = await db
    .insertInto('encryption_jobs')
    .values({
      account_id: job.accountId,
      kind: job.kind,
      key_id: job.keyId,
      folder_id: job.folderId,
      sealed_key: job.sealedKey,
      total_files: job.totalFiles,
      total_bytes: job.totalBytes,
      created_at: job.createdAt.getTime(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The open job of this kind for the key, if any. */
export async function findOpenJob(db: Kysely<Database>, kind: EncryptionJobKind, keyId: number): Promise<JobRecord | undefined> {
  const row = await jobs(db).where('kind', '=', kind).where('key_id', '=', keyId).where('finished_at', 'is', null).orderBy('id').executeTakeFirst();
  return row && toJob(row);
}

/** The newest job about a folder of the account (its progress), if any. */
export async function latestJobOfFolder(db: Kysely<Database>, accountId: number, folderId: number): Promise<JobRecord | undefined> {
  const row = await jobs(db).where('account_id', '=', accountId).where('folder_id', '=', folderId).orderBy('id', 'desc').executeTakeFirst();
  return row && toJob(row);
}

const jobs = (db: Kysely<Database>) => db.selectFrom('encryption_jobs').selectAll();

/** Adds work found after the job was made (a file added to an encrypted folder). */
export async function addToJobTotals(db: Kysely<Database>, jobId: number, files: number, bytes: number): Promise<void> {
  await db
    .updateTable('encryption_jobs')
    .set((eb) => ({ total_files: eb('total_files', '+', files), total_bytes: eb('total_bytes', '+', bytes) }))
    .where('id', '=', jobId)
    .execute();
}

/** Takes the lease of a free open job (this one, else the oldest): one conditional UPDATE, so one instance wins. */
export async function claimJob(
  db: Kysely<Database>,
  claim: { readonly owner: string; readonly now: Date; readonly leaseUntil: Date; readonly jobId?: number },
): Promise<JobRecord | undefined> {
  const now = claim.now.getTime();
  const free = (eb: ExpressionBuilder<Database, 'encryption_jobs'>) => eb.and([eb('finished_at', 'is', null), eb('lease_until', '<=', now)]);
  const target =
    claim.jobId !== undefined
      ? db.selectFrom('encryption_jobs').select('id').where('id', '=', claim.jobId)
      : db.selectFrom('encryption_jobs').select('id').where(free).orderBy('id').limit(1);
  const row = await db
    .updateTable('encryption_jobs')
    .set((eb) => ({
      lease_owner: claim.owner,
      lease_until: claim.leaseUntil.getTime(),
      started_at: eb.fn.coalesce('started_at', eb.val(now)),
    }))
    .where('id', 'in', target)
    .where(free)
    .returningAll()
    .executeTakeFirst();
  return row && toJob(row);
}

/** Extends the lease while its owner still holds it; false when it was lost (run out and taken). */
export function renewLease(db: Kysely<Database>, jobId: number, owner: string, until: Date): Promise<boolean> {
  return updateHeldJob(db, jobId, owner, { lease_until: until.getTime() });
}

async function updateHeldJob(db: Kysely<Database>, jobId: number, owner: string, change: Updateable<EncryptionJobsTable>): Promise<boolean> {
  const result = await db.updateTable('encryption_jobs').set(change).where('id', '=', jobId).where('lease_owner', '=', owner).where('finished_at', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function recordJobProgress(
  db: Kysely<Database>,
  jobId: number,
  progress: { readonly files: number; readonly bytes: number; readonly failed: number; readonly error?: string },
): Promise<void> {
  await db
    .updateTable('encryption_jobs')
    .set((eb) => ({
      done_files: eb('done_files', '+', progress.files),
      done_bytes: eb('done_bytes', '+', progress.bytes),
      failed_files: eb('failed_files', '+', progress.failed),
      ...(progress.error === undefined ? {} : { last_error: progress.error.slice(0, 500) }),
    }))
    .where('id', '=', jobId)
    .execute();
}

/** Ends the job (its sealed key goes); false when `owner` no longer holds it. */
export function finishJob(db: Kysely<Database>, jobId: number, owner: string, now: Date, error?: string): Promise<boolean> {
  return updateHeldJob(db, jobId, owner, { finished_at: now.getTime(), sealed_key: null, lease_owner: null, lease_until: 0, ...(error === undefined ? {} : { last_error: error.slice(0, 500) }) });
}

/** Gives the lease back (a runner stopping): the job can be taken at once. */
export async function releaseJob(db: Kysely<Database>, jobId: number, owner: string): Promise<void> {
  await db.updateTable('encryption_jobs').set({ lease_owner: null, lease_until: 0 }).where('id', '=', jobId).where('lease_owner', '=', owner).execute();
}

/** Housekeeping: finished jobs older than `before`. */
export async function deleteFinishedJobs(db: Kysely<Database>, before: Date): Promise<number> {
  const result = await db.deleteFrom('encryption_jobs').where('finished_at', '<=', before.getTime()).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// ---- For listings and search ---------------------------------------------------------------------

/** An item's tip, for listings: the tip of its key (null when it has none; for a file, plaintext). */
const tipColumn = (keyColumn: RawBuilder<unknown>): AliasedRawBuilder<string | null, 'tip'> =>
  sql<string | null>`(select encryption_keys.tip from encryption_keys where encryption_keys.id = ${keyColumn})`.as('tip');
export const folderTipColumn = tipColumn(sql.raw('folders.key_id'));
export const fileTipColumn = tipColumn(sql.raw('files.key_id'));

/** A folder's progress for listings: percent of bytes (or files) its running job has done; null when none runs. */
export const folderJobProgressColumn: AliasedRawBuilder<number | null, 'progress'> = sql<number | null>`(
  select case when j.total_bytes > 0 then (j.done_bytes * 100) / j.total_bytes
              when j.total_files > 0 then (j.done_files * 100) / j.total_files
              else 0 end
  from encryption_jobs j
  where j.account_id = folders.account_id and j.folder_id = folders.id and j.finished_at is null
  order by j.id desc limit 1)`.as('progress');

/**
 * On `files`: not beneath a folder locked for the token (`tokenId` null: nothing unlocked). One uncorrelated subquery
 * over the account's encrypted folders; UNION walks a nested locked folder once, and ends a corrupt cycle.
 */
export function fileNotBeneathLockedFolder(accountId: number, tokenId: number | null): RawBuilder<SqlBool> {
  return parentNotLocked(sql.ref('files.folder_id'), accountId, tokenId);
}

/** On `folders`: the same rule by the parent, so a locked folder itself is still found, as an encrypted file is. */
export function folderNotBeneathLockedFolder(accountId: number, tokenId: number | null): RawBuilder<SqlBool> {
  return parentNotLocked(sql.ref('folders.parent_id'), accountId, tokenId);
}

function parentNotLocked(parentColumn: RawBuilder<unknown>, accountId: number, tokenId: number | null): RawBuilder<SqlBool> {
  return sql<SqlBool>`${parentColumn} not in (
    with recursive locked(id) as (
      select id from folders
      where account_id = ${accountId} and encrypted = 1
        and key_id not in (select key_id from unlocks where token_id = ${tokenId ?? 0})
      union
      select f.id from folders f join locked l on f.parent_id = l.id
      where f.account_id = ${accountId}
    ) select id from locked)`;
}
