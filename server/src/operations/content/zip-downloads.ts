/**
 * ZipDownload (ext) and the /z/ URLs: folders and files as one streamed ZIP. The URL's token is signed
 * like /d/'s and names the account, the selected ids and an expiry (and, from a share, the share);
 * what it serves is read when it is opened, so items binned or moved away since are left out.
 */
import type { Readable } from 'node:stream';
import { anyEncryptedFileIn, liveFilesById, liveFilesIn, liveFoldersBeneath, type ArchiveFolder } from '../../storage/db/repositories/archive-repository';
import { findLiveFolders } from '../../storage/db/repositories/items-repository';
import { contentStoreFor } from '../../storage/content/stores';
import type { AuthenticatedContext, ParamsOf, Services, UrlResult } from '../context';
import { DOWNLOAD_URL_LIFETIME_MS } from './downloads';
import { openToken, signToken, type TokenCheck } from '../crypto/signed-tokens';
import { locked, tooLarge } from '../errors';
import { parseIdLists, requireFiles, requireFolders } from '../tree/id-lists';
import { shareGrantStateFor, type ShareGrant } from '../sharing/shares';

const KEY_PURPOSE = 'fss/zip-url/v1';
/** Folders looked at per query (SQL parameter lists stay short). */
const FOLDER_BATCH = 500;
const FILE_PAGE = 1000;

export interface ZipGrant {
  readonly accountId: number;
  readonly folderIds: readonly number[];
  readonly fileIds: readonly number[];
  readonly expires: Date;
  /** From a share: the share, and the folder the selection was made in (the ids must be it or its children). */
  readonly share?: ShareGrant & { readonly within: number };
}

export type ZipEntry =
  | { readonly kind: 'folder'; readonly path: string; readonly mtime: Date }
  | { readonly kind: 'file'; readonly path: string; readonly mtime: Date; readonly size: number; open(): Promise<Readable> };

export async function zipDownload(ctx: AuthenticatedContext, params: ParamsOf<'ZipDownload'>): Promise<UrlResult> {
  const { db, config } = ctx.services;
  const { folderIds, fileIds } = parseIdLists(params.dirids, params.fids, config.limits.maxIdsPerList);
  const accountId = ctx.caller.uid;
  const folders = [...(await requireFolders(db, accountId, folderIds)).values()];
  const files = [...(await requireFiles(db, accountId, fileIds)).values()];
  const name = folders.length + files.length === 1 ? (folders[0]?.name ?? files[0].name) : 'download';
  const grant = { accountId, folderIds, fileIds, expires: urlExpiry(ctx.services) };
  await checkZipContents(ctx.services, grant);
  return zipUrl(ctx.services, ctx.baseUrl, name, grant);
}

export function urlExpiry(services: Services): Date {
  return new Date(services.now().getTime() + DOWNLOAD_URL_LIFETIME_MS);
}

/** What a grant would put in the archive, checked before its URL is handed out: no encrypted item (ZIPs carry plaintext only), at most `maxZipEntries` entries. */
export async function checkZipContents(services: Services, grant: ZipGrant): Promise<void> {
  const { db, config } = services;
  const selectedFiles = await liveFilesById(db, grant.accountId, grant.fileIds);
  const folders = await liveFoldersBeneath(db, grant.accountId, grant.folderIds);
  const encrypted = selectedFiles.find((file) => file.encrypted) ?? folders.find((folder) => folder.encrypted);
  if (encrypted) throw locked('encrypted-excluded', 'encrypted items cannot be downloaded as a ZIP: decrypt them, or download them one by one', { id: encrypted.id });
  for (let i = 0; i < folders.length; i += FOLDER_BATCH) {
    const ids = folders.slice(i, i + FOLDER_BATCH).map((folder) => folder.id);
    if (await anyEncryptedFileIn(db, grant.accountId, ids)) throw locked('encrypted-excluded', 'encrypted files cannot be downloaded as a ZIP: decrypt them, or download them one by one');
  }
  if (folders.length + selectedFiles.length > config.limits.maxZipEntries) {
    throw tooLarge('too-many-items', `a ZIP holds at most ${config.limits.maxZipEntries} folders and files: choose fewer`);
  }
}

export function zipUrl(services: Services, baseUrl: string, name: string, grant: ZipGrant): UrlResult {
  const token = signZipToken(services.secret, grant);
  return { kind: 'url', url: `${baseUrl}/z/${token}/${encodeURIComponent(`${name}.zip`)}`, expires: grant.expires };
}

/** The entries a valid grant serves now, or why it serves nothing. */
export async function openGrantedZip(services: Services, grant: ZipGrant): Promise<{ kind: 'found'; entries: AsyncIterable<ZipEntry> } | { kind: 'gone' } | { kind: 'locked' }> {
  const { db } = services;
  let folderIds = grant.folderIds;
  let fileIds = grant.fileIds;
  if (grant.share) {
    const { within } = grant.share;
    const state = await shareGrantStateFor(services, grant.share, grant.accountId, { type: 'folder', id: within });
    if (state !== 'granted') return { kind: state === 'locked' ? 'locked' : 'gone' };
    // Only what is still the folder itself or its child counts: a thing moved out of the share is not served.
    const folders = await findLiveFolders(db, grant.accountId, folderIds);
    folderIds = folders.filter((folder) => folder.id === within || folder.dir === within).map((folder) => folder.id);
    fileIds = (await liveFilesById(db, grant.accountId, fileIds)).filter((file) => file.folderId === within).map((file) => file.id);
  }
  return { kind: 'found', entries: zipEntries(services, grant.accountId, folderIds, fileIds) };
}

async function* zipEntries(services: Services, accountId: number, folderIds: readonly number[], fileIds: readonly number[]): AsyncGenerator<ZipEntry> {
  const { db, config } = services;
  const store = contentStoreFor(config);
  const used = new Set<string>();
  const fileEntry = (path: string, file: { size: number; updatedAt: number; storageKey: string }): ZipEntry => ({
    kind: 'file',
    path: uniquePath(used, path),
    mtime: new Date(file.updatedAt),
    size: file.size,
    open: () => store.read(file.storageKey),
  });

  // Folders first: their paths are fixed, and a file whose name one of them has takes another.
  const paths = folderPaths(await liveFoldersBeneath(db, accountId, folderIds), new Set(folderIds), used);
  for (const [, folder] of paths) yield { kind: 'folder', path: `${folder.path}/`, mtime: new Date(folder.updatedAt) };
  for (const file of await liveFilesById(db, accountId, fileIds)) {
    if (!file.encrypted) yield fileEntry(file.name, file);
  }
  const order = [...paths.keys()];
  for (let i = 0; i < order.length; i += FOLDER_BATCH) {
    const batch = order.slice(i, i + FOLDER_BATCH);
    let after: { folderId: number; id: number } | null = null;
    for (;;) {
      const page = await liveFilesIn(db, accountId, batch, after, FILE_PAGE);
      for (const file of page) {
        if (!file.encrypted) yield fileEntry(`${paths.get(file.folderId)!.path}/${file.name}`, file);
      }
      if (page.length < FILE_PAGE) break;
      const last = page[page.length - 1];
      after = { folderId: last.folderId, id: last.id };
    }
  }
}

/** Each folder's path inside the archive (the selected folders at its top, named apart), parents first; encrypted folders and what is beneath them left out. */
function folderPaths(folders: readonly ArchiveFolder[], roots: ReadonlySet<number>, used: Set<string>): Map<number, { path: string; updatedAt: number }> {
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
  const selected = [...roots].flatMap((id) => (byId.get(id)?.encrypted === false ? [byId.get(id)!] : []));
  const pending = selected.map((folder) => ({ folder, path: uniquePath(used, folder.name) })).reverse();
  while (pending.length > 0) {
    const { folder, path } = pending.pop()!;
    if (folder.encrypted || paths.has(folder.id)) continue;
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
  });
}

export function verifyZipToken(secret: Buffer, token: string, now: Date): TokenCheck<ZipGrant> {
  return openToken(secret, KEY_PURPOSE, token, { maxLength: 16000, now }, ({ a, d, f, e, s, p, w }): ZipGrant | null => {
    const ids = (value: unknown) => (Array.isArray(value) && value.every((id) => Number.isSafeInteger(id)) ? (value as number[]) : null);
    const folderIds = ids(d);
    const fileIds = ids(f);
    if (!Number.isSafeInteger(a) || !folderIds || !fileIds) return null;
    if (s !== undefined && !(Number.isSafeInteger(s) && typeof p === 'string' && Number.isSafeInteger(w))) return null;
    return {
      accountId: a as number,
      folderIds,
      fileIds,
      expires: new Date(e as number),
      ...(s !== undefined ? { share: { id: s as number, stamp: p as string, within: w as number } } : {}),
    };
  });
}
