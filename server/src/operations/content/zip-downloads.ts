/**
 * ZipDownload (ext) and the /z/ URLs: folders and files as one streamed ZIP. The URL's token is signed
 * like /d/'s and names the account, the selected ids and an expiry (and, from a share, the share; for
 * the owner's unlocked encrypted items, the session and their data keys sealed as /d/ seals one);
 * what it serves is read when it is opened, so items binned or moved away since are left out.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { encryptedFileKeysIn, liveFilesById, liveFilesIn, liveFoldersBeneath, type ArchiveFile, type ArchiveFolder } from '../../storage/db/repositories/archive-repository';
import { folderLockChains, keyTips, unlockedKeyIds, type ItemRef } from '../../storage/db/repositories/encryption-repository';
import { findLiveFolders } from '../../storage/db/repositories/items-repository';
import { contentStoreFor } from '../../storage/content/stores';
import type { AuthenticatedContext, Caller, ParamsOf, Services, UrlResult } from '../context';
import { DOWNLOAD_URL_LIFETIME_MS } from './downloads';
import { openUnlockedKeys, sealedKeysForDownload } from '../encryption/encryption';
import { openDecryptedContent } from '../encryption/encrypted-content';
import { openToken, signToken, type TokenCheck } from '../crypto/signed-tokens';
import { locked, lockedRefusal, tooLarge } from '../errors';
import { parseIdLists, requireFiles, requireFolders } from '../tree/id-lists';
import { shareGrantStateFor, type ShareGrant } from '../sharing/shares';

const KEY_PURPOSE = 'fss/zip-url/v1';
/** Folders looked at per query (SQL parameter lists stay short). */
const FOLDER_BATCH = 500;
const FILE_PAGE = 1000;
/** Data keys one ZIP URL may carry (about 100 characters each): more would make a URL browsers refuse. */
export const MAX_ZIP_KEYS = 16;

export interface ZipGrant {
  readonly accountId: number;
  readonly folderIds: readonly number[];
  readonly fileIds: readonly number[];
  readonly expires: Date;
  /** From a share: the share, and the folder the selection was made in (the ids must be it or its children). */
  readonly share?: ShareGrant & { readonly within: number };
  /** The owner's encrypted items: the session that had them unlocked, and each key sealed for this grant (`t`, `k`). */
  readonly unlocked?: { readonly tokenId: number; readonly keys: readonly SealedKey[] };
}

interface SealedKey {
  readonly keyId: number;
  readonly sealedKey: string;
}

export type ZipEntry =
  | { readonly kind: 'folder'; readonly path: string; readonly mtime: Date }
  | { readonly kind: 'file'; readonly path: string; readonly mtime: Date; readonly size: number; open(): Promise<Readable> };

/** Thrown by an entry's open() when the session locked a key of the ZIP since it began: the archive is cut. */
export class LockedSinceStart extends Error {}

export async function zipDownload(ctx: AuthenticatedContext, params: ParamsOf<'ZipDownload'>): Promise<UrlResult> {
  const { db, config } = ctx.services;
  const { folderIds, fileIds } = parseIdLists(params.dirids, params.fids, config.limits.maxIdsPerList);
  const accountId = ctx.caller.uid;
  const folders = [...(await requireFolders(db, accountId, folderIds)).values()];
  const files = [...(await requireFiles(db, accountId, fileIds)).values()];
  const name = folders.length + files.length === 1 ? (folders[0]?.name ?? files[0].name) : 'download';
  const grant: ZipGrant = { accountId, folderIds, fileIds, expires: urlExpiry(ctx.services) };
  const keyIds = await checkZipContents(ctx.services, grant, ctx.caller);
  if (keyIds.length === 0) return zipUrl(ctx.services, ctx.baseUrl, name, grant);
  const { tokenId } = ctx.caller;
  const keys = await sealedKeysForDownload(ctx.services, ctx.caller, keyIds, (keyId) => zipKeyContext(grant, tokenId, keyId));
  if (!keys) {
    // Locked between the check and the sealing: the check, again, names what.
    await checkZipContents(ctx.services, grant, ctx.caller);
    throw locked('encrypted-locked', 'an item was locked meanwhile: unlock it to download');
  }
  return zipUrl(ctx.services, ctx.baseUrl, name, { ...grant, unlocked: { tokenId, keys } });
}

export function urlExpiry(services: Services): Date {
  return new Date(services.now().getTime() + DOWNLOAD_URL_LIFETIME_MS);
}

/** What a sealed key of a grant is bound to: the rest of the grant (the ids by their digest). */
function zipKeyContext(grant: ZipGrant, tokenId: number, keyId: number): string {
  const ids = createHash('sha256').update(JSON.stringify([grant.folderIds, grant.fileIds])).digest('base64url');
  return `zip:${grant.accountId}.${grant.expires.getTime()}.${tokenId}.${keyId}.${ids}`;
}

/**
 * What a grant would put in the archive, checked before its URL is handed out: at most `maxZipEntries` entries;
 * encrypted items only for their owner's session (`caller`) with every key on their way unlocked (423), under at
 * most MAX_ZIP_KEYS keys (413). Returns those keys.
 */
export async function checkZipContents(services: Services, grant: ZipGrant, caller?: Caller): Promise<number[]> {
  const { db, config } = services;
  const selectedFiles = await liveFilesById(db, grant.accountId, grant.fileIds);
  const folders = await liveFoldersBeneath(db, grant.accountId, grant.folderIds);
  // Each key the archive needs, with the first item found under it (named in a refusal); null: encrypted, no key known.
  const needs = new Map<number | null, ItemRef>();
  const need = (keyId: number | null, item: ItemRef) => {
    if (!needs.has(keyId)) needs.set(keyId, item);
  };
  const chains = await folderLockChains(db, grant.accountId, [...grant.folderIds, ...selectedFiles.map((file) => file.folderId)]);
  for (const link of [...chains.values()].flat()) need(link.keyId, { type: link.type, id: link.id });
  for (const folder of folders) if (folder.encrypted) need(folder.keyId, { type: 'folder', id: folder.id });
  for (const file of selectedFiles) if (file.encrypted) need(file.keyId, { type: 'file', id: file.id });
  for (let i = 0; i < folders.length; i += FOLDER_BATCH) {
    const ids = folders.slice(i, i + FOLDER_BATCH).map((folder) => folder.id);
    for (const { keyId, fileId } of await encryptedFileKeysIn(db, grant.accountId, ids)) need(keyId, { type: 'file', id: fileId });
  }
  if (needs.size > 0) {
    if (!caller || grant.share) throw lockedRefusal([...needs.values()][0], 'encrypted items are not shared', 'visitor');
    const keyIds = [...needs.keys()].filter((keyId) => keyId !== null);
    const unlocked = await unlockedKeyIds(db, caller.tokenId, keyIds);
    const lockedKey = [...needs.keys()].find((keyId) => keyId === null || !unlocked.has(keyId));
    if (lockedKey !== undefined) {
      const tip = lockedKey === null ? '' : ((await keyTips(db, [lockedKey])).get(lockedKey) ?? '');
      throw lockedRefusal({ ...needs.get(lockedKey)!, tip }, 'an item is encrypted: unlock it to download');
    }
  }
  if (folders.length + selectedFiles.length > config.limits.maxZipEntries) {
    throw tooLarge('too-many-items', `a ZIP holds at most ${config.limits.maxZipEntries} folders and files: choose fewer`);
  }
  if (needs.size > MAX_ZIP_KEYS) {
    throw tooLarge('too-many-keys', `a ZIP holds encrypted items of at most ${MAX_ZIP_KEYS} passwords: choose fewer encrypted folders and files`);
  }
  return [...needs.keys()].filter((keyId) => keyId !== null);
}

export function zipUrl(services: Services, baseUrl: string, name: string, grant: ZipGrant): UrlResult {
  const token = signZipToken(services.secret, grant);
  return { kind: 'url', url: `${baseUrl}/z/${token}/${encodeURIComponent(`${name}.zip`)}`, expires: grant.expires };
}

/** The entries a valid grant serves now, or why it serves nothing. */
export async function openGrantedZip(services: Services, grant: ZipGrant): Promise<{ kind: 'found'; entries: AsyncIterable<ZipEntry> } | { kind: 'gone' } | { kind: 'locked' }> {
  const { db } = services;
  let folderIds = grant.folderIds;
  let files = await liveFilesById(db, grant.accountId, grant.fileIds);
  if (grant.share) {
    const { within } = grant.share;
    const state = await shareGrantStateFor(services, grant.share, grant.accountId, { type: 'folder', id: within });
    if (state !== 'granted') return { kind: state === 'locked' ? 'locked' : 'gone' };
    // Only what is still the folder itself or its child counts: a thing moved out of the share is not served.
    const folders = await findLiveFolders(db, grant.accountId, folderIds);
    folderIds = folders.filter((folder) => folder.id === within || folder.dir === within).map((folder) => folder.id);
    files = files.filter((file) => file.folderId === within);
  }
  const access: KeyAccess = { keys: new Map(), stillUnlocked: () => Promise.resolve(true) };
  if (grant.unlocked && !grant.share) {
    const { tokenId, keys } = grant.unlocked;
    const opened = await openUnlockedKeys(services, tokenId, keys, (keyId) => zipKeyContext(grant, tokenId, keyId));
    if (!opened) return { kind: 'locked' };
    const keyIds = [...opened.keys()];
    access.keys = opened;
    access.stillUnlocked = async () => (await unlockedKeyIds(db, tokenId, keyIds)).size === keyIds.length;
  }
  // A selected item under a key the grant has not (encrypted, or moved into an encrypted folder, since) is left out.
  const chains = await folderLockChains(db, grant.accountId, [...folderIds, ...files.map((file) => file.folderId)]);
  const granted = (folderId: number) => (chains.get(folderId) ?? []).every((link) => access.keys.has(link.keyId));
  folderIds = folderIds.filter(granted);
  files = files.filter((file) => granted(file.folderId));
  return { kind: 'found', entries: zipEntries(services, grant.accountId, folderIds, files, access) };
}

/** The data keys a ZIP may decrypt with, and whether its session has them all unlocked still (asked before each encrypted entry). */
interface KeyAccess {
  keys: ReadonlyMap<number, Buffer>;
  stillUnlocked(): Promise<boolean>;
}

async function* zipEntries(services: Services, accountId: number, folderIds: readonly number[], files: readonly ArchiveFile[], access: KeyAccess): AsyncGenerator<ZipEntry> {
  const { db, config } = services;
  const store = contentStoreFor(config);
  const used = new Set<string>();
  const included = (file: ArchiveFile) => !file.encrypted || (file.keyId !== null && access.keys.has(file.keyId));
  const fileEntry = (path: string, file: ArchiveFile): ZipEntry => ({
    kind: 'file',
    path: uniquePath(used, path),
    mtime: new Date(file.updatedAt),
    size: file.size,
    open: async () => {
      if (!file.encrypted) return store.read(file.storageKey);
      if (!(await access.stillUnlocked())) throw new LockedSinceStart('a key of the ZIP was locked while it was being sent');
      return openDecryptedContent(services, file.contentId, { keyId: file.keyId!, dataKey: access.keys.get(file.keyId!)! });
    },
  });

  // Folders first: their paths are fixed, and a file whose name one of them has takes another.
  const paths = folderPaths(await liveFoldersBeneath(db, accountId, folderIds), new Set(folderIds), used, access.keys);
  for (const [, folder] of paths) yield { kind: 'folder', path: `${folder.path}/`, mtime: new Date(folder.updatedAt) };
  for (const file of files) {
    if (included(file)) yield fileEntry(file.name, file);
  }
  const order = [...paths.keys()];
  for (let i = 0; i < order.length; i += FOLDER_BATCH) {
    const batch = order.slice(i, i + FOLDER_BATCH);
    let after: { folderId: number; id: number } | null = null;
    for (;;) {
      const page = await liveFilesIn(db, accountId, batch, after, FILE_PAGE);
      for (const file of page) {
        if (included(file)) yield fileEntry(`${paths.get(file.folderId)!.path}/${file.name}`, file);
      }
      if (page.length < FILE_PAGE) break;
      const last = page[page.length - 1];
      after = { folderId: last.folderId, id: last.id };
    }
  }
}

/**
 * Each folder's path inside the archive (the selected folders at its top, named apart), parents first; encrypted
 * folders of a key not in `keys`, and what is beneath them, left out.
 */
function folderPaths(
  folders: readonly ArchiveFolder[],
  roots: ReadonlySet<number>,
  used: Set<string>,
  keys: ReadonlyMap<number, Buffer>,
): Map<number, { path: string; updatedAt: number }> {
  const readable = (folder: ArchiveFolder) => !folder.encrypted || (folder.keyId !== null && keys.has(folder.keyId));
  const children = new Map<number, ArchiveFolder[]>();
  for (const folder of folders) {
    if (roots.has(folder.id)) continue;
    const siblings = children.get(folder.parentId);
    if (siblings) siblings.push(folder);
    else children.set(folder.parentId, [folder]);
  }
  const paths = new Map<number, { path: string; updatedAt: number }>();
  const byId = new Map(folders.map((folder) => [folder.id, folder]));
  // Selected folders are named in the order of the selection; the stack then takes the last first.
  const selected = [...roots].flatMap((id) => (byId.has(id) && readable(byId.get(id)!) ? [byId.get(id)!] : []));
  const pending = selected.map((folder) => ({ folder, path: uniquePath(used, folder.name) })).reverse();
  while (pending.length > 0) {
    const { folder, path } = pending.pop()!;
    if (!readable(folder) || paths.has(folder.id)) continue;
    used.add(path.toLowerCase());
    paths.set(folder.id, { path, updatedAt: folder.updatedAt });
    for (const child of children.get(folder.id) ?? []) pending.push({ folder: child, path: `${path}/${child.name}` });
  }
  return paths;
}

/** The path, or `name (2).ext`… when an entry of that name (in any letter case) is already in the archive. */
function uniquePath(used: Set<string>, path: string): string {
  let candidate = path;
  for (let n = 2; used.has(candidate.toLowerCase()); n++) {
    const slash = path.lastIndexOf('/');
    const dot = path.lastIndexOf('.');
    const cut = dot > slash + 1 ? dot : path.length;
    candidate = `${path.slice(0, cut)} (${n})${path.slice(cut)}`;
  }
  used.add(candidate.toLowerCase());
  return candidate;
}

// ---- The token --------------------------------------------------------------------------------

export function signZipToken(secret: Buffer, grant: ZipGrant): string {
  return signToken(secret, KEY_PURPOSE, {
    a: grant.accountId,
    d: grant.folderIds,
    f: grant.fileIds,
    e: grant.expires.getTime(),
    ...(grant.share ? { s: grant.share.id, p: grant.share.stamp, w: grant.share.within } : {}),
    ...(grant.unlocked ? { t: grant.unlocked.tokenId, k: grant.unlocked.keys.map(({ keyId, sealedKey }) => [keyId, sealedKey]) } : {}),
  });
}

export function verifyZipToken(secret: Buffer, token: string, now: Date): TokenCheck<ZipGrant> {
  return openToken(secret, KEY_PURPOSE, token, { maxLength: 16000, now }, ({ a, d, f, e, s, p, w, t, k }): ZipGrant | null => {
    const ids = (value: unknown) => (Array.isArray(value) && value.every((id) => Number.isSafeInteger(id)) ? (value as number[]) : null);
    const folderIds = ids(d);
    const fileIds = ids(f);
    if (!Number.isSafeInteger(a) || !folderIds || !fileIds) return null;
    if (s !== undefined && !(Number.isSafeInteger(s) && typeof p === 'string' && Number.isSafeInteger(w))) return null;
    const keys = k === undefined ? undefined : sealedKeys(k);
    if ((t !== undefined || k !== undefined) && !(Number.isSafeInteger(t) && keys)) return null;
    return {
      accountId: a as number,
      folderIds,
      fileIds,
      expires: new Date(e as number),
      ...(s !== undefined ? { share: { id: s as number, stamp: p as string, within: w as number } } : {}),
      ...(keys ? { unlocked: { tokenId: t as number, keys } } : {}),
    };
  });
}

function sealedKeys(value: unknown): SealedKey[] | null {
  if (!Array.isArray(value) || value.length > MAX_ZIP_KEYS) return null;
  const pairs = value as unknown[];
  const valid = pairs.every((pair) => Array.isArray(pair) && pair.length === 2 && Number.isSafeInteger(pair[0]) && typeof pair[1] === 'string');
  return valid ? (pairs as [number, string][]).map(([keyId, sealedKey]) => ({ keyId, sealedKey })) : null;
}
