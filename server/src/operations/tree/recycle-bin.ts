/**
 * The recycle bin (DECISIONS.md §8): FolderAndFileDelete, FolderDelete, FolderAndFileRestore,
 * RecycleEmpty (ext), and the retention sweep that housekeeping runs.
 *
 * - To the bin (is_real=0): the items given become entries of the bin (deleted_at, deleted_from);
 *   everything live beneath a given folder goes with it (binned_under), and disappears from
 *   listings, search, shares and links at once (their readers check liveness). An item given
 *   together with a folder it lies in gets its own entry. The bin counts against the quota.
 * - For good (is_real=1, RecycleEmpty, the sweep): the items with everything beneath them, their
 *   shares and links; the files' bytes are given back; content no file references any more is
 *   removed from storage after the commit (content-removal.ts). Entries of the bin that were
 *   deleted directly from beneath a folder earlier are entries of their own: deleting the folder
 *   for good leaves them in the bin (with their own retention), and restoring them then takes them
 *   to the root ("if that folder is gone").
 * - Restore: each entry goes back to its parent folder, matched by id, if that folder is live (or
 *   comes back in the same call); else to the root. A folder whose subtree would reach deeper than
 *   the depth limit there (its old parent was moved deeper meanwhile) goes to the root too. A name
 *   taken there gets " (restored)", " (restored 2)", … before the extension.
 *
 * Every batch is checked first, one query per table, and is all-or-nothing; each operation is one
 * transaction (inTreeTransaction), so a crash leaves the database before or after it. RecycleEmpty
 * excepted: it deletes in steps of their own (emptyBin), each of which leaves a smaller bin.
 *
 * Folder sizes: a folder's size is the total of the live files beneath it; a folder in the bin
 * keeps the size of what comes back with it. Deltas go to adjustFolderSizes once the tree has its
 * final shape; its walk up follows parent ids whatever the state, so a delta at a folder in the
 * bin reaches the live folders above it.
 */
import type { Kysely } from 'kysely';
import { createLogger } from '../../log';
import { adjustFolderSizes, findLiveFiles, findLiveFolders, folderDepths, lockAccountTree } from '../../storage/db/repositories/items-repository';
import { folderPaths } from '../../storage/db/repositories/folder-paths';
import { RowsForTime, TimeSlices, whenWalCaughtUp } from '../../storage/db/engine/batches';
import {
  binnedFolderLevels,
  binnedLevels,
  binSubtrees,
  countBinnedUnder,
  deleteItems,
  deleteSubtrees,
  emptiedBinnedFolders,
  emptiedFolderEntries,
  fileEntriesStill,
  filesBinnedUnder,
  findBinEntries,
  findExpiredEntries,
  findItemStates,
  folderEntriesStill,
  type BinEntries,
  findLiveKeys,
  findLiveKeysContaining,
  markDeleted,
  markRestored,
  nearestAmong,
  releaseUsedBytes,
  unbinSubtrees,
  type ExpiredEntry,
  type ItemStatus,
  type RestoredEntry,
} from '../../storage/db/repositories/recycle-bin-repository';
import type { Database } from '../../storage/db/schema';
import { removeUnreferencedContent } from '../content/content-removal';
import type { AuthenticatedContext, Empty, FileItem, FolderItem, Listing, ParamsOf, Services } from '../context';
import { withTip } from '../encryption/encryption';
import { conflict, invalidArgument, notFound } from '../errors';
import { inTreeTransaction } from './file-records';
import { tooDeep } from './folders';
import { parseIdList, parseIdLists, requireFiles, requireFolders, type IdLists } from './id-lists';
import { nameKey, nameLength, storedName, withSuffix } from './names';

const DAY_MS = 86_400_000;

/** What a restored item whose name is taken is called: "report (restored).pdf", then " (restored 2)", … */
export const RESTORED_SUFFIX = ' (restored)';
const restoredSuffix = (n: number) => (n === 1 ? RESTORED_SUFFIX : ` (restored ${n})`);
/** What every suffixed name's key contains: the suffix without its closing parenthesis or number. */
const RESTORED_FRAGMENT = ' (restored';

/** A permanent delete answers once content removal is done, or after this long (it then goes on behind). */
const CONTENT_REMOVAL_WAIT_MS = 2_000;

/**
 * RecycleEmpty's steps (emptyBin): each a transaction of its own, sized to last about this long, so
 * that other calls' writes, which take turns on SQLite's one writer, wait no longer than a step.
 */
const EMPTY_STEP_TARGET_MS = 50;
/** The rows of a step, at most and at first; the folder entries taken on together (one id list). */
const EMPTY_STEP_MOST_ROWS = 1_000;
const EMPTY_STEP_FIRST_ROWS = 100;
const EMPTY_ENTRIES_PER_ROUND = 1_000;

/** The retention sweep: bin entries looked at per batch, and the rows one batch may delete (at least one entry). */
const SWEEP_ENTRIES_PER_BATCH = 100;
const SWEEP_ROWS_PER_BATCH = 10_000;
/** Work per sweep is bounded; what is left waits for the next run. */
const SWEEP_MAX_BATCHES = 100;

/** is_real: exactly 0 (to the bin) or 1 (for good). */
function isRealOf(value: number): boolean {
  if (value === 0) return false;
  if (value === 1) return true;
  throw invalidArgument('is_real must be 0 (to the recycle bin) or 1 (delete permanently)');
}

// ---- The operations -------------------------------------------------------------------------------

export async function folderAndFileDelete(ctx: AuthenticatedContext, params: ParamsOf<'FolderAndFileDelete'>): Promise<Empty> {
  const accountId = ctx.caller.uid;
  const forGood = isRealOf(params.is_real);
  const ids = parseIdLists(params.dirids, params.fids, ctx.services.config.limits.maxIdsPerList);
  await (forGood ? deleteForGood(ctx.services, accountId, ids) : moveToBin(ctx.services, accountId, ids));
  return { kind: 'empty' };
}

export async function folderDelete(ctx: AuthenticatedContext, params: ParamsOf<'FolderDelete'>): Promise<Empty> {
  const accountId = ctx.caller.uid;
  const forGood = isRealOf(params.is_real);
  const folderIds = parseIdList(params.dirids, 'dirids', ctx.services.config.limits.maxIdsPerList);
  if (folderIds.length === 0) throw invalidArgument('dirids is empty: name at least one folder');
  const ids: IdLists = { folderIds, fileIds: [] };
  await (forGood ? deleteForGood(ctx.services, accountId, ids) : moveToBin(ctx.services, accountId, ids));
  return { kind: 'empty' };
}

export async function folderAndFileRestore(ctx: AuthenticatedContext, params: ParamsOf<'FolderAndFileRestore'>): Promise<Listing> {
  const accountId = ctx.caller.uid;
  const ids = parseIdLists(params.dirids, params.fids, ctx.services.config.limits.maxIdsPerList);
  const restored = await restoreItems(ctx.services, accountId, ids);
  return { kind: 'listing', count: restored.folders.length + restored.files.length, ...restored };
}

export async function recycleEmpty(ctx: AuthenticatedContext, _params: ParamsOf<'RecycleEmpty'>): Promise<Empty> {
  await emptyBin(ctx.services, ctx.caller.uid);
  return { kind: 'empty' };
}

// ---- To the bin -----------------------------------------------------------------------------------

type Given = { readonly kind: 'folder' | 'file'; readonly id: number; readonly parentId: number; readonly size: number };

/**
 * The size changes of taking the given live items to the bin. Each item takes its size away from
 * its parent and every ancestor; an item that lies beneath another given folder Y stops there: it
 * gives its size back at Y's parent, because Y's own delta (its size, which included the item's)
 * already takes it from everything above Y. Y's kept size thereby loses the item, which has an
 * entry of its own: a restore of Y alone brings back only what is still in it.
 */
function removalDeltas(items: readonly Given[], nearest: ReadonlyMap<number, number>, parentOfFolder: ReadonlyMap<number, number>): Map<number, number> {
  const deltas = new Map<number, number>();
  const add = (folderId: number, delta: number) => deltas.set(folderId, (deltas.get(folderId) ?? 0) + delta);
  for (const item of items) {
    add(item.parentId, -item.size);
    const holder = nearest.get(item.parentId);
    if (holder !== undefined) add(parentOfFolder.get(holder)!, item.size);
  }
  return deltas;
}

/** Moves the caller's live items, with their subtrees, to the bin: all or nothing (404 for any other id). */
export async function moveToBin(services: Services, accountId: number, ids: IdLists): Promise<void> {
  const { db, now } = services;
  await inTreeTransaction(db, async (tx) => {
    await lockAccountTree(tx, accountId);
    const folders = await requireFolders(tx, accountId, ids.folderIds);
    const files = await requireFiles(tx, accountId, ids.fileIds);
    const given: Given[] = [
      ...[...folders.values()].map((f): Given => ({ kind: 'folder', id: f.id, parentId: f.dir, size: f.size })),
      ...[...files.values()].map((f): Given => ({ kind: 'file', id: f.id, parentId: f.dir, size: f.size })),
    ];
    const parents = [...new Set(given.map((item) => item.parentId))];
    const nearest = await nearestAmong(tx, accountId, parents, ids.folderIds);
    const paths = await folderPaths(tx, accountId, parents);
    const from = (item: Given) => paths.get(item.parentId) || '/';
    const entries = (kind: Given['kind']) => given.filter((item) => item.kind === kind).map((item) => ({ id: item.id, from: from(item) }));

    const at = now();
    await markDeleted(tx, accountId, 'folders', entries('folder'), at);
    await markDeleted(tx, accountId, 'files', entries('file'), at);
    await binSubtrees(tx, accountId, ids.folderIds);
    const parentOfFolder = new Map([...folders.values()].map((f) => [f.id, f.dir]));
    await adjustFolderSizes(tx, accountId, removalDeltas(given, nearest, parentOfFolder));
  });
}

// ---- For good -------------------------------------------------------------------------------------

/** 404 for an id that is not the caller's item; `allowed` says which states an operation accepts. */
function requireStates(kind: string, ids: readonly number[], found: readonly ItemStatus[], allowed: ReadonlySet<ItemStatus['state']>): Map<number, ItemStatus> {
  const byId = new Map(found.filter((item) => allowed.has(item.state)).map((item) => [item.id, item]));
  const missing = ids.find((id) => !byId.has(id));
  if (missing !== undefined) throw notFound(missing === 0 ? `${kind} not found` : `${kind} ${missing} not found`);
  return byId;
}

const LIVE_OR_ENTRY = new Set<ItemStatus['state']>(['live', 'deleted']);

/**
 * Deletes the caller's items for good, live or entries of the bin, with what is beneath them (but
 * not other entries of the bin: see the header); not items beneath a folder in the bin (404: they
 * are reached through that folder). All or nothing.
 */
export async function deleteForGood(services: Services, accountId: number, ids: IdLists): Promise<void> {
  await inTreeTransaction(services.db, async (tx) => {
    await lockAccountTree(tx, accountId);
    const folders = requireStates('folder', ids.folderIds, await findItemStates(tx, accountId, 'folders', ids.folderIds), LIVE_OR_ENTRY);
    const files = requireStates('file', ids.fileIds, await findItemStates(tx, accountId, 'files', ids.fileIds), LIVE_OR_ENTRY);

    // Only live items count in their ancestors' sizes (an entry's size left them when it was binned),
    // and only those not beneath another given folder (that one's size takes them along).
    const live: Given[] = [
      ...[...folders.values()].filter((f) => f.state === 'live').map((f): Given => ({ kind: 'folder', ...f })),
      ...[...files.values()].filter((f) => f.state === 'live').map((f): Given => ({ kind: 'file', ...f })),
    ];
    const nearest = await nearestAmong(tx, accountId, live.map((item) => item.parentId), ids.folderIds);
    const deltas = new Map<number, number>();
    for (const item of live) {
      if (!nearest.has(item.parentId)) deltas.set(item.parentId, (deltas.get(item.parentId) ?? 0) - item.size);
    }

    const { bytes } = await deleteSubtrees(tx, accountId, ids.folderIds, ids.fileIds, services.now());
    await releaseUsedBytes(tx, accountId, bytes);
    await adjustFolderSizes(tx, accountId, deltas);
  });
  await removeContentAfterCommit(services);
}

/**
 * Deletes for good everything that is in the caller's bin when the call comes (an empty bin is not
 * an error), in steps (deleteEntriesInSteps).
 */
export async function emptyBin(services: Services, accountId: number): Promise<void> {
  // What is in the bin now, not what comes into it while this runs.
  const before = services.now().getTime() + 1;
  const { rows } = await deleteEntriesInSteps(services, accountId, await findBinEntries(services.db, accountId, before), before);
  if (rows > 0) await removeContentAfterCommit(services);
}

/**
 * Deletes for good those of `entries` that are still entries of the account's bin deleted before
 * `before` (ms), with everything beneath them, in steps: each a transaction of its own, under the
 * account's lock, sized to last about EMPTY_STEP_TARGET_MS, after which the bin is a bin with fewer
 * items and every size and the used bytes are right. In one transaction, a bin of 100,000 items
 * held SQLite's one writer, and every other account's writes with it, for seconds (docs/design.md
 * §8, "Long work in slices").
 *
 * For each folder entry: the files binned under it (the sizes of the folders they were in made
 * smaller, up to the entry), then its folders, deepest first, each only once nothing binned is
 * left in it, then the entry itself; then the files deleted directly. A crash between two steps
 * leaves the rest in the bin, whole and restorable; a restore made meanwhile brings back what is
 * not deleted yet. Returns the entries and the rows deleted.
 */
async function deleteEntriesInSteps(services: Services, accountId: number, entries: BinEntries, before: number): Promise<{ entries: number; rows: number }> {
  const { db, now } = services;
  const sizes = new RowsForTime(EMPTY_STEP_TARGET_MS, EMPTY_STEP_MOST_ROWS, EMPTY_STEP_FIRST_ROWS);
  const slices = new TimeSlices();
  const deleted = { entries: 0, rows: 0 };
  /**
   * One step: what `work` deletes, with its bytes given back; the next step's size follows its time.
   * Then the event loop is given back, so that a write that came meanwhile takes the writer first.
   * Before it, SQLite's checkpoints catch up when they lag far behind (batches.ts whenWalCaughtUp).
   */
  const step = async (work: (tx: Kysely<Database>) => Promise<{ bytes: number; items: number }>): Promise<number> => {
    await whenWalCaughtUp(db);
    const began = performance.now();
    const { items } = await inTreeTransaction(db, async (tx) => {
      await lockAccountTree(tx, accountId);
      const done = await work(tx);
      await releaseUsedBytes(tx, accountId, done.bytes);
      return done;
    });
    sizes.took(items, performance.now() - began);
    deleted.rows += items;
    await slices.pause();
    return items;
  };
  /** `each` on `ids` a step's worth at a time; returns the items deleted. */
  const inSteps = async (ids: readonly number[], each: (tx: Kysely<Database>, chunk: readonly number[]) => Promise<{ bytes: number; items: number }>) => {
    let items = 0;
    for (let next = 0; next < ids.length; ) {
      const chunk = ids.slice(next, next + sizes.rows);
      next += chunk.length;
      items += await step((tx) => each(tx, chunk));
    }
    return items;
  };
  const noFiles = new Map<number, number>();

  for (let start = 0; start < entries.folderIds.length; start += EMPTY_ENTRIES_PER_ROUND) {
    const round = entries.folderIds.slice(start, start + EMPTY_ENTRIES_PER_ROUND);
    const filesOfRound = async (tx: Kysely<Database>) => {
      const roots = await folderEntriesStill(tx, accountId, round, before);
      const files = await filesBinnedUnder(tx, accountId, roots, sizes.rows);
      const deltas = new Map<number, number>();
      for (const file of files) deltas.set(file.folderId, (deltas.get(file.folderId) ?? 0) - file.size);
      await adjustFolderSizes(tx, accountId, deltas, new Set(roots));
      return deleteItems(tx, accountId, { folderIds: [], files: new Map(files.map((file) => [file.id, file.size])) }, now());
    };
    while ((await step(filesOfRound)) > 0);
    for (const level of await binnedFolderLevels(db, accountId, round)) {
      await inSteps(level, async (tx, chunk) => deleteItems(tx, accountId, { folderIds: await emptiedBinnedFolders(tx, accountId, chunk), files: noFiles }, now()));
    }
    deleted.entries += await inSteps(round, async (tx, chunk) => {
      const emptied = await emptiedFolderEntries(tx, accountId, await folderEntriesStill(tx, accountId, chunk, before));
      return deleteItems(tx, accountId, { folderIds: emptied, files: noFiles }, now());
    });
  }
  deleted.entries += await inSteps(entries.fileIds, async (tx, chunk) =>
    deleteItems(tx, accountId, { folderIds: [], files: await fileEntriesStill(tx, accountId, chunk, before) }, now()),
  );
  return deleted;
}

/**
 * Content that the deletion left unreferenced goes now rather than at the next housekeeping run.
 * The deletion is committed whatever happens here: a failure is logged and housekeeping retries;
 * a long removal (a huge folder) goes on behind the answer.
 */
async function removeContentAfterCommit(services: Services): Promise<void> {
  const removal = removeUnreferencedContent(services).then(
    () => undefined,
    (error: unknown) =>
      createLogger(services.config.log).error('content removal after a permanent delete failed', {
        error: error instanceof Error ? error.message : String(error),
      }),
  );
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, CONTENT_REMOVAL_WAIT_MS);
    timer.unref();
  });
  await Promise.race([removal, waited]);
  clearTimeout(timer);
}

// ---- Restore --------------------------------------------------------------------------------------

/** Restore looks at every state, to tell what is not in the bin (409) from what is not the caller's (404). */
const ANY_STATE = new Set<ItemStatus['state']>(['live', 'deleted', 'beneath']);

export interface RestoredItems {
  readonly folders: FolderItem[];
  readonly files: FileItem[];
}

type Restoring = { readonly kind: 'folder' | 'file'; readonly item: ItemStatus; destination: number; name: string };

/**
 * Restores entries of the caller's bin (see the header for where each goes), all or nothing: an id
 * that is not the caller's item is 404; a live item or one beneath a folder in the bin is 409.
 * Returns the restored items where they went, with their paths.
 */
export async function restoreItems(services: Services, accountId: number, ids: IdLists): Promise<RestoredItems> {
  const { db, config } = services;
  // Each step is bounded by the 1,000 ids of a call, but 1,000 entries 256 deep made them some
  // 100 ms in one step of the event loop: it is given back between steps (one transaction as before).
  const slices = new TimeSlices();
  return inTreeTransaction(db, async (tx) => {
    await lockAccountTree(tx, accountId);
    const folders = requireStates('folder', ids.folderIds, await findItemStates(tx, accountId, 'folders', ids.folderIds), ANY_STATE);
    const files = requireStates('file', ids.fileIds, await findItemStates(tx, accountId, 'files', ids.fileIds), ANY_STATE);
    await slices.pauseIfDue();
    const restoring: Restoring[] = [
      ...ids.folderIds.map((id): Restoring => ({ kind: 'folder', item: folders.get(id)!, destination: 0, name: '' })),
      ...ids.fileIds.map((id): Restoring => ({ kind: 'file', item: files.get(id)!, destination: 0, name: '' })),
    ];
    for (const { kind, item } of restoring) {
      if (item.state === 'live') throw conflict(`${kind} ${item.id} is not in the recycle bin`);
      if (item.state === 'beneath') {
        throw conflict(`${kind} ${item.id} is not in the recycle bin itself: it is inside a deleted folder; restore that folder`);
      }
    }

    // A parent is there to go back to if it is live, or comes back in this call (an entry restored
    // here, or beneath one); else (gone for good, or in the bin) the item goes to the root.
    const restoredFolders = new Set(ids.folderIds);
    const parentIds = [...new Set(restoring.map(({ item }) => item.parentId).filter((id) => id !== 0))];
    const parents = new Map((await findItemStates(tx, accountId, 'folders', parentIds)).map((p) => [p.id, p]));
    const comesBack = (parent: ItemStatus | undefined) =>
      parent !== undefined &&
      (parent.state === 'live' ||
        (parent.state === 'deleted' && restoredFolders.has(parent.id)) ||
        (parent.state === 'beneath' && restoredFolders.has(parent.binnedUnder!)));
    for (const entry of restoring) entry.destination = comesBack(parents.get(entry.item.parentId)) ? entry.item.parentId : 0;
    await slices.pauseIfDue();
    await keepWithinDepthLimit(tx, accountId, restoring, parents, config.limits.maxFolderDepth);
    await slices.pauseIfDue();

    // Subtrees first: their names then count as taken in the folders they come back with.
    await unbinSubtrees(tx, accountId, ids.folderIds);
    await slices.pauseIfDue();
    await chooseNames(tx, config.limits.maxNameLength, accountId, restoring, slices);
    await slices.pauseIfDue();

    const restoredEntry = (entry: Restoring): RestoredEntry => {
      const stored = storedName(entry.name);
      return { id: entry.item.id, parentId: entry.destination, name: stored.name, key: stored.key, sortKey: stored.sortKey };
    };
    await markRestored(tx, accountId, 'folders', restoring.filter((e) => e.kind === 'folder').map(restoredEntry));
    await markRestored(tx, accountId, 'files', restoring.filter((e) => e.kind === 'file').map(restoredEntry));
    await slices.pauseIfDue();
    const deltas = new Map<number, number>();
    for (const { destination, item } of restoring) deltas.set(destination, (deltas.get(destination) ?? 0) + item.size);
    await adjustFolderSizes(tx, accountId, deltas);
    await slices.pauseIfDue();

    const paths = await folderPaths(tx, accountId, restoring.map((entry) => entry.destination));
    const pathOf = (dir: number, name: string) => `${paths.get(dir) ?? ''}/${name}`;
    const liveFolders = new Map((await findLiveFolders(tx, accountId, ids.folderIds)).map((f) => [f.id, f]));
    const liveFiles = new Map((await findLiveFiles(tx, accountId, ids.fileIds)).map((f) => [f.id, f]));
    await slices.pauseIfDue();
    // An encrypted item is answered with its tip (withTip: two reads per encrypted item, none for the others).
    const restoredFolderItems: FolderItem[] = [];
    for (const id of ids.folderIds) {
      const folder = await withTip(tx, accountId, liveFolders.get(id)!);
      restoredFolderItems.push({ ...folder, path: pathOf(folder.dir, folder.name) });
    }
    const restoredFileItems: FileItem[] = [];
    for (const id of ids.fileIds) {
      const file = await withTip(tx, accountId, liveFiles.get(id)!);
      restoredFileItems.push({ ...file, path: pathOf(file.dir, file.name) });
    }
    return { folders: restoredFolderItems, files: restoredFileItems };
  });
}

/**
 * Sends to the root every folder entry whose subtree would reach deeper than `maxDepth` where it
 * was to go (its old parent was moved deeper while it was in the bin), and refuses with 413 one
 * that does not fit even there (the limit was lowered since it was deleted). A folder lands at its
 * destination's depth + 1, a destination being live (its depth now), an entry restored in this
 * call, or a folder beneath one (that entry's depth + its level in it): entries are placed
 * outermost first, so that an entry sent to the root takes the entries restored into it along.
 */
async function keepWithinDepthLimit(
  tx: Kysely<Database>,
  accountId: number,
  restoring: readonly Restoring[],
  parents: ReadonlyMap<number, ItemStatus>,
  maxDepth: number,
): Promise<void> {
  const folderEntries = new Map(restoring.filter((entry) => entry.kind === 'folder').map((entry) => [entry.item.id, entry]));
  if (folderEntries.size === 0) return;
  const destinations = [...new Set([...folderEntries.values()].map((entry) => entry.destination))].filter((id) => id !== 0);
  const stateOf = (folderId: number) => parents.get(folderId)!;
  const liveDepths = await folderDepths(tx, accountId, destinations.filter((id) => stateOf(id).state === 'live'));
  const beneath = destinations.filter((id) => stateOf(id).state === 'beneath');
  // A subtree taller than maxDepth - 1 fits nowhere: walking further would tell nothing more.
  const { heights, levels } = await binnedLevels(tx, accountId, [...folderEntries.keys()], maxDepth - 1, beneath);

  const placed = new Map<number, number>();
  const depthOfFolder = (folderId: number): number => {
    if (folderId === 0) return 0;
    const parent = stateOf(folderId);
    if (parent.state === 'live') return liveDepths.get(folderId) ?? Number.POSITIVE_INFINITY;
    if (parent.state === 'deleted') return place(folderEntries.get(folderId)!);
    return place(folderEntries.get(parent.binnedUnder!)!) + (levels.get(folderId) ?? Number.POSITIVE_INFINITY);
  };
  const place = (entry: Restoring): number => {
    const known = placed.get(entry.item.id);
    if (known !== undefined) return known;
    const height = heights.get(entry.item.id) ?? 0;
    let depth = depthOfFolder(entry.destination) + 1;
    if (depth + height > maxDepth) {
      entry.destination = 0;
      depth = 1;
      if (depth + height > maxDepth) throw tooDeep(maxDepth, `folder ${entry.item.id} cannot be restored, not even to the root`);
    }
    placed.set(entry.item.id, depth);
    return depth;
  };
  for (const entry of folderEntries.values()) place(entry);
}

/**
 * Gives each restored item its name in its destination: its own, or the first free suffixed form
 * when a live item there (or one restored before it in this call) has it. Live names are read in
 * one query; the suffixed names already used, only for the destinations where a suffix is needed.
 */
async function chooseNames(tx: Kysely<Database>, maxNameLength: number, accountId: number, restoring: Restoring[], slices: TimeSlices): Promise<void> {
  const destinations = [...new Set(restoring.map((entry) => entry.destination))];
  const taken = new Map<number, Set<string>>(destinations.map((id) => [id, new Set<string>()]));
  // Each entry's key, computed once (normalizing 1,000 names of 255 characters is not free).
  const keyOf = new Map(restoring.map((entry) => [entry, nameKey(entry.item.name)]));
  const liveKeys = await findLiveKeys(tx, accountId, destinations, [...new Set(keyOf.values())]);
  for (const { folderId, key } of liveKeys) taken.get(folderId)!.add(key);
  await slices.pauseIfDue();

  // Where a suffix may be needed: a name is taken, or two restored items share one.
  const crowded = new Set<number>();
  const wanted = new Map<number, Set<string>>(destinations.map((id) => [id, new Set<string>()]));
  for (const entry of restoring) {
    const key = keyOf.get(entry)!;
    const { destination } = entry;
    if (taken.get(destination)!.has(key) || wanted.get(destination)!.has(key)) crowded.add(destination);
    wanted.get(destination)!.add(key);
  }
  if (crowded.size > 0) {
    const suffixed = await findLiveKeysContaining(tx, accountId, [...crowded], RESTORED_FRAGMENT);
    for (const { folderId, key } of suffixed) taken.get(folderId)!.add(key);
    await slices.pauseIfDue();
  }

  for (const entry of restoring) {
    const used = taken.get(entry.destination)!;
    const isFile = entry.kind === 'file';
    let name = entry.item.name;
    let key = keyOf.get(entry)!;
    for (let n = 1; used.has(key); n++) {
      name = withSuffix(entry.item.name, restoredSuffix(n), isFile);
      key = nameKey(name);
    }
    if (nameLength(name) > maxNameLength) {
      throw conflict(`"${entry.item.name}" is taken where it would be restored, and "${name}" would be longer than ${maxNameLength} characters`);
    }
    used.add(key);
    entry.name = name;
  }
}

// ---- The retention sweep --------------------------------------------------------------------------

export interface SweepReport {
  /** Entries of the bin deleted for good. */
  readonly purged: number;
}

/**
 * Housekeeping: deletes for good the entries of every account's bin deleted more than
 * config.recycleRetentionDays ago, with their subtrees. In bounded batches: each batch takes one
 * account's oldest entries up to about SWEEP_ROWS_PER_BATCH rows beneath them (a single entry
 * bigger than that goes alone), deleted in steps (deleteEntriesInSteps). Idempotent and safe on
 * several instances at once: each step takes the account's lock and deletes only what is, at that
 * moment, still an expired entry. Content is left to content removal, which housekeeping runs next.
 */
export async function purgeExpiredBinItems(services: Services): Promise<SweepReport> {
  let purged = 0;
  for (let batch = 0; batch < SWEEP_MAX_BATCHES; batch++) {
    const cutoff = new Date(services.now().getTime() - services.config.recycleRetentionDays * DAY_MS);
    const candidates = await findExpiredEntries(services.db, cutoff, SWEEP_ENTRIES_PER_BATCH);
    if (candidates.length === 0) break;
    const weights = await countBinnedUnder(services.db, candidates.filter((e) => e.table === 'folders').map((e) => e.id));
    const taken: ExpiredEntry[] = [];
    let rows = 0;
    for (const entry of candidates) {
      const weight = 1 + (entry.table === 'folders' ? (weights.get(entry.id) ?? 0) : 0);
      if (taken.length > 0 && rows + weight > SWEEP_ROWS_PER_BATCH) break;
      taken.push(entry);
      rows += weight;
    }
    for (const accountId of new Set(taken.map((entry) => entry.accountId))) {
      const mine = taken.filter((entry) => entry.accountId === accountId);
      purged += await purgeEntries(services, accountId, mine, cutoff);
    }
    if (candidates.length < SWEEP_ENTRIES_PER_BATCH && taken.length === candidates.length) break;
  }
  return { purged };
}

/**
 * Deletes for good those of `entries` that are still entries of the account's bin deleted before
 * `cutoff`, in steps (deleteEntriesInSteps): an entry of 100,000 items does not hold the writer for
 * seconds either. Returns the entries deleted.
 */
async function purgeEntries(services: Services, accountId: number, entries: readonly ExpiredEntry[], cutoff: Date): Promise<number> {
  const idsOf = (table: ExpiredEntry['table']) => entries.filter((entry) => entry.table === table).map((entry) => entry.id);
  const deleted = await deleteEntriesInSteps(services, accountId, { folderIds: idsOf('folders'), fileIds: idsOf('files') }, cutoff.getTime());
  return deleted.entries;
}
