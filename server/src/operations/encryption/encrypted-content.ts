/**
 * Moving one file between plaintext and encrypted content (DECISIONS.md §6, §11), and reading
 * encrypted content back. Used by FileEncrypt and Decrypt directly and by background jobs
 * (encryption-jobs.ts) for many files. Also the cipher of an upload encrypted as it arrives
 * (uploadCipherOf).
 *
 * Encrypting gives the file its own content row (encrypted = 1, a new storage key, never a reused
 * one); the plaintext content it leaves is removed only when no other record references it
 * (content-removal.ts removeContentIfUnreferenced), and never touched while one does. Decrypting
 * makes the file plaintext content again, stored once per hash: it joins existing plaintext
 * content with that SHA-256 when there is some, else stores its bytes as new plaintext content.
 *
 * Every write follows the content store's rules (uploads.ts): the new key is queued for removal
 * (a write intent) before any byte is written under it, the blob is complete under its key before
 * the row that points at it commits, and that transaction withdraws the intent. The file is
 * switched to the new content in the same transaction, only if it still points at the old content
 * and still sits in a folder of the expected key; if a concurrent change won, the new blob is
 * removed again and nothing changes. A crash anywhere leaves either the old state or the new one,
 * plus at most a queued key that content removal deletes.
 *
 * Streams are read and written as they go, in pieces of about 1 MiB: memory stays at a few MiB
 * whatever the size. The
 * only file written outside the store is the work file in `<dataDir>/encryption-work/`: ciphertext
 * when encrypting; when decrypting, the plaintext the owner asked for, which becomes content.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import { contentStoreFor } from '../../storage/content/stores';
import { crossedWritebackStep, startWriteback } from '../../storage/content/writeback';
import { isForeignKeyViolation } from '../../storage/db/engine/dialect';
import { lockAccountTree } from '../../storage/db/repositories/items-repository';
import {
  expediteRemoval,
  findPlaintextContent,
  insertPlaintextContent,
  queueRemoval,
  withdrawWriteIntent,
} from '../../storage/db/repositories/content-repository';
import {
  findContentForCrypt,
  findFileEncryption,
  insertEncryptedContent,
  switchFileContent,
  type EncryptedContentLayout,
} from '../../storage/db/repositories/encryption-repository';
import type { Database } from '../../storage/db/schema';
import { removeContentIfUnreferenced } from '../content/content-removal';
import type { Services } from '../context';
import type { UploadCipher } from '../../storage/content/encrypted-uploads';
import {
  chunkCount,
  cipherRangeOf,
  decryptChunks,
  DEFAULT_CHUNK_SIZE,
  encryptContent,
  encryptedSize,
  headerOf,
  newLayout,
  openDecrypted,
  openTail,
  RECORD_OVERHEAD,
  sealChunk,
  sealTail,
  type CipherLayout,
  type PlainRange,
} from '../crypto/content-cipher';

/** A write intent falls due this long after it was made: far beyond any write (as in uploads.ts). */
const WRITE_INTENT_GRACE_MS = 24 * 3600_000;
/** Work files older than this are left from a crash, and housekeeping removes them. */
const STALE_WORK_FILE_MS = 3600_000;

/**
 * What happened to a file:
 * - `done`: switched;
 * - `unchanged`: nothing to do (already in the wanted state, or gone);
 * - `conflict`: a concurrent change won (moved, replaced, encrypted or decrypted meanwhile).
 */
export type SwitchOutcome = 'done' | 'unchanged' | 'conflict';

class LostRace extends Error {}

export function workDirectory(services: Services): string {
  return path.join(services.config.dataDir, 'encryption-work');
}

async function newWorkFile(services: Services): Promise<string> {
  const dir = workDirectory(services);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  return path.join(dir, randomBytes(16).toString('hex'));
}

/** The layout the database holds for encrypted content, in the cipher's terms. */
export function cipherLayoutOf(layout: EncryptedContentLayout): CipherLayout {
  return { chunkSize: layout.chunkSize, blobId: Buffer.from(layout.blobId, 'hex'), plaintextSize: layout.plaintextSize };
}

/**
 * A pass-through stream that starts the writeback of the work file `file` as it grows, so that
 * the fsync of putFile finds little left to write (storage/content/writeback.ts).
 */
function writingBack(file: string): Transform {
  let written = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const from = written;
      written += chunk.length;
      if (crossedWritebackStep(from, written)) startWriteback(file);
      done(null, chunk);
    },
  });
}

/** A pass-through stream that hashes what goes through it. */
function hashing(hash: ReturnType<typeof createHash>): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
}

/**
 * What else a switch of a file's content commits with it, in its transaction (an encryption job
 * counts the file there, so that a process killed right after the switch cannot lose the count).
 */
export type OnSwitched = (tx: Kysely<Database>) => Promise<void>;

/**
 * Encrypts the content of file `fileId` with `dataKey` (of key `keyId`), if it is plaintext and
 * sits in a folder of key `folderKeyId` (null: a plain folder, for FileEncrypt's own key).
 */
export async function encryptFile(
  services: Services,
  fileId: number,
  keys: { readonly keyId: number; readonly dataKey: Buffer; readonly folderKeyId: number | null; readonly onSwitched?: OnSwitched },
): Promise<SwitchOutcome> {
  const { db } = services;
  const file = await findFileEncryption(db, fileId);
  if (!file || file.keyId !== null) return 'unchanged';
  if (file.folderKeyId !== keys.folderKeyId) return 'conflict';
  const content = await findContentForCrypt(db, file.contentId);
  if (!content || content.encrypted) throw new Error(`file ${fileId}: its content ${file.contentId} is not plaintext content`);

  const store = contentStoreFor(services.config);
  const layout = newLayout(content.size, DEFAULT_CHUNK_SIZE);
  const work = await newWorkFile(services);
  try {
    const hash = createHash('sha256');
    const plaintext = (await store.read(content.storageKey)).pipe(hashing(hash));
    // Not object mode: the stream holds one piece of about 1 MiB ahead, not sixteen.
    await pipeline(
      Readable.from(encryptContent(plaintext, keys.dataKey, layout), { objectMode: false }),
      writingBack(work),
      createWriteStream(work, { flags: 'wx', mode: 0o600 }),
    );
    // The bytes read are the bytes the file claims to be: damaged content is never sealed as good.
    const sha256 = hash.digest('hex');
    if (sha256 !== file.sha256) throw new Error(`file ${fileId}: its content does not match its SHA-256`);

    // A fresh random name: the key of encrypted content does not repeat the plaintext's hash.
    const key = store.newKey(randomBytes(32).toString('hex'));
    const now = services.now();
    await queueRemoval(db, key, now, new Date(now.getTime() + WRITE_INTENT_GRACE_MS));
    await store.putFile(key, work);
    try {
      await db.transaction().execute(async (tx) => {
        // The account's row lock, as every change to its tree takes: a decryption of the folder
        // committed meanwhile is then seen by the switch below (PostgreSQL; SQLite has one writer).
        await lockAccountTree(tx, file.accountId);
        const contentId = await insertEncryptedContent(tx, {
          sha256,
          size: encryptedSize(layout),
          storageKey: key,
          createdAt: services.now(),
          keyId: keys.keyId,
          chunkSize: layout.chunkSize,
          nonceScheme: 'random96',
          blobId: layout.blobId.toString('hex'),
          plaintextSize: layout.plaintextSize,
        });
        if (!(await withdrawWriteIntent(tx, key))) throw new Error(`the write intent of ${key} was taken for removal`);
        const switched = await switchFileContent(tx, {
          fileId,
          fromContentId: content.id,
          toContentId: contentId,
          keyId: keys.keyId,
          folderKeyId: keys.folderKeyId,
        });
        if (!switched) throw new LostRace();
        await keys.onSwitched?.(tx);
      });
    } catch (error) {
      if (!(error instanceof LostRace)) throw error;
      // Rolled back: the intent is still queued; our blob goes with the next removal run.
      await expediteRemoval(db, key, services.now());
      return 'conflict';
    }
    await removeContentIfUnreferenced(services, [content.id]);
    return 'done';
  } finally {
    await fs.rm(work, { force: true });
  }
}

/**
 * Makes the content of file `fileId` plaintext again, if it is encrypted with key `keyId` and
 * sits in a plain folder (or the root). The plaintext is stored once per hash.
 */
export async function decryptFile(
  services: Services,
  fileId: number,
  keys: { readonly keyId: number; readonly dataKey: Buffer; readonly onSwitched?: OnSwitched },
): Promise<SwitchOutcome> {
  const { db } = services;
  const file = await findFileEncryption(db, fileId);
  if (!file || file.keyId === null) return 'unchanged';
  if (file.keyId !== keys.keyId || file.folderKeyId !== null) return 'conflict';
  const content = await findContentForCrypt(db, file.contentId);
  if (!content?.layout || content.layout.keyId !== keys.keyId) throw new Error(`file ${fileId}: its content ${file.contentId} is not encrypted with key ${keys.keyId}`);

  const store = contentStoreFor(services.config);
  const work = await newWorkFile(services);
  try {
    const hash = createHash('sha256');
    const layout = cipherLayoutOf(content.layout);
    // The records only: the reader builds the header from the database (content-cipher.ts).
    const records = await store.read(content.storageKey, cipherRangeOf(layout));
    await pipeline(
      Readable.from(decryptChunks(records, keys.dataKey, layout), { objectMode: false }),
      hashing(hash),
      writingBack(work),
      createWriteStream(work, { flags: 'wx', mode: 0o600 }),
    );
    const sha256 = hash.digest('hex');
    if (sha256 !== file.sha256) throw new Error(`file ${fileId}: its decrypted content does not match its SHA-256`);

    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await joinOrStorePlaintext(services, {
          accountId: file.accountId,
          fileId,
          fromContentId: content.id,
          sha256,
          size: layout.plaintextSize,
          work,
          onSwitched: keys.onSwitched,
        });
        if (outcome === 'done') await removeContentIfUnreferenced(services, [content.id]);
        return outcome;
      } catch (error) {
        // PostgreSQL: plaintext content found in one statement may be removed before the next
        // references it; the foreign key refuses, and the decision is taken again (uploads.ts).
        if (attempt < 6 && isForeignKeyViolation(error)) continue;
        throw error;
      }
    }
  } finally {
    await fs.rm(work, { force: true });
  }
}

async function joinOrStorePlaintext(
  services: Services,
  change: {
    readonly accountId: number;
    readonly fileId: number;
    readonly fromContentId: number;
    readonly sha256: string;
    readonly size: number;
    readonly work: string;
    readonly onSwitched?: OnSwitched;
  },
): Promise<SwitchOutcome> {
  const { db } = services;
  const toPlain = async (tx: Kysely<Database>, contentId: number) => {
    const switched = await switchFileContent(tx, { fileId: change.fileId, fromContentId: change.fromContentId, toContentId: contentId, keyId: null, folderKeyId: null });
    if (switched) await change.onSwitched?.(tx);
    return switched;
  };

  // Plaintext content with this hash exists: the file joins it, and the work file goes.
  // Both transactions take the account's row lock first, as in encryptFile.
  const joined = await db.transaction().execute(async (tx) => {
    await lockAccountTree(tx, change.accountId);
    const existing = await findPlaintextContent(tx, change.sha256);
    if (!existing) return 'absent' as const;
    if (existing.size !== change.size) throw new Error(`content ${existing.id} has hash ${change.sha256} but ${existing.size} bytes, not ${change.size}`);
    return (await toPlain(tx, existing.id)) ? ('done' as const) : ('conflict' as const);
  });
  if (joined !== 'absent') return joined;

  const store = contentStoreFor(services.config);
  const key = store.newKey(change.sha256);
  const now = services.now();
  await queueRemoval(db, key, now, new Date(now.getTime() + WRITE_INTENT_GRACE_MS));
  await store.putFile(key, change.work);
  const outcome = await db.transaction().execute(async (tx): Promise<SwitchOutcome | 'raced'> => {
    await lockAccountTree(tx, change.accountId);
    const inserted = await insertPlaintextContent(tx, { sha256: change.sha256, size: change.size, storageKey: key, createdAt: services.now() });
    if (inserted === undefined) {
      // Identical bytes arrived meanwhile (an upload): join them, and ours go.
      const existing = await findPlaintextContent(tx, change.sha256);
      if (!existing) throw new Error(`content with hash ${change.sha256} neither inserted nor found`);
      return (await toPlain(tx, existing.id)) ? 'raced' : 'conflict';
    }
    if (!(await withdrawWriteIntent(tx, key))) throw new Error(`the write intent of ${key} was taken for removal`);
    if (!(await toPlain(tx, inserted))) throw new LostRace();
    return 'done';
  }).catch((error: unknown) => {
    if (error instanceof LostRace) return 'conflict' as const;
    throw error;
  });
  if (outcome !== 'done') await expediteRemoval(db, key, services.now());
  return outcome === 'raced' ? 'done' : outcome;
}

/**
 * The plaintext of encrypted content `contentId` (all of it, or one range), decrypting only the
 * chunks the range covers, as a stream. Rejects when the content is not encrypted with `keyId`.
 */
export async function openDecryptedContent(services: Services, contentId: number, keys: { readonly keyId: number; readonly dataKey: Buffer }, range?: PlainRange): Promise<Readable> {
  const content = await findContentForCrypt(services.db, contentId);
  if (!content?.layout || content.layout.keyId !== keys.keyId) throw new Error(`content ${contentId} is not encrypted with key ${keys.keyId}`);
  const store = contentStoreFor(services.config);
  return openDecrypted((cipherRange) => store.read(content.storageKey, cipherRange), keys.dataKey, cipherLayoutOf(content.layout), range);
}

/**
 * The cipher of an upload encrypted as it arrives (storage/content/encrypted-uploads.ts): the
 * content format with `layout` (the upload's blob id and chunk size, its length as the plaintext
 * size) and the data key of the folder it was made for.
 */
export function uploadCipherOf(dataKey: Buffer, layout: CipherLayout): UploadCipher {
  const header = headerOf(layout);
  const last = chunkCount(layout) - 1;
  return {
    header,
    chunkSize: layout.chunkSize,
    recordOverhead: RECORD_OVERHEAD,
    plaintextSize: layout.plaintextSize,
    sealChunk: (index, plaintext) => sealChunk(dataKey, header, index, index === last, plaintext),
    sealTail: (index, plaintext) => sealTail(dataKey, header, index, plaintext),
    openTail: (index, sealed) => openTail(dataKey, header, index, sealed),
    decrypt: (records) => Readable.from(decryptChunks(records, dataKey, layout), { objectMode: false }),
  };
}

/** Housekeeping: work files a crash left behind. */
export async function sweepWorkFiles(services: Services): Promise<number> {
  const dir = workDirectory(services);
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let removed = 0;
  // File times are wall-clock times, whatever clock the services run on.
  const before = Date.now() - STALE_WORK_FILE_MS;
  for (const name of names) {
    const file = path.join(dir, name);
    const stats = await fs.stat(file).catch(() => null);
    if (stats && stats.mtimeMs < before) {
      await fs.rm(file, { force: true });
      removed++;
    }
  }
  return removed;
}
