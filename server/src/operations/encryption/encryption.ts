/**
 * Encryption (DECISIONS.md §11): FileEncrypt, FolderEncrypt, Unlock (ext), Decrypt (ext), and what
 * "locked" means wherever an item is reached (listings, downloads, search, sharing, links).
 *
 * The model:
 * - A password makes a key (encryption_keys): a random data key, wrapped by the key scrypt derives
 *   from the password, with the scrypt parameters and a tip. FileEncrypt makes one for a file;
 *   FolderEncrypt one for a folder, which marks the folder and every folder beneath it with that
 *   key (folders.key_id) and encrypts every file beneath with it.
 * - Encryption travels with an item: a file keeps its encrypted content and key wherever it is
 *   moved; a folder moved out of an encrypted folder keeps its mark. A plaintext file that comes
 *   into an encrypted folder (FileAdd, Move) is encrypted with the folder's key, in the background.
 * - An item is locked for a caller when any key on its way from the root (each encrypted folder
 *   above it, the folder itself, a file's own key) is not unlocked for the caller's token. Unlock
 *   keeps the data key for the token, sealed under a key derived from the token (unlocks), until
 *   the token ends (expiry, Logout: the row goes with the token).
 * - Decrypt removes a key: from a file (at once), or from a folder's region of the key (its files
 *   in the background). Only an item that is not itself inside an encrypted folder can be
 *   decrypted, so that nothing beneath an encrypted folder is ever plaintext at rest.
 *
 * Checks, in order: arguments (400), the item (404, one answer for missing and foreign ids), its
 * state (409 not encrypted, 423 already encrypted or locked), throttling (429), the password (403).
 */
import type { Kysely } from 'kysely';
import type { Readable } from 'node:stream';
import {
  countPlainFilesOfKey,
  deleteKeyIfUnused,
  findContentForCrypt,
  findKey,
  findLiveFileEncryption,
  findLiveFolderEncryption,
  findOpenJob,
  findUnlock,
  folderLockChains,
  insertKey,
  keyTips,
  lockChain,
  markSubtreesEncrypted,
  setFolderKey,
  tokenExpiry,
  unlockedKeyIds,
  unmarkRegion,
  upsertUnlock,
  type ItemLock,
  type ItemRef,
  type LockLink,
  type StoredKey,
} from '../../storage/db/repositories/encryption-repository';
import { lockAccountTree } from '../../storage/db/repositories/items-repository';
import type { Database } from '../../storage/db/schema';
import type { AuthenticatedContext, Caller, Empty, FileItem, FolderItem, ParamsOf, Services } from '../context';
import type { PlainRange } from '../crypto/content-cipher';
import { newDataKey, unwrapDataKey, wrapDataKey } from '../crypto/data-key';
import { deriveKeyEncryptionKey, newKdfParams, type KdfParams } from '../crypto/key-derivation';
import { seal, unseal } from '../crypto/sealing';
import { decryptFile, encryptFile, openDecryptedContent } from './encrypted-content';
import { createDecryptJob, ensureEncryptJob, isSmallJob, kickEncryptionJobs, runEncryptionJobs } from './encryption-jobs';
import { conflict, forbidden, invalidArgument, locked, lockedRefusal, notFound, tooManyAttempts, unauthorized } from '../errors';
import { itemIdOf } from '../tree/id-lists';
import { sealWithToken, openWithToken } from '../accounts/sessions';
import { clearFailures, itemPasswordCounters, recordFailure, secondsBlocked } from '../accounts/throttle';

export type { ItemRef } from '../../storage/db/repositories/encryption-repository';

export const PASSWORD_MIN_LENGTH = 4;
export const PASSWORD_MAX_LENGTH = 64;
export const TIP_MAX_LENGTH = 100;

/** What an unlock keeps, per key: the purpose of its token-derived sealing key names the key. */
const unlockPurpose = (keyId: number) => `fss/unlocked-data-key/v1/${keyId}`;
const DOWNLOAD_KEY_PURPOSE = 'fss/download-data-key/v1';
const wrapContext = (accountId: number) => `account:${accountId}`;

// ---- Locks ---------------------------------------------------------------------------------------

/** An item of an account; `accountId` defaults to the caller's. */
export type LockableItem = ItemRef & { readonly accountId?: number };

/**
 * Whether `item` is locked for `caller`, and by what: the root-most key on its way that the
 * caller's token has not unlocked; null when nothing locks it. `caller` null (an anonymous
 * visitor, a share page) has nothing unlocked: any encryption locks. Pass the transaction when
 * inside one.
 */
export async function lockedItemFor(db: Kysely<Database>, caller: Caller | null, item: LockableItem): Promise<ItemLock | null> {
  const accountId = item.accountId ?? caller?.uid;
  if (accountId === undefined) throw new Error('lockedItemFor needs the item\'s account');
  return lockOnChain(db, caller, accountId, await lockChain(db, accountId, item));
}

/**
 * lockedItemFor of an item whose lock chain (storage lockChain: the keys on its way, root-most
 * first) has been read already: only the caller's unlocks and the tip are read, and only when the
 * chain is not empty.
 */
export async function lockOnChain(db: Kysely<Database>, caller: Caller | null, accountId: number, chain: readonly LockLink[]): Promise<ItemLock | null> {
  if (chain.length === 0) return null;
  const unlocked = caller && caller.uid === accountId ? await unlockedKeyIds(db, caller.tokenId, [...new Set(chain.map((link) => link.keyId))]) : new Set<number>();
  const first = chain.find((link) => !unlocked.has(link.keyId));
  if (!first) return null;
  const tips = await keyTips(db, [first.keyId]);
  return { type: first.type, id: first.id, tip: tips.get(first.keyId) ?? '' };
}

/**
 * lockedItemFor for many folders of the caller at once (set-based: three queries at most, whatever
 * their number): the first lock found, or null when none of them is locked for the caller.
 */
export async function lockedFolderAmong(db: Kysely<Database>, caller: Caller, folderIds: readonly number[]): Promise<ItemLock | null> {
  const chains = await folderLockChains(db, caller.uid, folderIds);
  if (chains.size === 0) return null;
  const keyIds = new Set([...chains.values()].flatMap((chain) => chain.map((link) => link.keyId)));
  const unlocked = await unlockedKeyIds(db, caller.tokenId, [...keyIds]);
  for (const chain of chains.values()) {
    const first = chain.find((link) => !unlocked.has(link.keyId));
    if (first) return { type: first.type, id: first.id, tip: (await keyTips(db, [first.keyId])).get(first.keyId) ?? '' };
  }
  return null;
}

/**
 * A live item as an operation answers it (FolderRename, FileRename, FolderAndFileRestore): when it
 * is encrypted, with the tip of its own key, as listings write it (DECISIONS.md §2: `tip` whenever
 * the item is encrypted). The item records carry the flag but not the key.
 */
export async function withTip<T extends FolderItem | FileItem>(db: Kysely<Database>, accountId: number, item: T): Promise<T> {
  if (!item.encrypted) return item;
  const own = item.type === 'folder' ? await findLiveFolderEncryption(db, accountId, item.id) : await findLiveFileEncryption(db, accountId, item.id);
  const keyId = own?.keyId ?? null;
  const tips = await keyTips(db, keyId === null ? [] : [keyId]);
  return { ...item, tip: keyId === null ? '' : (tips.get(keyId) ?? '') };
}

/** 423 when the item is locked for the caller. */
export async function refuseIfLocked(db: Kysely<Database>, caller: Caller | null, item: LockableItem): Promise<void> {
  const lock = await lockedItemFor(db, caller, item);
  if (lock) throw lockedRefusal(lock);
}

/** The data key of `keyId` as the caller's token unlocked it; null when it has not. */
async function unlockedDataKey(db: Kysely<Database>, caller: Caller, keyId: number): Promise<Buffer | null> {
  return (await unlockOf(db, caller, keyId))?.dataKey ?? null;
}

/** The caller's unlock of `keyId`: the data key, and the unlock row's sealed value; null when none. */
async function unlockOf(db: Kysely<Database>, caller: Caller, keyId: number): Promise<{ dataKey: Buffer; sealed: string } | null> {
  const sealed = await findUnlock(db, caller.tokenId, keyId);
  const dataKey = sealed === undefined ? null : openWithToken(caller.token, unlockPurpose(keyId), sealed);
  return dataKey && sealed !== undefined ? { dataKey, sealed } : null;
}

// ---- Arguments -----------------------------------------------------------------------------------

const lengthOf = (text: string) => [...text].length;

function checkedPassword(password: string | null): string {
  const value = (password ?? '').normalize('NFC');
  const length = lengthOf(value);
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    throw invalidArgument(`password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
  }
  return value;
}

function checkedTip(tip: string | null, password: string): string {
  const value = (tip ?? '').normalize('NFC');
  if (lengthOf(value) > TIP_MAX_LENGTH) throw invalidArgument(`password_tip must be at most ${TIP_MAX_LENGTH} characters`);
  // Case-insensitively: a tip that spells the password in capitals gives it away as well.
  if (value.toLowerCase().includes(password.toLowerCase())) throw invalidArgument('password_tip must not contain the password');
  return value;
}

/** Unlock's and Decrypt's item: exactly one of dirid and fid is non-zero. */
function targetOf(dirid: bigint, fid: bigint): ItemRef {
  if ((dirid !== 0n) === (fid !== 0n)) throw invalidArgument('exactly one of dirid and fid must be non-zero');
  return dirid !== 0n ? { type: 'folder', id: itemIdOf(dirid) } : { type: 'file', id: itemIdOf(fid) };
}

// ---- Keys and passwords --------------------------------------------------------------------------

const kdfOf = (key: StoredKey): KdfParams => ({ ...key.kdf, salt: Buffer.from(key.kdf.salt, 'base64url') });

/** Makes a key for `item` from a password: returns its id and the new data key. */
async function createKey(services: Services, accountId: number, item: ItemRef, password: string, tip: string): Promise<{ keyId: number; dataKey: Buffer }> {
  const kdf = newKdfParams();
  const dataKey = newDataKey();
  const wrappedKey = wrapDataKey(await deriveKeyEncryptionKey(services.passwordHashes, password, kdf), dataKey, wrapContext(accountId));
  const keyId = await insertKey(services.db, {
    accountId,
    item,
    tip,
    kdf: { algorithm: kdf.algorithm, N: kdf.N, r: kdf.r, p: kdf.p, salt: kdf.salt.toString('base64url') },
    wrappedKey,
    createdAt: services.now(),
  });
  return { keyId, dataKey };
}

/**
 * The data key of `keyId` if `password` is its password. Throttled per key and per account:
 * 429 with retryAfter while blocked; a wrong password is 403 and counts.
 */
async function openKeyWithPassword(services: Services, accountId: number, keyId: number, password: string): Promise<Buffer> {
  const { db } = services;
  const counters = itemPasswordCounters(accountId, keyId);
  const blocked = await secondsBlocked(db, counters, services.now());
  if (blocked > 0) throw tooManyAttempts('too many wrong passwords: try again later', blocked);
  const key = await findKey(db, accountId, keyId);
  if (!key) throw notFound('item not found');
  const dataKey = unwrapDataKey(await deriveKeyEncryptionKey(services.passwordHashes, password, kdfOf(key)), key.wrappedKey, wrapContext(accountId));
  if (!dataKey) {
    await recordFailure(db, counters, services.now());
    throw forbidden('wrong password');
  }
  await clearFailures(db, counters[0]);
  return dataKey;
}

/** The key that locks an item itself: a folder's mark; a file's own key, else its folder's. 404 / 409. */
async function keyOfItem(db: Kysely<Database>, accountId: number, item: ItemRef): Promise<number> {
  if (item.type === 'folder') {
    const folder = await findLiveFolderEncryption(db, accountId, item.id);
    if (!folder) throw notFound('folder not found');
    if (folder.keyId === null) throw conflict('the folder is not encrypted');
    return folder.keyId;
  }
  const file = await findLiveFileEncryption(db, accountId, item.id);
  if (!file) throw notFound('file not found');
  const keyId = file.keyId ?? file.folderKeyId;
  if (keyId === null) throw conflict('the file is not encrypted');
  return keyId;
}

// ---- FileEncrypt, FolderEncrypt ------------------------------------------------------------------

export async function fileEncrypt(ctx: AuthenticatedContext, params: ParamsOf<'FileEncrypt'>): Promise<Empty> {
  const caller = ctx.caller;
  const { services } = ctx;
  const password = checkedPassword(params.password);
  const tip = checkedTip(params.password_tip, password);
  const file = await findLiveFileEncryption(services.db, caller.uid, itemIdOf(params.fid));
  if (!file) throw notFound('file not found');
  if (file.keyId !== null) throw locked('the file is already encrypted', { id: file.id });
  if (file.folderKeyId !== null) throw locked('the file is already encrypted with its folder', { id: file.id });

  const { keyId, dataKey } = await createKey(services, caller.uid, { type: 'file', id: file.id }, password, tip);
  const outcome = await encryptFile(services, file.id, { keyId, dataKey, folderKeyId: null });
  if (outcome !== 'done') {
    await deleteKeyIfUnused(services.db, keyId);
    throw conflict('the file changed while it was being encrypted (moved, replaced or encrypted by another call); try again');
  }
  return { kind: 'empty' };
}

export async function folderEncrypt(ctx: AuthenticatedContext, params: ParamsOf<'FolderEncrypt'>): Promise<Empty> {
  const caller = ctx.caller;
  const { services } = ctx;
  const password = checkedPassword(params.password);
  const tip = checkedTip(params.password_tip, password);
  if (params.dirid === 0n) throw invalidArgument('the root folder cannot be encrypted: choose a folder');
  const folder = await findLiveFolderEncryption(services.db, caller.uid, itemIdOf(params.dirid));
  if (!folder) throw notFound('folder not found');
  if (folder.keyId !== null) throw locked('the folder is already encrypted', { id: folder.id });

  const { keyId, dataKey } = await createKey(services, caller.uid, { type: 'folder', id: folder.id }, password, tip);
  const job = await services.db.transaction().execute(async (tx) => {
    // The account's row lock: FileAdd and Move into this subtree wait, then see the mark.
    await lockAccountTree(tx, caller.uid);
    const current = await findLiveFolderEncryption(tx, caller.uid, folder.id);
    if (!current) throw notFound('folder not found');
    if (current.keyId !== null) throw locked('the folder is already encrypted', { id: folder.id });
    await markSubtreesEncrypted(tx, caller.uid, [folder.id], keyId);
    const work = await countPlainFilesOfKey(tx, keyId);
    const id = await ensureEncryptJob(tx, services, { accountId: caller.uid, keyId, folderId: folder.id, dataKey, ...work });
    return { id, ...work };
  }).catch(async (error: unknown) => {
    await deleteKeyIfUnused(services.db, keyId);
    throw error;
  });
  await runOrSchedule(services, job);
  return { kind: 'empty' };
}

/** A small job is done within the call (its result visible at once); a big one in the background. */
async function runOrSchedule(services: Services, job: { readonly id: number; readonly files: number; readonly bytes: number }): Promise<void> {
  if (isSmallJob(job)) await runEncryptionJobs(services, { jobId: job.id });
  // Whatever is left (a big job, or a small one another instance holds) goes on in the background.
  kickEncryptionJobs(services);
}

// ---- Unlock, Decrypt -----------------------------------------------------------------------------

export async function unlock(ctx: AuthenticatedContext, params: ParamsOf<'Unlock'>): Promise<Empty> {
  const caller = ctx.caller;
  const { services } = ctx;
  const target = targetOf(params.dirid, params.fid);
  const password = checkedPassword(params.password);
  const keyId = await keyOfItem(services.db, caller.uid, target);
  const dataKey = await openKeyWithPassword(services, caller.uid, keyId, password);

  const expiresAt = await tokenExpiry(services.db, caller.tokenId);
  if (!expiresAt) throw unauthorized();
  await upsertUnlock(services.db, {
    tokenId: caller.tokenId,
    keyId,
    sealedKey: sealWithToken(caller.token, unlockPurpose(keyId), dataKey),
    createdAt: services.now(),
    expiresAt,
  });

  // Plaintext left in folders of the key (a job whose files failed, or one that lost its key):
  // now that the key is at hand, a new job takes care of it.
  const resumed = await services.db.transaction().execute(async (tx) => {
    await lockAccountTree(tx, caller.uid);
    if (await findOpenJob(tx, 'encrypt', keyId)) return false;
    const work = await countPlainFilesOfKey(tx, keyId);
    if (work.files === 0) return false;
    await ensureEncryptJob(tx, services, { accountId: caller.uid, keyId, folderId: target.type === 'folder' ? target.id : 0, dataKey, ...work });
    return true;
  });
  if (resumed) kickEncryptionJobs(services);
  return { kind: 'empty' };
}

export async function decrypt(ctx: AuthenticatedContext, params: ParamsOf<'Decrypt'>): Promise<Empty> {
  const caller = ctx.caller;
  const { services } = ctx;
  const { db } = services;
  const target = targetOf(params.dirid, params.fid);
  const password = checkedPassword(params.password);

  if (target.type === 'file') {
    const file = await findLiveFileEncryption(db, caller.uid, target.id);
    if (!file) throw notFound('file not found');
    if (file.folderKeyId !== null) {
      throw conflict('the file is in an encrypted folder: decrypt the folder (or move the file out of it) first', { id: file.folderId });
    }
    if (file.keyId === null) throw conflict('the file is not encrypted');
    const dataKey = await openKeyWithPassword(services, caller.uid, file.keyId, password);
    const outcome = await decryptFile(services, file.id, { keyId: file.keyId, dataKey });
    if (outcome === 'conflict') throw conflict('the file changed while it was being decrypted; try again');
    await deleteKeyIfUnused(db, file.keyId);
    return { kind: 'empty' };
  }

  const folder = await findLiveFolderEncryption(db, caller.uid, target.id);
  if (!folder) throw notFound('folder not found');
  if (folder.keyId === null) throw conflict('the folder is not encrypted');
  const parent = folder.parentId === 0 ? undefined : await findLiveFolderEncryption(db, caller.uid, folder.parentId);
  if (parent && parent.keyId !== null) {
    throw conflict('the folder is inside an encrypted folder: decrypt that folder (or move this one out of it) first', { id: parent.id });
  }
  const keyId = folder.keyId;
  const dataKey = await openKeyWithPassword(services, caller.uid, keyId, password);
  const job = await db.transaction().execute(async (tx) => {
    await lockAccountTree(tx, caller.uid);
    const current = await findLiveFolderEncryption(tx, caller.uid, folder.id);
    if (!current || current.keyId !== keyId) throw conflict('the folder changed meanwhile; try again');
    await unmarkRegion(tx, caller.uid, folder.id, keyId);
    return createDecryptJob(tx, services, { accountId: caller.uid, keyId, folderId: folder.id, dataKey });
  });
  await runOrSchedule(services, job);
  return { kind: 'empty' };
}

// ---- Hooks: items coming into encrypted folders --------------------------------------------------

/**
 * For FileAdd, in its transaction, after the record is made: a file added to an encrypted folder
 * is encrypted with the folder's key in the background (kickEncryptionJobs after the commit). The
 * folder must be unlocked for the caller (the key is needed): else 423, and the transaction,
 * with the record, is rolled back. True when the file waits for a job.
 */
export async function encryptIfAddedToEncryptedFolder(
  tx: Kysely<Database>,
  services: Services,
  caller: Caller,
  file: { readonly id: number; readonly dir: number; readonly size: number; readonly encrypted?: boolean },
): Promise<boolean> {
  if (file.dir === 0) return false;
  const folder = await findLiveFolderEncryption(tx, caller.uid, file.dir);
  if (!folder || folder.keyId === null) return false;
  const dataKey = await keyForWritingInto(tx, caller, folder.id, folder.keyId);
  // Encrypted as it arrived (its upload was made for an encrypted folder): nothing left to do.
  if (file.encrypted) return false;
  await ensureEncryptJob(tx, services, { accountId: caller.uid, keyId: folder.keyId, folderId: folder.id, dataKey, files: 1, bytes: file.size });
  return true;
}

/**
 * For FolderAdd, in its transaction, after the folder is made: a folder made inside an encrypted
 * folder is encrypted with it (423 when that folder is locked for the caller). Returns what the
 * new folder's item shows.
 */
export async function encryptionOfNewFolder(
  tx: Kysely<Database>,
  caller: Caller,
  folder: { readonly id: number; readonly parentId: number },
): Promise<{ encrypted?: true; tip?: string }> {
  if (folder.parentId === 0) return {};
  const parent = await findLiveFolderEncryption(tx, caller.uid, folder.parentId);
  if (!parent || parent.keyId === null) return {};
  await keyForWritingInto(tx, caller, parent.id, parent.keyId);
  await setFolderKey(tx, folder.id, parent.keyId);
  const tips = await keyTips(tx, [parent.keyId]);
  return { encrypted: true, tip: tips.get(parent.keyId) ?? '' };
}

/**
 * For Move, in its transaction, after the items have moved. Items may not be taken out of a folder
 * that is locked for the caller, nor put into one (423). Folders moved into an encrypted folder
 * take its key (their own encryption, if any, stays); plaintext files that arrive there are
 * encrypted in the background (kickEncryptionJobs after the commit). Items moved out of an
 * encrypted folder keep their encryption. True when files wait for a job.
 */
export async function applyEncryptionToMove(
  tx: Kysely<Database>,
  services: Services,
  caller: Caller,
  move: { readonly destination: number; readonly sourceFolders: readonly number[]; readonly folderIds: readonly number[] },
): Promise<boolean> {
  const sourceLock = await lockedFolderAmong(tx, caller, [...new Set(move.sourceFolders)].filter((id) => id !== 0));
  if (sourceLock) throw lockedRefusal(sourceLock);
  if (move.destination === 0) return false;
  const destination = await findLiveFolderEncryption(tx, caller.uid, move.destination);
  if (!destination || destination.keyId === null) return false;
  const dataKey = await keyForWritingInto(tx, caller, destination.id, destination.keyId);
  await markSubtreesEncrypted(tx, caller.uid, move.folderIds, destination.keyId);
  // An open job of the key finds the newcomers by itself (its work is a query); else a new one.
  if (await findOpenJob(tx, 'encrypt', destination.keyId)) return true;
  const work = await countPlainFilesOfKey(tx, destination.keyId);
  if (work.files === 0) return false;
  await ensureEncryptJob(tx, services, { accountId: caller.uid, keyId: destination.keyId, folderId: destination.id, dataKey, ...work });
  return true;
}

// ---- Uploads into an encrypted folder -----------------------------------------------------------

/**
 * For the upload endpoint: the key an upload made for folder `folderId` (the tus metadata
 * `folder`) is encrypted with as it arrives. Null for the root or a folder that is not encrypted;
 * 404 for anything but a live folder of the caller; 423 when it is locked for the caller.
 */
export async function keyForUploadInto(db: Kysely<Database>, caller: Caller, folderId: number): Promise<{ keyId: number; dataKey: Buffer } | null> {
  if (folderId === 0) return null;
  const folder = await findLiveFolderEncryption(db, caller.uid, folderId);
  if (!folder) throw notFound('folder not found');
  if (folder.keyId === null) return null;
  return { keyId: folder.keyId, dataKey: await keyForWritingInto(db, caller, folder.id, folder.keyId) };
}

/** The data key an upload encrypted as it arrives needs, as the caller's session unlocked it; null when it has not (any more). */
export function unlockedKeyForUpload(db: Kysely<Database>, caller: Caller, keyId: number): Promise<Buffer | null> {
  return unlockedDataKey(db, caller, keyId);
}

/** The key of an encrypted folder something is written into: 423 unless unlocked (all the way up) for the caller. */
async function keyForWritingInto(tx: Kysely<Database>, caller: Caller, folderId: number, keyId: number): Promise<Buffer> {
  await refuseIfLocked(tx, caller, { type: 'folder', id: folderId });
  const dataKey = await unlockedDataKey(tx, caller, keyId);
  if (!dataKey) throw lockedRefusal({ type: 'folder', id: folderId, tip: (await keyTips(tx, [keyId])).get(keyId) ?? '' });
  return dataKey;
}

// ---- Downloads -----------------------------------------------------------------------------------

/**
 * For the download URL of an encrypted file the caller has unlocked: its key id, and its data key
 * sealed for the URL (`context`: the rest of the URL's grant). Null when not unlocked.
 *
 * The sealing key is derived from the server secret together with the session's unlock row
 * (its token-sealed value, random per unlock): the /d/ route, which has no session, can open it
 * while that unlock exists, and nobody can read the key from the URL alone. Once the unlock ends
 * (Logout, expiry, a new Unlock), an old URL, say from a browser's history, can no longer be
 * opened by anyone, not even with the server secret and the database.
 */
export async function sealedFileKeyForDownload(
  services: Services,
  caller: Caller,
  fileId: number,
  context: (keyId: number) => string,
): Promise<{ keyId: number; sealedKey: string } | null> {
  const file = await findLiveFileEncryption(services.db, caller.uid, fileId);
  if (!file || file.keyId === null) return null;
  const unlocked = await unlockOf(services.db, caller, file.keyId);
  if (!unlocked) return null;
  return { keyId: file.keyId, sealedKey: seal(downloadSealingInput(services.secret, unlocked.sealed), DOWNLOAD_KEY_PURPOSE, unlocked.dataKey, context(file.keyId)) };
}

const downloadSealingInput = (secret: Buffer, unlockSealed: string) => Buffer.concat([secret, Buffer.from(unlockSealed, 'utf8')]);

/**
 * What a download URL of an encrypted file serves: its plaintext size and a way to read any range,
 * decrypting on the fly. Null (the route answers 423) when the session that unlocked the file has
 * ended or no longer has it unlocked (Logout ends every URL it made at once), or the sealed key
 * does not open.
 */
export async function openUnlockedDownload(
  services: Services,
  unlocked: { readonly tokenId: number; readonly keyId: number; readonly sealedKey: string; readonly context: string },
  contentId: number,
): Promise<{ size: number; open(range?: PlainRange): Promise<Readable> } | null> {
  const unlockSealed = await findUnlock(services.db, unlocked.tokenId, unlocked.keyId);
  if (unlockSealed === undefined) return null;
  const dataKey = unseal(downloadSealingInput(services.secret, unlockSealed), DOWNLOAD_KEY_PURPOSE, unlocked.sealedKey, unlocked.context);
  if (!dataKey) return null;
  const content = await findContentForCrypt(services.db, contentId);
  if (!content?.layout || content.layout.keyId !== unlocked.keyId) return null;
  const keys = { keyId: unlocked.keyId, dataKey };
  return {
    size: content.layout.plaintextSize,
    open: (range) => openDecryptedContent(services, contentId, keys, range),
  };
}
