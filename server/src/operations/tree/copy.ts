/**
 * Copy (docs/protocol.md §10.8): folders with their live subtrees and files, into a folder, in one transaction.
 * A file copy is a new record referring to the same content (no bytes are copied); the quota counts it in full,
 * as it counts every file. Encrypted items and encrypted destinations are refused (423): a copy would need the
 * key of both sides, and plaintext copies of encrypted files would defeat the encryption.
 */
import type { Kysely } from 'kysely';
import {
  copyFileRun,
  insertFileCopies,
  insertFolderCopies,
  readFileRuns,
  readSubtreeFolders,
  type FileCopy,
  type FolderCopy,
  type SubtreeFolder,
} from '../../storage/db/repositories/copy-repository';
import { adjustFolderSizes, folderChain, lockAccountTree, reserveQuota, type ItemName } from '../../storage/db/repositories/items-repository';
import type { Database } from '../../storage/db/schema';
import type { AuthenticatedContext, Empty, ParamsOf, Services } from '../context';
import { conflict, locked, tooLarge } from '../errors';
import { freeName, inTreeTransaction } from './file-records';
import { tooDeep } from './folders';
import { parseIdLists, requireSelectionAndDestination } from './id-lists';
import { nameKey, storedName } from './names';
import { TimeSlices } from '../../time-slices';

/**
 * The names the copied top-level items get in the destination: their own, or the first free numbered form, as
 * FileAdd does. One query per top-level item (bounded by maxIdsPerList); names given earlier in the call count.
 */
async function freeTopLevelNames(
  tx: Kysely<Database>,
  services: Services,
  accountId: number,
  destination: number,
  items: readonly { readonly name: string; readonly isFile: boolean }[],
): Promise<ItemName[]> {
  const given = new Set<string>();
  const names: ItemName[] = [];
  for (const item of items) {
    const free = await freeName(tx, services, accountId, destination, item.name, item.isFile, given);
    given.add(nameKey(free));
    names.push(storedName(free));
  }
  return names;
}

/** Copies folders (with everything live in them) and files into `todir`, all or nothing (404, 409, 413, 423). */
export async function copy(ctx: AuthenticatedContext, params: ParamsOf<'Copy'>): Promise<Empty> {
  const accountId = ctx.caller.uid;
  const { db, config } = ctx.services;
  const { maxCopyItems, maxFolderDepth } = config.limits;
  const { folderIds, fileIds } = parseIdLists(params.dirids, params.fids, config.limits.maxIdsPerList);
  await inTreeTransaction(db, async (tx) => {
    await lockAccountTree(tx, accountId);
    const { destination, folders, files } = await requireSelectionAndDestination(tx, accountId, { folderIds, fileIds }, params.todir);

    let destinationDepth = 0;
    if (destination !== 0) {
      if (folders.get(destination)!.encrypted) throw locked('encrypted-excluded', 'cannot copy into an encrypted folder');
      const chain = await folderChain(tx, accountId, destination);
      const copied = new Set(folderIds);
      if (chain.some((link) => copied.has(link.id))) throw conflict('into-itself', 'cannot copy a folder into itself or its own subfolder');
      destinationDepth = chain.length;
    }

    // One more than the limit is read, so that "too many" is known without reading everything.
    const subtreeFolders = await readSubtreeFolders(tx, accountId, folderIds, maxCopyItems + 1);
    // Each statement is short, and the event loop is given back between them (the transaction holds the writer).
    const slices = new TimeSlices();
    const subtreeFiles = await readFileRuns(tx, accountId, subtreeFolders, maxCopyItems - subtreeFolders.length, () => slices.pauseIfDue());
    const count = subtreeFolders.length + subtreeFiles.reduce((sum, run) => sum + run.count, 0) + fileIds.length;
    if (count > maxCopyItems) throw tooLarge('too-many-items', `too many items to copy: at most ${maxCopyItems} folders and files in one copy`);
    if ([...subtreeFolders, ...subtreeFiles].some((item) => item.encrypted) || fileIds.some((id) => files.get(id)!.encrypted)) {
      throw locked('encrypted-excluded', 'encrypted folders and files cannot be copied');
    }
    const height = Math.max(-1, ...subtreeFolders.map((folder) => folder.level));
    if (destinationDepth + 1 + height > maxFolderDepth) throw tooDeep(maxFolderDepth, 'the folders cannot be copied there');

    const topFiles = fileIds.map((id) => files.get(id)!);
    const bytes = subtreeFiles.reduce((sum, run) => sum + run.bytes, 0) + topFiles.reduce((sum, file) => sum + file.size, 0);
    if (bytes > 0 && !(await reserveQuota(tx, accountId, bytes))) throw tooLarge('quota-exceeded', 'storage quota exceeded: the copies do not fit in the space left');

    const topNames = await freeTopLevelNames(tx, ctx.services, accountId, destination, [
      ...folderIds.map((id) => ({ name: folders.get(id)!.name, isFile: false })),
      ...topFiles.map((file) => ({ name: file.name, isFile: true })),
    ]);
    const at = ctx.services.now();

    // Folders level by level: a level's parents are the copies made by the level before. Keyed by root and old id,
    // since a folder selected together with a folder inside it is copied twice.
    const copyOf = new Map<string, number>();
    const slot = (root: number, id: number) => `${root}:${id}`;
    const byLevel = new Map<number, SubtreeFolder[]>();
    for (const folder of subtreeFolders) byLevel.set(folder.level, [...(byLevel.get(folder.level) ?? []), folder]);
    for (let level = 0; byLevel.has(level); level++) {
      const batch = byLevel.get(level)!;
      const rows = batch.map((folder): FolderCopy => ({
        parentId: level === 0 ? destination : copyOf.get(slot(folder.root, folder.parentId))!,
        name: level === 0 ? topNames[folderIds.indexOf(folder.id)] : { name: folder.name, key: folder.nameKey, sortKey: folder.sortKey },
        size: folder.size,
      }));
      const ids = await insertFolderCopies(tx, accountId, rows, at);
      batch.forEach((folder, index) => copyOf.set(slot(folder.root, folder.id), ids[index]));
    }

    for (const run of subtreeFiles) {
      await copyFileRun(tx, accountId, run, copyOf.get(slot(run.root, run.folderId))!, at);
      await slices.pauseIfDue();
    }
    const fileRows: FileCopy[] = topFiles.map((file, index) => ({
      folderId: destination,
      name: topNames[folderIds.length + index],
      ext: file.ext,
      size: file.size,
      sha256: file.hash,
      contentId: file.contentId,
    }));
    await insertFileCopies(tx, accountId, fileRows, at);
    // The copied folders carry their sizes already; the destination and its ancestors grow by everything copied.
    await adjustFolderSizes(tx, accountId, new Map([[destination, bytes]]));
    // The commit (some 30 ms for 100,000 files) in a turn of its own.
    if (subtreeFiles.length > 0) await slices.pause();
  });
  // The copies' names go to the search indexes in the background (operations/admin/search-indexing.ts).
  ctx.services.nudgeSearchIndexer?.();
  return { kind: 'empty' };
}
