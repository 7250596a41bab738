/**
 * Switching one file between plaintext and encrypted content (crash-safe: write intent, blob, row; the switch commits
 * only if nothing changed meanwhile), reading encrypted content back, and an upload's cipher (docs/encryption.md §2).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import { unlessMissing } from '../../storage/content/file-sync';
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
import { removeContentIfUnreferenced, WRITE_INTENT_GRACE_MS } from '../content/content-removal';
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

/** Work files older than this are left from a crash, and housekeeping removes them. */
const STALE_WORK_FILE_MS = 3600_000;

/** `unchanged`: already in the wanted state, or gone; `conflict`: a concurrent change won. */
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

/** Starts the writeback of the work file as it grows, so putFile's fsync finds little left (storage/content/writeback.ts). */
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

/** What else a switch commits in its transaction (a job counts the file there, so a kill cannot lose the count). */
export type OnSwitched = (tx: Kysely<Database>) => Promise<void>;

/** Encrypts file `fileId`'s plaintext with `dataKey`, if it sits in a folder of `folderKeyId` (null: FileEncrypt's own key). */
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

    // A random name: encrypted content's key must not repeat the plaintext's hash.
    const key = store.newKey(randomBytes(32).toString('hex'));
    const now = services.now();
    await queueRemoval(db, key, now, new Date(now.getTime() + WRITE_INTENT_GRACE_MS));
    await store.putFile(key, work);
    try {
      await db.transaction().execute(async (tx) => {
        // The account's row lock: a decryption of the folder committed meanwhile is seen by the switch (PostgreSQL).
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

/** Makes file `fileId` plaintext again if encrypted with `keyId` in a plain folder; stored once per hash. */
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
        // PostgreSQL: plaintext content found may be removed before it is referenced; decide again (uploads.ts).
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

  // Plaintext content with this hash exists: the file joins it. Both transactions take the account's row lock, as encryptFile.
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

/** The plaintext of encrypted content (all, or one range, decrypting only the chunks it covers); rejects for another key. */
export async function openDecryptedContent(services: Services, contentId: number, keys: { readonly keyId: number; readonly dataKey: Buffer }, range?: PlainRange): Promise<Readable> {
  const content = await findContentForCrypt(services.db, contentId);
  if (!content?.layout || content.layout.keyId !== keys.keyId) throw new Error(`content ${contentId} is not encrypted with key ${keys.keyId}`);
  const store = contentStoreFor(services.config);
  return openDecrypted((cipherRange) => store.read(content.storageKey, cipherRange), keys.dataKey, cipherLayoutOf(content.layout), range);
}

/** The cipher of an upload encrypted as it arrives (storage/content/encrypted-uploads.ts), with its folder's data key. */
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
  const names = await unlessMissing(fs.readdir(dir), []);
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
