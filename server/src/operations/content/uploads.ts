/**
 * Uploads (DECISIONS.md §6): the rules behind the tus endpoint (protocol/files/uploads.ts) and FileAdd.
 *
 * An upload is created for an account with its length, checked against the upload limit and the
 * account's remaining quota (less what its other unexpired uploads reserve). Its bytes are hashed
 * (SHA-256) as they arrive (storage/content/running-hashes.ts; read back and hashed when this
 * process did not see them all arrive). Once complete, they are stored once per hash: if plaintext
 * content with that hash exists, the new bytes are discarded and the content is reused; otherwise they move into
 * the content store under a new key, and only then is the content row inserted. The upload then
 * records the content: FileAdd claims it with claimContent, in the transaction that creates the
 * file record, so the content is referenced by the upload or by the file at every moment.
 *
 * Crash safety of a new blob: its key is queued for removal (a write intent, due after a long
 * grace) and recorded on the upload (staged_key) in one transaction before any byte moves; the
 * transaction that inserts the content row withdraws the intent. A completion killed after the
 * move is finished by the next one (a HEAD calls completeIfArrived), which adopts the staged key;
 * an upload that is never finished leaves a queued key, which content removal deletes when due.
 * docs/uploads-and-downloads.md §3 goes through each step.
 *
 * An upload made for an encrypted folder (the tus metadata `folder`) by a session that has the
 * folder unlocked is encrypted as it arrives, with the folder's key (docs/encryption.md, "Uploads
 * into an encrypted folder"; storage/content/encrypted-uploads.ts): its plaintext never reaches
 * the disk. Its bytes are its own encrypted content, never shared with another upload's, and
 * become it by the same steps (write intent, move, row) under a random key.
 */
import { createReadStream } from 'node:fs';
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
import { sha256OfStream } from '../../storage/content/running-hashes';
import { isUploadId as isUploadIdForm } from '../../storage/content/upload-area';
import type { Services } from '../context';
import { BLOB_ID_BYTES, encryptedSize } from '../crypto/content-cipher';
import { uploadCipherOf } from '../encryption/encrypted-content';
import { invalidArgument, notFound, tooLarge } from '../errors';
import { withUploadLock } from './upload-locks';

/**
 * The chunk size of content encrypted as it is uploaded (the content format allows any up to
 * 16 MiB, and each content row says its own). 1 MiB rather than the 64 KiB of FileEncrypt: a
 * sixteenth of the ciphers, nonces and buffers per GiB, which is most of what encrypting costs
 * beside AES itself; a ranged read then decrypts at most 1 MiB more than it asked for.
 */
export const UPLOAD_CHUNK_SIZE = 1024 * 1024;

/** How long an unfinished upload may be resumed. */
export const UPLOAD_LIFETIME_MS = 24 * 3600_000;
/** How long a completed upload waits for FileAdd before it is purged. */
export const CLAIM_LIFETIME_MS = 24 * 3600_000;
/** A write intent falls due this long after it was made: far beyond any move into the store. */
const WRITE_INTENT_GRACE_MS = 24 * 3600_000;
/** Files in the upload folder without an upload row are removed once this old. */
const STRAY_FILE_AGE_MS = 3600_000;
const PURGE_BATCH = 500;

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * The tus datastore of the upload endpoint: @tus/file-store in `<dataDir>/uploads/`, or
 * @tus/s3-store in the bucket when content is in S3 (storage/content/stores.ts).
 */
export function uploadDatastore(services: Services): DataStore {
  return uploadAreaFor(services.config).createDatastore();
}

/** Whether `id` has the form of an upload id the endpoint hands out. */
export const isUploadId = (id: string): boolean => isUploadIdForm(id);

/** An upload as its owner sees it. */
export interface OwnUpload {
  readonly id: string;
  readonly length: number;
  readonly expiresAt: Date;
  /** Set once the bytes are complete and stored. */
  readonly sha256: string | null;
  /** Set for an upload encrypted as it arrives. */
  readonly encryption: UploadEncryption | null;
}

/** The key an upload into an encrypted folder is encrypted with (operations/encryption/encryption.ts keyForUploadInto). */
export interface UploadKey {
  readonly keyId: number;
  readonly dataKey: Buffer;
}

export interface CompletedUpload {
  readonly sha256: string;
  readonly contentId: number;
}

/**
 * Creates upload `id` of `length` bytes for the account: 413 when it exceeds the upload limit or
 * the quota left (quota − used − reserved by the account's other unexpired uploads). With `key`,
 * and an upload area that can (the embedded default's), the upload is encrypted as it arrives:
 * the caller then holds the key for its request (holdUploadKey) before tus creates the upload.
 */
export async function beginUpload(services: Services, accountId: number, id: string, length: number, key: UploadKey | null = null): Promise<OwnUpload> {
  if (!isUploadId(id)) throw invalidArgument('invalid upload id');
  if (!Number.isSafeInteger(length) || length < 0) throw invalidArgument('Upload-Length must be a whole number of bytes');
  const { maxUploadBytes } = services.config.limits;
  if (length > maxUploadBytes) throw tooLarge(`the upload is larger than the limit of ${maxUploadBytes} bytes`);
  const now = services.now();
  const expiresAt = new Date(now.getTime() + UPLOAD_LIFETIME_MS);
  const encryption: UploadEncryption | null =
    key && uploadAreaFor(services.config).ciphers ? { keyId: key.keyId, blobId: randomBytes(BLOB_ID_BYTES).toString('hex'), chunkSize: UPLOAD_CHUNK_SIZE } : null;
  // One transaction, holding the account's row lock before anything is read (on PostgreSQL; SQLite
  // runs one writer at a time anyway): concurrent creations run one after another, so the
  // reservations add up (and so do FileAdd's, which takes the same lock).
  await services.db.transaction().execute(async (tx) => {
    await lockAccountTree(tx, accountId);
    const account = await findAccount(tx, { id: accountId });
    if (!account) throw notFound('no such account');
    const remaining = account.quotaBytes - account.usedBytes - (await reservedBytes(tx, accountId, now));
    if (length > remaining) throw tooLarge(`the upload needs ${length} bytes; the quota has ${Math.max(0, remaining)} left`);
    await insertUpload(tx, { id, accountId, length, createdAt: now, expiresAt, encryption });
  });
  return { id, length, expiresAt, sha256: null, encryption };
}

/**
 * Makes the data key of an encrypted upload available to the upload area until the returned
 * function is called: a request on the upload holds it while it runs (protocol/files/uploads.ts).
 */
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

/**
 * The account's upload `id`; null when there is none or it is another account's. An expired one is
 * returned (its expiresAt is past) until housekeeping removes it.
 */
export async function findOwnUpload(services: Services, accountId: number, id: string): Promise<OwnUpload | null> {
  if (!isUploadId(id)) return null;
  const upload = await findUpload(services.db, id);
  if (!upload || upload.accountId !== accountId) return null;
  return { id: upload.id, length: upload.length, expiresAt: upload.expiresAt, sha256: upload.completion?.sha256 ?? null, encryption: upload.encryption };
}

/**
 * Forgets the account's upload `id` and removes its bytes (tus termination), under the upload's
 * lock (upload-locks.ts): a PATCH of it in progress on any instance is asked to end first.
 */
export async function cancelUpload(services: Services, accountId: number, id: string): Promise<void> {
  const upload = isUploadId(id) ? await findUpload(services.db, id) : undefined;
  if (!upload || upload.accountId !== accountId) throw notFound('no such upload');
  await withUploadLock(services, id, async () => {
    await deleteUpload(services.db, id);
    await uploadAreaFor(services.config).remove(id);
  });
}

/**
 * Completions running in this process, so that two requests finishing one upload hash it once;
 * across instances, the lock `<id>/completion` (upload-locks.ts) makes the later one wait and then
 * find the upload completed.
 */
const completing = new Map<string, Promise<CompletedUpload>>();
/** How long a completion waits for one of the same upload on another instance (hashing GiBs). */
const COMPLETION_LOCK_WAIT_MS = 15 * 60_000;

/**
 * Completes the account's upload `id`, whose bytes are all in the upload folder: hashes them and
 * stores them once per hash (see the top of this file). Idempotent: completing a completed upload
 * returns what it became.
 */
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
  if (!upload || upload.accountId !== accountId) throw notFound('no such upload');
  if (upload.completion) return completedOf(upload.completion);

  const area = uploadAreaFor(services.config);
  const store = contentStoreFor(services.config);
  let sha256: string;
  /** The key our bytes are under, once they are in the store. */
  let storedKey: string | null = null;
  // Usually the hash computed while the bytes arrived; read and hashed again when this process
  // did not see them all arrive (a restart, another instance, an interrupted PATCH).
  const hashed = await area.sha256Of(id);
  if (hashed) {
    if (hashed.size !== upload.length) throw new Error(`upload ${id} holds ${hashed.size} bytes, not the ${upload.length} declared`);
    sha256 = hashed.sha256;
  } else {
    // The bytes have left the upload folder: another request completed the upload, or one was
    // interrupted (a crash) after moving them into the store. Then they are adopted from there.
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
        // No plaintext content with this hash (or encrypted bytes, which are never shared): our
        // bytes go into the store under a new key; encrypted content's key does not repeat the
        // plaintext's hash. The write intent and the key are committed first, so that a crash
        // from here on is recovered.
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
      }
      await area.remove(id);
      return outcome.completion;
    } catch (error) {
      // PostgreSQL: content found in one statement may be removed before the next references it;
      // the foreign key refuses, and the decision is taken again.
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

/**
 * For an upload in progress whose bytes have all arrived, completes it (or joins the completion
 * under way); null while bytes are missing. HEAD calls this, so that an upload whose completion
 * was interrupted (a crash, a lost connection) is finished when its client comes back.
 */
export async function completeIfArrived(services: Services, accountId: number, id: string): Promise<CompletedUpload | null> {
  const upload = isUploadId(id) ? await findUpload(services.db, id) : undefined;
  if (!upload || upload.accountId !== accountId) throw notFound('no such upload');
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
  if (!upload) throw notFound('no such upload');
  if (!upload.completion) throw new Error(`upload ${id} could not be marked completed`);
  return completedOf(upload.completion);
}

/**
 * The content FileAdd may give a new file of the account in folder `folderId`: the content of a
 * completed upload with this hash and size (the upload is consumed; one encrypted with the folder's
 * key first, then a plaintext one), else plaintext content with this hash and size that a file of
 * the account (live or in the bin) already has ("instant upload"). Returns the content and the key
 * it is encrypted with (null: plaintext). An upload encrypted for another folder's key may still be
 * claimed: the file then keeps that encryption, as a file moved there would (encryption.ts). Run
 * it in FileAdd's transaction. 400 for a malformed hash or size; 404 when neither exists.
 */
export async function claimContent(
  tx: Kysely<Database>,
  services: Services,
  accountId: number,
  sha256: string,
  size: number | bigint,
  folderId: number,
): Promise<ClaimedUpload> {
  if (!SHA256.test(sha256)) throw invalidArgument('hash must be a SHA-256 in 64 lowercase hexadecimal digits');
  const bytes = Number(size);
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw invalidArgument('size must be a whole number of bytes');
  const folderKeyId = folderId === 0 ? null : ((await findLiveFolderEncryption(tx, accountId, folderId))?.keyId ?? null);
  const fromUpload = await claimCompletedUpload(tx, accountId, sha256, bytes, services.now(), folderKeyId);
  if (fromUpload !== undefined) return fromUpload;
  const owned = await findOwnedPlaintextContent(tx, accountId, sha256, bytes);
  if (owned !== undefined) return { contentId: owned, keyId: null };
  throw notFound('no completed upload or owned content with that hash and size');
}

/**
 * Housekeeping: removes expired uploads (unfinished ones with their bytes; completed ones that
 * FileAdd never claimed, whose content then goes with content removal), and files left in the
 * upload folder by uploads that no longer exist. Returns how many uploads and stray files went.
 */
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

/** SHA-256 (lowercase hex) and size of a file, read as a stream: memory stays constant. */
export function sha256OfFile(file: string): Promise<{ sha256: string; size: number }> {
  return sha256OfStream(createReadStream(file, { highWaterMark: 1024 * 1024 }));
}

export { sha256OfStream };
