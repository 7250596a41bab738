/** File records: what FileAdd writes once the content is in place (DECISIONS.md §6), and the transaction of every change to the tree. */
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../storage/db/engine/dialect';
import {
  adjustFolderSizes,
  findNumberedKeys,
  insertFile,
  lockAccountTree,
  reserveQuota,
} from '../../storage/db/repositories/items-repository';
import type { Database } from '../../storage/db/schema';
import type { FileItem, Services } from '../context';
import { conflict, invalidArgument, tooLarge } from '../errors';
import { requireParent } from './id-lists';
import { extensionOf, firstFreeName, nameLength, numberedNameKeys, storedName, validName } from './names';

/**
 * Runs one operation's changes to the tree in one transaction. The pre-checks of names make a
 * clash a clear 409 before anything is written; if another change takes the name in between,
 * the partial unique index refuses the row, and that too becomes a 409 (the whole transaction is
 * rolled back first, as PostgreSQL requires after a failed statement).
 */
export async function inTreeTransaction<T>(db: Kysely<Database>, work: (tx: Kysely<Database>) => Promise<T>): Promise<T> {
  try {
    return await db.transaction().execute(work);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('changed-meanwhile', 'the name was taken by another change at the same time; try again');
    throw error;
  }
}

/**
 * `name`, or its first free numbered form ("report (1).pdf") in the folder, `alsoTaken` counting as taken: the
 * colliding keys come from one query over both tables. 409 when the numbered form would be longer than names may be.
 */
export async function freeName(
  tx: Kysely<Database>,
  services: Services,
  accountId: number,
  folderId: number,
  name: string,
  isFile: boolean,
  alsoTaken: ReadonlySet<string> = new Set(),
): Promise<string> {
  const taken = await findNumberedKeys(tx, accountId, folderId, storedName(name).key, numberedNameKeys(name, isFile));
  for (const key of alsoTaken) taken.add(key);
  const free = firstFreeName(name, isFile, taken);
  const maxLength = services.config.limits.maxNameLength;
  if (nameLength(free) > maxLength) {
    throw conflict('numbered-name-too-long', `"${name}" is already taken here, and a numbered name would be longer than ${maxLength} characters`);
  }
  return free;
}

export interface NewFileRecord {
  /** The full file name including its extension, as the client sent it. */
  readonly name: string | null;
  /** Its extension as the client sent it: must agree with the name. */
  readonly ext: string | null;
  readonly size: bigint | number;
  /** 0 = the root. */
  readonly folderId: bigint | number;
  readonly sha256: string;
  /**
   * Claims the content the file's bytes are in (for a file in folder `folderId`) and returns its
   * id, and the key it is encrypted with (null: plaintext). Called inside the transaction once the
   * record's own checks (size, name, ext, folder, quota) have passed, so that a bad argument is
   * answered as such rather than as missing content.
   */
  readonly claimContent: (tx: Kysely<Database>, folderId: number) => Promise<{ readonly contentId: number; readonly keyId: number | null }>;
}

/** A byte size as a safe number: negative is 400; beyond 2^53 no account could hold it (413). */
function checkedSize(size: bigint | number): number {
  if (size < 0) throw invalidArgument('parameter-invalid', 'size may not be negative');
  const value = Number(size);
  if (!Number.isSafeInteger(value)) throw tooLarge('quota-exceeded', 'size is beyond any quota');
  return value;
}

/**
 * Creates the record of a file whose content is in place, inside the caller's transaction:
 * checks the size, the name and its ext, the folder (404 unless live and the account's) and the
 * quota (413), makes a taken name unique ("report (1).pdf"), inserts the row and adds the size to
 * every ancestor folder and to the account's used bytes.
 */
export async function addFileRecord(
  tx: Kysely<Database>,
  services: Services,
  accountId: number,
  input: NewFileRecord,
): Promise<FileItem> {
  const size = checkedSize(input.size);
  const name = validName(input.name, services.config.limits.maxNameLength);
  const ext = extensionOf(name);
  // Case is forgiven ("PDF" for "report.PDF"): what is stored is the lowercase form anyway.
  if ((input.ext ?? '').toLowerCase() !== ext) {
    throw invalidArgument('ext-mismatch', `ext does not agree with name: the extension of "${name}" is "${ext}"`);
  }
  // The account's row lock first, so that the parent read next cannot go to the bin before the
  // file is in it (on PostgreSQL; SQLite runs one writer at a time anyway).
  await lockAccountTree(tx, accountId);
  const folderId = await requireParent(tx, accountId, input.folderId);
  if (!(await reserveQuota(tx, accountId, size))) throw tooLarge('quota-exceeded', 'storage quota exceeded: the file does not fit in the space left');

  const content = await input.claimContent(tx, folderId);
  const unique = await freeName(tx, services, accountId, folderId, name, true);
  const file = await insertFile(tx, {
    accountId,
    folderId,
    name: storedName(unique),
    ext,
    size,
    sha256: input.sha256,
    contentId: content.contentId,
    keyId: content.keyId,
    at: services.now(),
  });
  await adjustFolderSizes(tx, accountId, new Map([[folderId, size]]));
  return file;
}
