/**
 * Encryption (docs/encryption.md): FileEncrypt, FolderEncrypt, Unlock, Lock, Decrypt, and what "locked" means wherever an
 * item is reached: some key on its way from the root is not unlocked for the caller's token.
 */
import type { Kysely } from 'kysely';
import type { Readable } from 'node:stream';
import {
  countPlainFilesOfKey,
  deleteUnlock,
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

/** An unlock's token-derived sealing key names the key in its purpose. */
const unlockPurpose = (keyId: number) => `fss/unlocked-data-key/v1/${keyId}`;
const DOWNLOAD_KEY_PURPOSE = 'fss/download-data-key/v1';
const wrapContext = (accountId: number) => `account:${accountId}`;

// ---- Locks ---------------------------------------------------------------------------------------

export type LockableItem = ItemRef & { readonly accountId?: number };

/** What locks `item` for `caller`: the root-most key its token has not unlocked (any, for an anonymous caller); else null. */
export async function lockedItemFor(db: Kysely<Database>, caller: Caller | null, item: LockableItem): Promise<ItemLock | null> {
  const accountId = item.accountId ?? caller?.uid;
  if (accountId === undefined) throw new Error('lockedItemFor needs the item\'s account');
  return lockOnChain(db, caller, accountId, await lockChain(db, accountId, item));
}

/** lockedItemFor of an item whose lock chain is read already: unlocks and tip are read only for a non-empty chain. */
export async function lockOnChain(db: Kysely<Database>, caller: Caller | null, accountId: number, chain: readonly LockLink[]): Promise<ItemLock | null> {
  if (chain.length === 0) return null;
  const unlocked = caller && caller.uid === accountId ? await unlockedKeyIds(db, caller.tokenId, [...new Set(chain.map((link) => link.keyId))]) : new Set<number>();
  const first = chain.find((link) => !unlocked.has(link.keyId));
  return first ? { type: first.type, id: first.id, tip: await tipOf(db, first.keyId) } : null;
}

const tipOf = async (db: Kysely<Database>, keyId: number): Promise<string> => (await keyTips(db, [keyId])).get(keyId) ?? '';

/** lockedItemFor for many folders at once (three queries at most): the first lock found, or null. */
export async function lockedFolderAmong(db: Kysely<Database>, caller: Caller, folderIds: readonly number[]): Promise<ItemLock | null> {
  const chains = await folderLockChains(db, caller.uid, folderIds);
  if (chains.size === 0) return null;
  const keyIds = new Set([...chains.values()].flatMap((chain) => chain.map((link) => link.keyId)));
  const unlocked = await unlockedKeyIds(db, caller.tokenId, [...keyIds]);
  for (const chain of chains.values()) {
    const first = chain.find((link) => !unlocked.has(link.keyId));
    if (first) return { type: first.type, id: first.id, tip: await tipOf(db, first.keyId) };
  }
  return null;
}

/** A live item as an operation answers it: with its own key's tip when encrypted, as listings write it. */
export async function withTip<T extends FolderItem | FileItem>(db: Kysely<Database>, accountId: number, item: T): Promise<T> {
  if (!item.encrypted) return item;
  const own = item.type === 'folder' ? await findLiveFolderEncryption(db, accountId, item.id) : await findLiveFileEncryption(db, accountId, item.id);
  const keyId = own?.keyId ?? null;
  return { ...item, tip: keyId === null ? '' : await tipOf(db, keyId) };
}

/** 423 when the item is locked for the caller. */
export async function refuseIfLocked(db: Kysely<Database>, caller: Caller | null, item: LockableItem): Promise<void> {
  const lock = await lockedItemFor(db, caller, item);
  if (lock) throw lockedRefusal(lock);
}

/** The caller's unlock of `keyId`: the data key, and the unlock row's sealed value. */
async function unlockOf(db: Kysely<Database>, caller: Caller, keyId: number): Promise<{ dataKey: Buffer; sealed: string } | null> {
  const sealed = await findUnlock(db, caller.tokenId, keyId);
  const dataKey = sealed === undefined ? null : openWithToken(caller.token, unlockPurpose(keyId), sealed);
  return dataKey && sealed !== undefined ? { dataKey, sealed } : null;
}

const lengthOf = (text: string) => [...text].length;

function checkedPassword(password: string | null): string {
  const value = (password ?? '').normalize('NFC');
  const length = lengthOf(value);
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    throw invalidArgument('password-length', `password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
  }
  return value;
}

/** FileEncrypt's and FolderEncrypt's password and tip, checked in that order. */
function checkedPasswordAndTip(params: { readonly password: string | null; readonly password_tip: string | null }): { password: string; tip: string } {
  const password = checkedPassword(params.password);
  const tip = (params.password_tip ?? '').normalize('NFC');
  if (lengthOf(tip) > TIP_MAX_LENGTH) throw invalidArgument('tip-too-long', `password_tip must be at most ${TIP_MAX_LENGTH} characters`);
  // Case-insensitively: a tip spelling the password in capitals gives it away too.
  if (tip.toLowerCase().includes(password.toLowerCase())) throw invalidArgument('tip-contains-password', 'password_tip must not contain the password');
  return { password, tip };
}

/** Unlock's and Decrypt's item: exactly one of dirid and fid is non-zero. */
function targetOf(dirid: bigint, fid: bigint): ItemRef {
  if ((dirid !== 0n) === (fid !== 0n)) throw invalidArgument('parameter-invalid', 'exactly one of dirid and fid must be non-zero');
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

/** The data key of `keyId` if `password` is its password: 429 while throttled, 403 for a wrong one (counted). */
async function openKeyWithPassword(services: Services, accountId: number, keyId: number, password: string): Promise<Buffer> {
  const { db } = services;
  const counters = itemPasswordCounters(accountId, keyId);
  const blocked = await secondsBlocked(db, counters, services.now());
  if (blocked > 0) throw tooManyAttempts('password-attempts', 'too many wrong passwords: try again later', blocked);
  const key = await findKey(db, accountId, keyId);
  if (!key) throw notFound('item-not-found', 'item not found');
  const dataKey = unwrapDataKey(await deriveKeyEncryptionKey(services.passwordHashes, password, kdfOf(key)), key.wrappedKey, wrapContext(accountId));
  if (!dataKey) {
    await recordFailure(db, counters, services.now());
    throw forbidden('password-wrong', 'wrong password');
  }
  await clearFailures(db, counters[0]);
  return dataKey;
}

/** The key that locks an item itself: a folder's mark; a file's own key, else its folder's. 404 / 409. */
async function keyOfItem(db: Kysely<Database>, accountId: number, item: ItemRef): Promise<number> {
  if (item.type === 'folder') {
    const folder = await findLiveFolderEncryption(db, accountId, item.id);
    if (!folder) throw notFound('folder-not-found', 'folder not found');
    if (folder.keyId === null) throw conflict('not-encrypted', 'the folder is not encrypted');
    return folder.keyId;
  }
  const file = await findLiveFileEncryption(db, accountId, item.id);
  if (!file) throw notFound('file-not-found', 'file not found');
  const keyId = file.keyId ?? file.folderKeyId;
  if (keyId === null) throw conflict('not-encrypted', 'the file is not encrypted');
  return keyId;
}

export async function fileEncrypt(ctx: AuthenticatedContext, params: ParamsOf<'FileEncrypt'>): Promise<Empty> {
  const caller = ctx.caller;
  const { services } = ctx;
  const { password, tip } = checkedPasswordAndTip(params);
  const file = await findLiveFileEncryption(services.db, caller.uid, itemIdOf(params.fid));
  if (!file) throw notFound('file-not-found', 'file not found');
  if (file.keyId !== null) throw locked('already-encrypted', 'the file is already encrypted', { id: file.id });
  if (file.folderKeyId !== null) throw locked('already-encrypted', 'the file is already encrypted with its folder', { id: file.id });

  const { keyId, dataKey } = await createKey(services, caller.uid, { type: 'file', id: file.id }, password, tip);
  const outcome = await encryptFile(services, file.id, { keyId, dataKey, folderKeyId: null });
  if (outcome !== 'done') {
    await deleteKeyIfUnused(services.db, keyId);
    throw conflict('changed-meanwhile', 'the file changed while it was being encrypted (moved, replaced or encrypted by another call); try again');
  }
  return { kind: 'empty' };
}

export async function folderEncrypt(ctx: AuthenticatedContext, params: ParamsOf<'FolderEncrypt'>): Promise<Empty> {
  const caller = ctx.caller;
  const { services } = ctx;
  const { password, tip } = checkedPasswordAndTip(params);
  if (params.dirid === 0n) throw invalidArgument('root-not-encryptable', 'the root folder cannot be encrypted: choose a folder');
  const folder = await findLiveFolderEncryption(services.db, caller.uid, itemIdOf(params.dirid));
  if (!folder) throw notFound('folder-not-found', 'folder not found');
  if (folder.keyId !== null) throw locked('already-encrypted', 'the folder is already encrypted', { id: folder.id });

  const { keyId, dataKey } = await createKey(services, caller.uid, { type: 'folder', id: folder.id }, password, tip);
  const job = await services.db.transaction().execute(async (tx) => {
    // The account's row lock: FileAdd and Move into this subtree wait, then see the mark.
    await lockAccountTree(tx, caller.uid);
    const current = await findLiveFolderEncryption(tx, caller.uid, folder.id);
    if (!current) throw notFound('folder-not-found', 'folder not found');
    if (current.keyId !== null) throw locked('already-encrypted', 'the folder is already encrypted', { id: folder.id });
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
  kickEncryptionJobs(services);
}

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

  // Plaintext left in folders of the key (failed files, or a job that lost its key): a new job, now the key is at hand.
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

/** Lock (ext): the token forgets its unlock of the key that locks the item itself; idempotent. 404 / 409 as Unlock. */
export async function lock(ctx: AuthenticatedContext, params: ParamsOf<'Lock'>): Promise<Empty> {
  const keyId = await keyOfItem(ctx.services.db, ctx.caller.uid, targetOf(params.dirid, params.fid));
  await deleteUnlock(ctx.services.db, ctx.caller.tokenId, keyId);
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
    if (!file) throw notFound('file-not-found', 'file not found');
    if (file.folderKeyId !== null) {
      throw conflict('inside-encrypted-folder', 'the file is in an encrypted folder: decrypt the folder (or move the file out of it) first', { id: file.folderId });
    }
    if (file.keyId === null) throw conflict('not-encrypted', 'the file is not encrypted');
    const dataKey = await openKeyWithPassword(services, caller.uid, file.keyId, password);
    const outcome = await decryptFile(services, file.id, { keyId: file.keyId, dataKey });
    if (outcome === 'conflict') throw conflict('changed-meanwhile', 'the file changed while it was being decrypted; try again');
    await deleteKeyIfUnused(db, file.keyId);
    return { kind: 'empty' };
  }

  const folder = await findLiveFolderEncryption(db, caller.uid, target.id);
  if (!folder) throw notFound('folder-not-found', 'folder not found');
  if (folder.keyId === null) throw conflict('not-encrypted', 'the folder is not encrypted');
  const parent = folder.parentId === 0 ? undefined : await findLiveFolderEncryption(db, caller.uid, folder.parentId);
  if (parent && parent.keyId !== null) {
    throw conflict('inside-encrypted-folder', 'the folder is inside an encrypted folder: decrypt that folder (or move this one out of it) first', { id: parent.id });
  }
  const keyId = folder.keyId;
  const dataKey = await openKeyWithPassword(services, caller.uid, keyId, password);
  const job = await db.transaction().execute(async (tx) => {
    await lockAccountTree(tx, caller.uid);
    const current = await findLiveFolderEncryption(tx, caller.uid, folder.id);
    if (!current || current.keyId !== keyId) throw conflict('changed-meanwhile', 'the folder changed meanwhile; try again');
    await unmarkRegion(tx, caller.uid, folder.id, keyId);
    return createDecryptJob(tx, services, { accountId: caller.uid, keyId, folderId: folder.id, dataKey });
  });
  await runOrSchedule(services, job);
  return { kind: 'empty' };
}

// ---- Hooks: items coming into encrypted folders --------------------------------------------------

/**
 * For FileAdd, in its transaction: a file added to an encrypted folder is encrypted with its key in the
 * background; 423 (rolling the record back) unless the folder is unlocked. True when a job waits.
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
  if (file.encrypted) return false;
  await ensureEncryptJob(tx, services, { accountId: caller.uid, keyId: folder.keyId, folderId: folder.id, dataKey, files: 1, bytes: file.size });
  return true;
}

/** For FolderAdd, in its transaction: a folder made in an encrypted folder takes its key (423 when locked); what the item shows. */
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
  return { encrypted: true, tip: await tipOf(tx, parent.keyId) };
}

/**
 * For Move, in its transaction, after the move: 423 out of or into a locked folder; folders moved into an
 * encrypted one take its key, plaintext files are encrypted in the background. True when files wait for a job.
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
    // An open job finds the newcomers by itself (its work is a query).
  if (await findOpenJob(tx, 'encrypt', destination.keyId)) return true;
  const work = await countPlainFilesOfKey(tx, destination.keyId);
  if (work.files === 0) return false;
  await ensureEncryptJob(tx, services, { accountId: caller.uid, keyId: destination.keyId, folderId: destination.id, dataKey, ...work });
  return true;
}

// ---- Uploads into an encrypted folder -----------------------------------------------------------

/** The key an upload for `folderId` is encrypted with as it arrives: null when not encrypted; 404, or 423 when locked. */
export async function keyForUploadInto(db: Kysely<Database>, caller: Caller, folderId: number): Promise<{ keyId: number; dataKey: Buffer } | null> {
  if (folderId === 0) return null;
  const folder = await findLiveFolderEncryption(db, caller.uid, folderId);
  if (!folder) throw notFound('folder-not-found', 'folder not found');
  if (folder.keyId === null) return null;
  return { keyId: folder.keyId, dataKey: await keyForWritingInto(db, caller, folder.id, folder.keyId) };
}

/** The data key an upload encrypted as it arrives needs, while the caller's session has it unlocked. */
export async function unlockedKeyForUpload(db: Kysely<Database>, caller: Caller, keyId: number): Promise<Buffer | null> {
  return (await unlockOf(db, caller, keyId))?.dataKey ?? null;
}

/** The key of an encrypted folder written into: 423 unless unlocked all the way up. */
async function keyForWritingInto(tx: Kysely<Database>, caller: Caller, folderId: number, keyId: number): Promise<Buffer> {
  await refuseIfLocked(tx, caller, { type: 'folder', id: folderId });
  const dataKey = await unlockedKeyForUpload(tx, caller, keyId);
  if (!dataKey) throw lockedRefusal({ type: 'folder', id: folderId, tip: await tipOf(tx, keyId) });
  return dataKey;
}

// ---- Downloads -----------------------------------------------------------------------------------

/**
 * An unlocked encrypted file's data key sealed for its download URL, under the server secret and the
 * session's unlock row: once the unlock ends, no one can open an old URL, not even with secret and database.
 */
export async function sealedFileKeyForDownload(
  services: Services,
  caller: Caller,
  fileId: number,
  context: (keyId: number) => string,
): Promise<{ keyId: number; sealedKey: string } | null> {
  const file = await findLiveFileEncryption(services.db, caller.uid, fileId);
  if (!file || file.keyId === null) return null;
  return (await sealedKeysForDownload(services, caller, [file.keyId], context))?.[0] ?? null;
}

const downloadSealingInput = (secret: Buffer, unlockSealed: string) => Buffer.concat([secret, Buffer.from(unlockSealed, 'utf8')]);

/** What an encrypted file's download URL serves, decrypted on the fly; null (423) once the unlocking session lost it. */
export async function openUnlockedDownload(
  services: Services,
  unlocked: { readonly tokenId: number; readonly keyId: number; readonly sealedKey: string; readonly context: string },
  contentId: number,
): Promise<{ size: number; open(range?: PlainRange): Promise<Readable> } | null> {
  const dataKey = (await openUnlockedKeys(services, unlocked.tokenId, [unlocked], () => unlocked.context))?.get(unlocked.keyId);
  if (!dataKey) return null;
  const content = await findContentForCrypt(services.db, contentId);
  if (!content?.layout || content.layout.keyId !== unlocked.keyId) return null;
  const keys = { keyId: unlocked.keyId, dataKey };
  return {
    size: content.layout.plaintextSize,
    open: (range) => openDecryptedContent(services, contentId, keys, range),
  };
}

/** sealedFileKeyForDownload for the keys of a ZIP (their items checked already): each sealed for `context(keyId)`; null when one is not unlocked. */
export async function sealedKeysForDownload(
  services: Services,
  caller: Caller,
  keyIds: readonly number[],
  context: (keyId: number) => string,
): Promise<{ keyId: number; sealedKey: string }[] | null> {
  const sealed: { keyId: number; sealedKey: string }[] = [];
  for (const keyId of keyIds) {
    const unlocked = await unlockOf(services.db, caller, keyId);
    if (!unlocked) return null;
    sealed.push({ keyId, sealedKey: seal(downloadSealingInput(services.secret, unlocked.sealed), DOWNLOAD_KEY_PURPOSE, unlocked.dataKey, context(keyId)) });
  }
  return sealed;
}

/** The data keys a ZIP's URL carries, by id, while the session that unlocked them still has every one unlocked; else null (423). */
export async function openUnlockedKeys(
  services: Services,
  tokenId: number,
  keys: readonly { readonly keyId: number; readonly sealedKey: string }[],
  context: (keyId: number) => string,
): Promise<Map<number, Buffer> | null> {
  const opened = new Map<number, Buffer>();
  for (const { keyId, sealedKey } of keys) {
    const unlockSealed = await findUnlock(services.db, tokenId, keyId);
    const dataKey = unlockSealed === undefined ? null : unseal(downloadSealingInput(services.secret, unlockSealed), DOWNLOAD_KEY_PURPOSE, sealedKey, context(keyId));
    if (!dataKey) return null;
    opened.set(keyId, dataKey);
  }
  return opened;
}
