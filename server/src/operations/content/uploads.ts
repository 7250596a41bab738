/**
 * Uploads, behind the tus endpoint and FileAdd: bytes stored once per plaintext hash, a write intent committed before
 * any byte moves (docs/uploads-and-downloads.md §3); encrypted as they arrive in an unlocked encrypted folder.
 */
import { randomBytes } from 'node:crypto';
import type { DataStore } from '@tus/server';
import type { Kysely } from 'kysely';
import { isForeignKeyViolation } from '../../storage/db/engine/dialect';
import { findAccount } from '../../storage/db/repositories/accounts-repository';
import { lockAccountTree } from '../../storage/db/repositories/items-repository';
import {
  expediteRemoval,
  findOwnedPlaintextContent,
  findPlaintextContent,
  insertPlaintextContent,
  queueRemoval,
  withdrawWriteIntent,
} from '../../storage/db/repositories/content-repository';
import type { Database } from '../../storage/db/schema';
import { findLiveFolderEncryption, insertEncryptedContent } from '../../storage/db/repositories/encryption-repository';
import {
  claimCompletedUpload,
  deleteUpload,
  existingUploadIds,
  expiredUploadIds,
  findUpload,
  insertUpload,
  markUploadCompleted,
  reservedBytes,
  stageUpload,
  type ClaimedUpload,
  type Upload,
  type UploadEncryption,
} from '../../storage/db/repositories/uploads-repository';
import { contentStoreFor, uploadAreaFor } from '../../storage/content/stores';
import { isUploadId as isUploadIdForm } from '../../storage/content/upload-area';
import type { Services } from '../context';
import { BLOB_ID_BYTES, encryptedSize } from '../crypto/content-cipher';
import { uploadCipherOf } from '../encryption/encrypted-content';
import { makeThumbnailsAhead } from '../previews/derived-images';
import { invalidArgument, notFound, tooLarge } from '../errors';
import { WRITE_INTENT_GRACE_MS } from './content-removal';
import { withUploadLock } from './upload-locks';

/**
 * The chunk size of content encrypted as uploaded: 1 MiB rather than FileEncrypt's 64 KiB, a sixteenth of
 * the per-chunk cost per GiB; a ranged read then decrypts at most 1 MiB more than it asked for.
 */
export const UPLOAD_CHUNK_SIZE = 1024 * 1024;

/** How long an unfinished upload may be resumed. */
export const UPLOAD_LIFETIME_MS = 24 * 3600_000;
/** How long a completed upload waits for FileAdd before it is purged. */
export const CLAIM_LIFETIME_MS = 24 * 3600_000;
/** Files in the upload folder without an upload row are removed once this old. */
const STRAY_FILE_AGE_MS = 3600_000;
const PURGE_BATCH = 500;

const SHA256 = /^[0-9a-f]{64}$/;

/** The tus datastore: @tus/file-store in `<dataDir>/uploads/`, or @tus/s3-store in the bucket (storage/content/stores.ts). */
export function uploadDatastore(services: Services): DataStore {
  return uploadAreaFor(services.config).createDatastore();
}

export const isUploadId = (id: string): boolean => isUploadIdForm(id);

export interface OwnUpload {
  readonly id: string;
  readonly length: number;
  readonly expiresAt: Date;
  readonly sha256: string | null;
  readonly encryption: UploadEncryption | null;
}

/** The key an upload into an encrypted folder is encrypted with (encryption.ts keyForUploadInto). */
export interface UploadKey {
  readonly keyId: number;
  readonly dataKey: Buffer;
}

export interface CompletedUpload {
  readonly sha256: string;
  readonly contentId: number;
}

/**
 * Creates upload `id` for the account: 413 past the upload limit or the quota left (less other uploads'
 * reservations). With `key` and an area that can, it is encrypted as it arrives (see holdUploadKey).
 */
export async function beginUpload(services: Services, accountId: number, id: string, length: number, key: UploadKey | null = null): Promise<OwnUpload> {
  if (!isUploadId(id)) throw invalidArgument('parameter-invalid', 'invalid upload id');
  if (!Number.isSafeInteger(length) || length < 0) throw invalidArgument('parameter-invalid', 'Upload-Length must be a whole number of bytes');
  const { maxUploadBytes } = services.config.limits;
  if (length > maxUploadBytes) throw tooLarge('upload-too-large', `the upload is larger than the limit of ${maxUploadBytes} bytes`);
  const now = services.now();
  const expiresAt = new Date(now.getTime() + UPLOAD_LIFETIME_MS);
  const encryption: UploadEncryption | null =
    key && uploadAreaFor(services.config).ciphers ? { keyId: key.keyId, blobId: randomBytes(BLOB_ID_BYTES).toString('hex'), chunkSize: UPLOAD_CHUNK_SIZE } : null;
  // Under the account's row lock (PostgreSQL), so concurrent creations, and FileAdd's, add up their reservations.
  await services.db.transaction().execute(async (tx) => {
    await lockAccountTree(tx, accountId);
    const account = await findAccount(tx, { id: accountId });
    if (!account) throw notFound('account-not-found', 'no such account');
    const remaining = account.quotaBytes - account.usedBytes - (await reservedBytes(tx, accountId, now));
    if (length > remaining) throw tooLarge('quota-exceeded', `the upload needs ${length} bytes; the quota has ${Math.max(0, remaining)} left`);
    await insertUpload(tx, { id, accountId, length, createdAt: now, expiresAt, encryption });
  });
  return { id, length, expiresAt, sha256: null, encryption };
}

/** Lends an encrypted upload's data key to the upload area until the returned function is called (one request's time). */
export function holdUploadKey(services: Services, upload: Pick<OwnUpload, 'id' | 'length' | 'encryption'>, dataKey: Buffer): () => void {
  const ciphers = uploadAreaFor(services.config).ciphers;
  if (!upload.encryption || !ciphers) throw new Error(`upload ${upload.id} is not encrypted as it arrives`);
  const layout = { chunkSize: upload.encryption.chunkSize, blobId: Buffer.from(upload.encryption.blobId, 'hex'), plaintextSize: upload.length };
  return ciphers.hold(upload.id, uploadCipherOf(dataKey, layout));
}

/** The bytes an upload's content has in the store: its length, or its blob's size when encrypted. */
function storedSizeOf(upload: Upload): number {
  return upload.encryption ? encryptedSize({ chunkSize: upload.encryption.chunkSize, plaintextSize: upload.length }) : upload.length;
}

/** The account's upload `id` (an expired one until housekeeping removes it); null when none or another account's. */
export async function findOwnUpload(services: Services, accountId: number, id: string): Promise<OwnUpload | null> {
  if (!isUploadId(id)) return null;
  const upload = await findUpload(services.db, id);
  if (!upload || upload.accountId !== accountId) return null;
  return { id: upload.id, length: upload.length, expiresAt: upload.expiresAt, sha256: upload.completion?.sha256 ?? null, encryption: upload.encryption };
}

/** Forgets upload `id` and its bytes (tus termination) under its lock: a PATCH of it on any instance is ended first. */
export async function cancelUpload(services: Services, accountId: number, id: string): Promise<void> {
  const upload = isUploadId(id) ? await findUpload(services.db, id) : undefined;
  if (!upload || upload.accountId !== accountId) throw notFound('upload-not-found', 'no such upload');
  await withUploadLock(services, id, async () => {
    await deleteUpload(services.db, id);
    await uploadAreaFor(services.config).remove(id);
  });
}

// Completions in this process, so two requests finishing one upload hash it once; across instances,
// the lock `<id>/completion` makes the later one wait and find it completed.
const completing = new Map<string, Promise<CompletedUpload>>();
/** How long a completion waits for one on another instance (hashing GiBs). */
const COMPLETION_LOCK_WAIT_MS = 15 * 60_000;

/** Completes upload `id` once all its bytes have arrived: hashes and stores them. Idempotent. */
export function completeUpload(services: Services, accountId: number, id: string): Promise<CompletedUpload> {
  let running = completing.get(id);
  if (!running) {
    const complete = () => completeOnce(services, accountId, id);
    running = withUploadLock(services, `${id}/completion`, complete, COMPLETION_LOCK_WAIT_MS).finally(() => completing.delete(id));
    completing.set(id, running);
  }
  return running;
}

async function completeOnce(services: Services, accountId: number, id: string): Promise<CompletedUpload> {
  const { db } = services;
  const upload = isUploadId(id) ? await findUpload(db, id) : undefined;
  if (!upload || upload.accountId !== accountId) throw notFound('upload-not-found', 'no such upload');
  if (upload.completion) return completedOf(upload.completion);

  const area = uploadAreaFor(services.config);
  const store = contentStoreFor(services.config);
  let sha256: string;
  let storedKey: string | null = null;
  // The hash computed as the bytes arrived; read again when this process did not see them all arrive.
  const hashed = await area.sha256Of(id);
  if (hashed) {
    if (hashed.size !== upload.length) throw new Error(`upload ${id} holds ${hashed.size} bytes, not the ${upload.length} declared`);
    sha256 = hashed.sha256;
  } else {
    // The bytes left the upload folder: another request completed it, or a crash came after the move: adopt them.
    const again = await findUpload(db, id);
    if (again?.completion) return completedOf(again.completion);
    const staged = again?.staging;
    if (!staged || (await store.stat(staged.key))?.size !== storedSizeOf(upload)) throw new Error(`the bytes of upload ${id} are gone`);
    sha256 = staged.sha256;
    storedKey = staged.key;
  }

  for (let attempt = 1; attempt <= 6; attempt++) {
    try {
      const outcome =
        storedKey === null
          ? upload.encryption
            ? 'none'
            : await reuseExisting(services, id, sha256, upload.length)
          : upload.encryption
            ? await adoptEncrypted(services, upload, sha256, storedKey)
            : await adoptStored(services, id, sha256, upload.length, storedKey);
      if (outcome === 'none') {
        // No plaintext content with this hash (encrypted bytes are never shared): a new key, whose
        // write intent is committed first so a crash from here on is recovered.
        const key = store.newKey(upload.encryption ? randomBytes(32).toString('hex') : sha256);
        const now = services.now();
        const staged = await db.transaction().execute(async (tx) => {
          await queueRemoval(tx, key, now, new Date(now.getTime() + WRITE_INTENT_GRACE_MS));
          return stageUpload(tx, id, { sha256, key });
        });
        if (!staged) continue; // completed by another request meanwhile: the next round says so
        await area.storeInto(id, key);
        storedKey = key;
        continue;
      }
      if (outcome.discardOurs && storedKey !== null) {
        // Our copy lost a race with identical bytes: removed now rather than when its intent falls due.
        await expediteRemoval(db, storedKey, services.now());
      } else if (storedKey !== null && !upload.encryption) {
        void makeThumbnailsAhead(services, { sha256, size: upload.length, storageKey: storedKey, encrypted: false });
      }
      await area.remove(id);
      return outcome.completion;
    } catch (error) {
      // PostgreSQL: content found may be removed before the next statement references it; decide again.
      if (attempt < 6 && isForeignKeyViolation(error)) continue;
      throw error;
    }
  }
  throw new Error(`upload ${id} could not be completed: the content kept changing under it`);
}

const completedOf = (completion: { readonly sha256: string; readonly contentId: number }): CompletedUpload => ({
  sha256: completion.sha256,
  contentId: completion.contentId,
});

/** Completes an upload whose bytes have all arrived (or joins its completion); null while bytes are missing. HEAD calls it, to finish an interrupted completion. */
export async function completeIfArrived(services: Services, accountId: number, id: string): Promise<CompletedUpload | null> {
  const upload = isUploadId(id) ? await findUpload(services.db, id) : undefined;
  if (!upload || upload.accountId !== accountId) throw notFound('upload-not-found', 'no such upload');
  if (upload.completion) return completedOf(upload.completion);
  const size = await uploadAreaFor(services.config).readableBytes(id);
  const arrived = size === upload.length || (size === null && upload.staging !== null);
  return arrived ? completeUpload(services, accountId, id) : null;
}

type Outcome = 'none' | { readonly completion: CompletedUpload; readonly discardOurs: boolean };

/** When plaintext content with this hash exists: the upload records it, and our bytes go. */
async function reuseExisting(services: Services, id: string, sha256: string, size: number): Promise<Outcome> {
  return services.db.transaction().execute(async (tx): Promise<Outcome> => {
    const existing = await findPlaintextContent(tx, sha256);
    if (!existing) return 'none';
    if (existing.size !== size) throw new Error(`content ${existing.id} has hash ${sha256} but ${existing.size} bytes, not ${size}`);
    return { completion: await recordCompletion(tx, services, id, sha256, existing.id), discardOurs: true };
  });
}

/** Our bytes are under `key`: insert the content row for them (or reuse one that won a race). */
async function adoptStored(services: Services, id: string, sha256: string, size: number, key: string): Promise<Outcome> {
  return services.db.transaction().execute(async (tx) => {
    const now = services.now();
    const inserted = await insertPlaintextContent(tx, { sha256, size, storageKey: key, createdAt: now });
    if (inserted !== undefined) {
      // Only a key whose removal has not begun may become live.
      if (!(await withdrawWriteIntent(tx, key))) throw new Error(`the write intent of ${key} was taken for removal`);
      return { completion: await recordCompletion(tx, services, id, sha256, inserted), discardOurs: false };
    }
    const existing = await findPlaintextContent(tx, sha256);
    if (!existing) throw new Error(`content with hash ${sha256} neither inserted nor found`);
    // Another completion may have adopted this very key (the same upload, on another instance).
    return { completion: await recordCompletion(tx, services, id, sha256, existing.id), discardOurs: existing.storageKey !== key };
  });
}

/** An encrypted upload's blob is under `key`: its own encrypted content row, with the layout its header was written with. */
async function adoptEncrypted(services: Services, upload: Upload, sha256: string, key: string): Promise<Outcome> {
  const encryption = upload.encryption;
  if (!encryption) throw new Error(`upload ${upload.id} is not encrypted`);
  return services.db.transaction().execute(async (tx) => {
    const contentId = await insertEncryptedContent(tx, {
      sha256,
      size: storedSizeOf(upload),
      storageKey: key,
      createdAt: services.now(),
      keyId: encryption.keyId,
      chunkSize: encryption.chunkSize,
      nonceScheme: 'random96',
      blobId: encryption.blobId,
      plaintextSize: upload.length,
    });
    if (!(await withdrawWriteIntent(tx, key))) throw new Error(`the write intent of ${key} was taken for removal`);
    return { completion: await recordCompletion(tx, services, upload.id, sha256, contentId), discardOurs: false };
  });
}

/** Marks the upload completed; when another request did it first, that completion stands. */
async function recordCompletion(tx: Kysely<Database>, services: Services, id: string, sha256: string, contentId: number): Promise<CompletedUpload> {
  const now = services.now();
  const marked = await markUploadCompleted(tx, id, { sha256, contentId, completedAt: now, expiresAt: new Date(now.getTime() + CLAIM_LIFETIME_MS) });
  if (marked) return { sha256, contentId };
  const upload = await findUpload(tx, id);
  if (!upload) throw notFound('upload-not-found', 'no such upload');
  if (!upload.completion) throw new Error(`upload ${id} could not be marked completed`);
  return completedOf(upload.completion);
}

/**
 * The content FileAdd may give a new file in `folderId`, in its transaction: a completed upload with this
 * hash and size (one encrypted with the folder's key first), else plaintext content a file of the account
 * already has ("instant upload"). 400 for a malformed hash or size; 404 when neither exists.
 */
export async function claimContent(
  tx: Kysely<Database>,
  services: Services,
  accountId: number,
  sha256: string,
  size: number | bigint,
  folderId: number,
): Promise<ClaimedUpload> {
  if (!SHA256.test(sha256)) throw invalidArgument('parameter-invalid', 'hash must be a SHA-256 in 64 lowercase hexadecimal digits');
  const bytes = Number(size);
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw invalidArgument('parameter-invalid', 'size must be a whole number of bytes');
  const folderKeyId = folderId === 0 ? null : ((await findLiveFolderEncryption(tx, accountId, folderId))?.keyId ?? null);
  const fromUpload = await claimCompletedUpload(tx, accountId, sha256, bytes, services.now(), folderKeyId);
  if (fromUpload !== undefined) return fromUpload;
  const owned = await findOwnedPlaintextContent(tx, accountId, sha256, bytes);
  if (owned !== undefined) return { contentId: owned, keyId: null };
  throw notFound('content-not-found', 'no completed upload or owned content with that hash and size');
}

/** Housekeeping: removes expired uploads with their bytes, and stray files in the upload folder; returns how many. */
export async function purgeExpiredUploads(services: Services): Promise<{ uploads: number; strays: number }> {
  const area = uploadAreaFor(services.config);
  let uploads = 0;
  for (;;) {
    const ids = await expiredUploadIds(services.db, services.now(), PURGE_BATCH);
    for (const id of ids) {
      // Bytes first, then the row: a crash in between leaves the row, and the next run retries.
      await area.remove(id);
      await deleteUpload(services.db, id);
    }
    uploads += ids.length;
    if (ids.length < PURGE_BATCH) break;
  }
  // File times are wall-clock times, whatever clock the services run on.
  const candidates = await area.idsUntouchedSince(new Date(Date.now() - STRAY_FILE_AGE_MS));
  let strays = 0;
  for (let i = 0; i < candidates.length; i += PURGE_BATCH) {
    const batch = candidates.slice(i, i + PURGE_BATCH);
    const existing = await existingUploadIds(services.db, batch);
    for (const id of batch) {
      if (existing.has(id)) continue;
      await area.remove(id);
      strays++;
    }
  }
  return { uploads, strays };
}
