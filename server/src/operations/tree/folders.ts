/**
 * Changes to the tree: FolderAdd, FolderRename, FileRename, Move. A taken name is refused with 409, never
 * renamed silently (only FileAdd makes a name unique); nesting past maxFolderDepth is 413.
 */
import type { Kysely } from 'kysely';
import {
  adjustFolderSizes,
  findTakenNames,
  folderChain,
  folderDepth,
  insertFolder,
  liveSubtreeHeights,
  lockAccountTree,
  moveItems,
  renameFile,
  renameFolder,
  type FileRecord,
  type FolderRecord,
} from '../../storage/db/repositories/items-repository';
import type { Database } from '../../storage/db/schema';
import type { AuthenticatedContext, Empty, ItemResult, ParamsOf } from '../context';
import { applyEncryptionToMove, encryptionOfNewFolder, withTip } from '../encryption/encryption';
import { kickEncryptionJobs } from '../encryption/encryption-jobs';
import { conflict, tooLarge } from '../errors';
import { inTreeTransaction } from './file-records';
import { parseIdLists, requireFile, requireFolder, requireParent, requireSelectionAndDestination } from './id-lists';
import { extensionOf, nameKey, storedName, validName } from './names';

/** 409 when `name` is taken in the folder (by a folder or a file), saying by what. */
async function refuseTakenName(tx: Kysely<Database>, accountId: number, folderId: number, name: string): Promise<void> {
  const [taken] = await findTakenNames(tx, accountId, folderId, [nameKey(name)]);
  if (taken) throw conflict('name-taken', `a ${taken.kind} named "${taken.name}" already exists in this folder`);
}

/** The 413 of a folder that would lie deeper than `maxDepth` (docs/protocol.md §7). */
export function tooDeep(maxDepth: number, what: string) {
  return tooLarge('too-deep', `${what}: folders nest at most ${maxDepth} levels deep`);
}

export async function folderAdd(ctx: AuthenticatedContext, params: ParamsOf<'FolderAdd'>): Promise<ItemResult> {
  const accountId = ctx.caller.uid;
  const { db, config, now } = ctx.services;
  const name = validName(params.name, config.limits.maxNameLength);
  const { maxFolderDepth } = config.limits;
  return inTreeTransaction(db, async (tx) => {
    await lockAccountTree(tx, accountId);
    const parentId = await requireParent(tx, accountId, params.dirid);
    await refuseTakenName(tx, accountId, parentId, name);
    if ((await folderDepth(tx, accountId, parentId, maxFolderDepth)) >= maxFolderDepth) {
      throw tooDeep(maxFolderDepth, 'no folder can be added here');
    }
    const folder = await insertFolder(tx, { accountId, parentId, name: storedName(name), at: now() });
    // Inside an encrypted folder it is encrypted too (423 when that folder is locked).
    const encryption = await encryptionOfNewFolder(tx, ctx.caller, { id: folder.id, parentId });
    return { kind: 'item', item: { ...folder, ...encryption } };
  });
}

export function folderRename(ctx: AuthenticatedContext, params: ParamsOf<'FolderRename'>): Promise<ItemResult> {
  return renameItem(ctx, 'folder', params.dirid, params.newname);
}

export function fileRename(ctx: AuthenticatedContext, params: ParamsOf<'FileRename'>): Promise<ItemResult> {
  return renameItem(ctx, 'file', params.fid, params.newname);
}

async function renameItem(ctx: AuthenticatedContext, kind: 'folder' | 'file', id: bigint, newname: string | null): Promise<ItemResult> {
  const accountId = ctx.caller.uid;
  const { db, config, now } = ctx.services;
  const name = validName(newname, config.limits.maxNameLength, 'newname');
  return inTreeTransaction(db, async (tx) => {
    await lockAccountTree(tx, accountId);
    const item = kind === 'folder' ? await requireFolder(tx, accountId, id) : await requireFile(tx, accountId, id);
    // The same name again changes nothing, not even the time.
    if (item.name === name) return { kind: 'item', item: await withTip(tx, accountId, item) };
    if (nameKey(name) !== nameKey(item.name)) await refuseTakenName(tx, accountId, item.dir, name);
    // A file's extension follows its name: "a.txt" renamed "a.md" is a .md file.
    const renamed =
      kind === 'folder'
        ? await renameFolder(tx, accountId, item.id, storedName(name), now())
        : await renameFile(tx, accountId, item.id, storedName(name), extensionOf(name), now());
    return { kind: 'item', item: await withTip(tx, accountId, renamed!) };
  });
}

type Moving = { readonly kind: 'folder'; readonly record: FolderRecord } | { readonly kind: 'file'; readonly record: FileRecord };

const parentOf = (item: Moving) => item.record.dir;

/** 409 when two moving items share a name, or one's name is taken in the destination. Nothing moves. */
async function refuseNameClashes(tx: Kysely<Database>, accountId: number, destination: number, moving: readonly Moving[]): Promise<void> {
  const byKey = new Map<string, Moving>();
  for (const item of moving) {
    const key = nameKey(item.record.name);
    const other = byKey.get(key);
    if (other) throw conflict('names-collide', `two of the items to move are named "${other.record.name}" and "${item.record.name}"`);
    byKey.set(key, item);
  }
  const [taken] = await findTakenNames(tx, accountId, destination, [...byKey.keys()]);
  if (taken) {
    const item = byKey.get(taken.key)!;
    throw conflict('name-taken', `"${item.record.name}" cannot be moved: a ${taken.kind} named "${taken.name}" already exists in the destination`);
  }
}

/**
 * Each moved item's size leaves its old parent and joins the destination; adjustFolderSizes carries both
 * up along the new shape, which also makes a folder moved together with something inside it come out right.
 */
function sizeChanges(moving: readonly Moving[], destination: number): Map<number, number> {
  const deltas = new Map<number, number>();
  const add = (folderId: number, delta: number) => deltas.set(folderId, (deltas.get(folderId) ?? 0) + delta);
  for (const item of moving) {
    add(parentOf(item), -item.record.size);
    add(destination, item.record.size);
  }
  return deltas;
}

/** 413 when a moving folder's subtree would pass the limit; each is walked down only as far as the room left. */
async function refuseTooDeep(
  tx: Kysely<Database>,
  accountId: number,
  moving: readonly Moving[],
  destinationDepth: number,
  maxDepth: number,
): Promise<void> {
  const folders = moving.filter((item) => item.kind === 'folder');
  if (folders.length === 0) return;
  // Levels a moving folder may have beneath it: it lies at destinationDepth + 1 itself.
  const room = maxDepth - destinationDepth - 1;
  let offender: Moving | undefined;
  if (room < 0) offender = folders[0];
  else {
    const heights = await liveSubtreeHeights(tx, accountId, folders.map((item) => item.record.id), room);
    offender = folders.find((item) => (heights.get(item.record.id) ?? 0) > room);
  }
  if (offender) throw tooDeep(maxDepth, `"${offender.record.name}" cannot be moved there`);
}

/** Moves folders and files into `todir`, all or nothing (404, 409 for a cycle or a taken name, 413); times are kept. */
export async function move(ctx: AuthenticatedContext, params: ParamsOf<'Move'>): Promise<Empty> {
  const accountId = ctx.caller.uid;
  const { db, config } = ctx.services;
  const { folderIds, fileIds } = parseIdLists(params.dirids, params.fids, config.limits.maxIdsPerList);
  let encrypting = false;
  await inTreeTransaction(db, async (tx) => {
    // Taken first: on PostgreSQL two concurrent moves could otherwise make a cycle.
    await lockAccountTree(tx, accountId);
    const { destination, folders, files } = await requireSelectionAndDestination(tx, accountId, { folderIds, fileIds }, params.todir);

    // The destination's chain: the cycle check, and how deep the moving folders would lie.
    let destinationDepth = 0;
    if (destination !== 0 && folderIds.length > 0) {
      const moved = new Set(folderIds);
      const chain = await folderChain(tx, accountId, destination);
      if (chain.some((link) => moved.has(link.id))) throw conflict('into-itself', 'cannot move a folder into itself or its own subfolder');
      destinationDepth = chain.length;
    }

    const moving: Moving[] = [
      ...folderIds.map((id): Moving => ({ kind: 'folder', record: folders.get(id)! })),
      ...fileIds.map((id): Moving => ({ kind: 'file', record: files.get(id)! })),
    ].filter((item) => parentOf(item) !== destination);
    if (moving.length === 0) return;

    await refuseNameClashes(tx, accountId, destination, moving);
    await refuseTooDeep(tx, accountId, moving, destinationDepth, config.limits.maxFolderDepth);
    const idsOf = (kind: Moving['kind']) => moving.filter((item) => item.kind === kind).map((item) => item.record.id);
    await moveItems(tx, accountId, 'folders', idsOf('folder'), destination);
    await moveItems(tx, accountId, 'files', idsOf('file'), destination);
    await adjustFolderSizes(tx, accountId, sizeChanges(moving, destination));
    // Out of or into a locked folder: 423; into an encrypted one: encrypted with it.
    encrypting = await applyEncryptionToMove(tx, ctx.services, ctx.caller, {
      destination,
      sourceFolders: moving.map(parentOf),
      folderIds: idsOf('folder'),
    });
  });
  if (encrypting) kickEncryptionJobs(ctx.services);
  return { kind: 'empty' };
}
