/**
 * The recycle bin (docs/protocol.md §12, docs/design.md §10): delete to the bin or for good, restore, RecycleEmpty and
 * the retention sweep; each one all-or-nothing transaction, except emptying and the sweep, which go in whole steps.
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
  filesBinnedUnder,
  findBinEntries,
  findExpiredEntries,
  findItemStates,
  entriesStill,
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
import { conflict, invalidArgument } from '../errors';
import { inTreeTransaction } from './file-records';
import { tooDeep } from './folders';
import { parseIdLists, parseNonEmptyIdList, requireAll, requireFiles, requireFolders, type IdLists } from './id-lists';
import { nameKey, nameLength, storedName, withSuffix } from './names';

const DAY_MS = 86_400_000;

/** What a restored item whose name is taken is called: "report (restored).pdf", then " (restored 2)", … */
export const RESTORED_SUFFIX = ' (restored)';
const restoredSuffix = (n: number) => (n === 1 ? RESTORED_SUFFIX : ` (restored ${n})`);
/** What every suffixed name's key contains. */
const RESTORED_FRAGMENT = ' (restored';

/** A permanent delete answers once content removal is done, or after this long (it then goes on behind). */
const CONTENT_REMOVAL_WAIT_MS = 2_000;

/** RecycleEmpty's steps each last about this long, so other writes (SQLite has one writer) wait no longer. */
const EMPTY_STEP_TARGET_MS = 50;
/** A step's rows, at most and at first; folder entries are taken on in rounds of EMPTY_ENTRIES_PER_ROUND. */
const EMPTY_STEP_MOST_ROWS = 1_000;
const EMPTY_STEP_FIRST_ROWS = 100;
const EMPTY_ENTRIES_PER_ROUND = 1_000;

/** The retention sweep: entries looked at, and rows deleted (at least one entry), per batch. */
const SWEEP_ENTRIES_PER_BATCH = 100;
const SWEEP_ROWS_PER_BATCH = 10_000;
const SWEEP_MAX_BATCHES = 100;

function isRealOf(value: number): boolean {
  if (value === 0) return false;
  if (value === 1) return true;
  throw invalidArgument('parameter-invalid', 'is_real must be 0 (to the recycle bin) or 1 (delete permanently)');
}

export async function folderAndFileDelete(ctx: AuthenticatedContext, params: ParamsOf<'FolderAndFileDelete'>): Promise<Empty> {
  const forGood = isRealOf(params.is_real);
  return deleteSelection(ctx, forGood, parseIdLists(params.dirids, params.fids, ctx.services.config.limits.maxIdsPerList));
}

export async function folderDelete(ctx: AuthenticatedContext, params: ParamsOf<'FolderDelete'>): Promise<Empty> {
  const forGood = isRealOf(params.is_real);
  return deleteSelection(ctx, forGood, { folderIds: parseNonEmptyIdList(params.dirids, 'dirids', ctx.services.config.limits.maxIdsPerList), fileIds: [] });
}

async function deleteSelection(ctx: AuthenticatedContext, forGood: boolean, ids: IdLists): Promise<Empty> {
  await (forGood ? deleteForGood(ctx.services, ctx.caller.uid, ids) : moveToBin(ctx.services, ctx.caller.uid, ids));
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
 * The size changes of binning these items: each leaves its parent and ancestors, but one beneath another
 * given folder Y gives its size back at Y's parent (Y's own delta took it), so Y keeps only what is still in it.
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
function requireStates(kind: 'folder' | 'file', ids: readonly number[], found: readonly ItemStatus[], allowed: ReadonlySet<ItemStatus['state']>): Map<number, ItemStatus> {
  return requireAll(kind, ids, found.filter((item) => allowed.has(item.state)));
}

const LIVE_OR_ENTRY = new Set<ItemStatus['state']>(['live', 'deleted']);

/** Deletes items for good, live or bin entries, with what is beneath them except other entries; all or nothing. */
export async function deleteForGood(services: Services, accountId: number, ids: IdLists): Promise<void> {
  await inTreeTransaction(services.db, async (tx) => {
    await lockAccountTree(tx, accountId);
    const folders = requireStates('folder', ids.folderIds, await findItemStates(tx, accountId, 'folders', ids.folderIds), LIVE_OR_ENTRY);
    const files = requireStates('file', ids.fileIds, await findItemStates(tx, accountId, 'files', ids.fileIds), LIVE_OR_ENTRY);

    // Only live items not beneath another given folder count in their ancestors' sizes.
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

/** Deletes for good everything in the caller's bin when the call comes, in steps. */
export async function emptyBin(services: Services, accountId: number): Promise<void> {
  const before = services.now().getTime() + 1;
  const { rows } = await deleteEntriesInSteps(services, accountId, await findBinEntries(services.db, accountId, before), before);
  if (rows > 0) await removeContentAfterCommit(services);
}

/**
 * Deletes for good those `entries` still in the bin from before `before` (ms), in steps of their own
 * transactions under the account's lock (in one, a 100,000-item bin held SQLite's writer for seconds):
 * binned files, then folders deepest first, then the entry. A crash between steps leaves the rest restorable.
 */
async function deleteEntriesInSteps(services: Services, accountId: number, entries: BinEntries, before: number): Promise<{ entries: number; rows: number }> {
  const { db, now } = services;
  const sizes = new RowsForTime(EMPTY_STEP_TARGET_MS, EMPTY_STEP_MOST_ROWS, EMPTY_STEP_FIRST_ROWS);
  const slices = new TimeSlices();
  const deleted = { entries: 0, rows: 0 };
  // One step, its bytes given back, the next step sized by its time; the loop is given back after it,
  // and SQLite's checkpoints catch up first when they lag far behind.
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
      const roots = [...(await entriesStill(tx, accountId, 'folders', round, before)).keys()];
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
      const emptied = await emptiedFolderEntries(tx, accountId, [...(await entriesStill(tx, accountId, 'folders', chunk, before)).keys()]);
      return deleteItems(tx, accountId, { folderIds: emptied, files: noFiles }, now());
    });
  }
  deleted.entries += await inSteps(entries.fileIds, async (tx, chunk) =>
    deleteItems(tx, accountId, { folderIds: [], files: await entriesStill(tx, accountId, 'files', chunk, before) }, now()),
  );
  return deleted;
}

/** Unreferenced content goes now rather than at the next housekeeping; failures are logged (housekeeping retries). */
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

/** Restore reads every state, to tell not in the bin (409) from not the caller's (404). */
const ANY_STATE = new Set<ItemStatus['state']>(['live', 'deleted', 'beneath']);

export interface RestoredItems {
  readonly folders: FolderItem[];
  readonly files: FileItem[];
}

type Restoring = { readonly kind: 'folder' | 'file'; readonly item: ItemStatus; destination: number; name: string };

/** Restores bin entries, all or nothing (404 not the caller's, 409 live or beneath a binned folder), with their paths. */
export async function restoreItems(services: Services, accountId: number, ids: IdLists): Promise<RestoredItems> {
  const { db, config } = services;
  // 1,000 entries 256 deep took some 100 ms in one turn: the loop is given back between steps.
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
      if (item.state === 'live') throw conflict('not-in-bin', `${kind} ${item.id} is not in the recycle bin`);
      if (item.state === 'beneath') {
        throw conflict('inside-deleted-folder', `${kind} ${item.id} is not in the recycle bin itself: it is inside a deleted folder; restore that folder`);
      }
    }

    // A parent to go back to is live or comes back in this call; else the item goes to the root.
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
    const liveFolders = await findLiveFolders(tx, accountId, ids.folderIds);
    const liveFiles = await findLiveFiles(tx, accountId, ids.fileIds);
    await slices.pauseIfDue();
    // In the order asked; withTip reads only for encrypted items.
    const answered = async <T extends FolderItem | FileItem>(order: readonly number[], live: readonly T[]): Promise<T[]> => {
      const byId = new Map(live.map((item) => [item.id, item]));
      const items: T[] = [];
      for (const id of order) items.push(await withTip(tx, accountId, byId.get(id)!).then((item) => ({ ...item, path: pathOf(item.dir, item.name) })));
      return items;
    };
    return { folders: await answered(ids.folderIds, liveFolders), files: await answered(ids.fileIds, liveFiles) };
  });
}

/**
 * Sends to the root each folder entry that would pass `maxDepth` where it was to go, 413 when it fits not
 * even there. Entries are placed outermost first, so one sent to the root takes those restored into it.
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

/** Gives each restored item its own name, or the first free " (restored N)" form; suffixed names are read only where needed. */
async function chooseNames(tx: Kysely<Database>, maxNameLength: number, accountId: number, restoring: Restoring[], slices: TimeSlices): Promise<void> {
  const destinations = [...new Set(restoring.map((entry) => entry.destination))];
  const taken = new Map<number, Set<string>>(destinations.map((id) => [id, new Set<string>()]));
  // Each key computed once: normalizing 1,000 names of 255 characters is not free.
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
      throw conflict('numbered-name-too-long', `"${entry.item.name}" is taken where it would be restored, and "${name}" would be longer than ${maxNameLength} characters`);
    }
    used.add(key);
    entry.name = name;
  }
}

// ---- The retention sweep --------------------------------------------------------------------------

export interface SweepReport {
  readonly purged: number;
}

/**
 * Housekeeping: deletes for good bin entries older than recycleRetentionDays, in bounded batches of about
 * SWEEP_ROWS_PER_BATCH rows, in steps; each step re-checks under the account's lock, so instances may overlap.
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
      const idsOf = (table: ExpiredEntry['table']) => taken.filter((e) => e.accountId === accountId && e.table === table).map((e) => e.id);
      purged += (await deleteEntriesInSteps(services, accountId, { folderIds: idsOf('folders'), fileIds: idsOf('files') }, cutoff.getTime())).entries;
    }
    if (candidates.length < SWEEP_ENTRIES_PER_BATCH && taken.length === candidates.length) break;
  }
  return { purged };
}
