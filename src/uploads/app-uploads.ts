/** The app's one upload queue: listings refresh as files are added; a change of account stops it (remembered uploads stay, per account). */
import { api } from '../api/client';
import type { FileItem, Item } from '../api/results';
import { withUnlock } from '../api/encryption';
import { bytesLeft, invalidateAccountInfo } from '../api/account';
import { invalidateFiles } from '../api/files';
import { session } from '../api/session';
import { createTusClient } from '../api/tus';
import { getLanguage, messagesFor } from '../i18n';
import { startBrowserDownload } from '../lib/browser-download';
import { formatSize } from '../lib/format';
import { idParams } from '../lib/items';
import { notify } from '../lib/notices';
import { describeError } from '../components/error-text';
import { queryClient } from '../api/query-client';
import { createUploadTransport, createWorkerHasher, localStorageResumeStore } from './browser';
import { decideConflicts, freeNumberedName } from '../components/dialogs/name-conflicts';
import { treeFromPicked, type DroppedTree } from './dropped-files';
import { createUploadQueue, type UploadQueue, type UploadRequest } from './upload-queue';

/** Listings are refreshed at most this often while files keep arriving (the first change at once). */
const REFRESH_INTERVAL_MS = 1_000;

let lastRefresh = -Infinity;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;

/** Every listing (the folder's own, its ancestors' sizes, recent uploads, searches) may have changed. */
function refreshListings() {
  if (refreshTimer !== undefined) return;
  const wait = Math.max(0, lastRefresh + REFRESH_INTERVAL_MS - Date.now());
  refreshTimer = setTimeout(() => {
    refreshTimer = undefined;
    lastRefresh = Date.now();
    void invalidateFiles(queryClient);
    void invalidateAccountInfo();
  }, wait);
}

export const uploadQueue: UploadQueue = createUploadQueue({
  transport: createUploadTransport(api, createTusClient()),
  hasher: createWorkerHasher(),
  store: localStorageResumeStore(),
  scope: () => String(session.get()?.uid ?? ''),
  onFileAdded: refreshListings,
  onFolderAdded: refreshListings,
});

// Back online: the files waiting to retry a broken connection go on at once.
globalThis.addEventListener?.('online', () => uploadQueue.retryNow());

let uploadsFor = session.get()?.token;
session.subscribe(() => {
  const token = session.get()?.token;
  if (token !== uploadsFor) uploadQueue.reset();
  uploadsFor = token;
});

const toBin = (items: readonly Item[]) => api.folderAndFileDelete({ ...idParams(items), is_real: 0 });

/** Replace of a file: FileAdd gave the new one a numbered name; now the old one goes to the bin and the new one takes the name. */
async function replaceWith(file: FileItem, name: string, old: Item) {
  try {
    await toBin([old]);
    if (file.name !== name) await api.fileRename({ fid: file.id, newname: name });
  } catch {
    notify('error', messagesFor(getLanguage()).conflictReplaceFailed(name));
  }
  refreshListings();
}

/**
 * Asks about the top-level names the folder holds (docs/web-app.md, "Name conflicts"): one question per file and per
 * dropped folder. A replaced folder goes to the bin now; a replaced file once its successor is added. Null: cancelled.
 */
async function resolveConflicts(folderId: number, tree: DroppedTree): Promise<{ tree: DroppedTree; replacing: Map<TreeSource, Item> } | null> {
  const folders = [...new Set([...tree.dirs.map((path) => path[0]), ...tree.files.filter((file) => file.dirs.length > 0).map((file) => file.dirs[0])])];
  const loose = tree.files.filter((file) => file.dirs.length === 0);
  const incoming = [...folders.map((name) => ({ name, kind: 'folder' as const })), ...loose.map((file) => ({ name: file.source.name, kind: 'file' as const }))];
  const decisions = await decideConflicts(folderId, incoming);
  if (!decisions) return null;
  const renamedFolders = new Map<string, string | null>(); // null: skipped
  const binnedFolders: Item[] = [];
  for (const [index, name] of folders.entries()) {
    const decision = decisions[index];
    if (decision?.choice === 'skip') renamedFolders.set(name, null);
    else if (decision?.choice === 'keepBoth') renamedFolders.set(name, await freeNumberedName([folderId], name, false));
    else if (decision?.choice === 'replace') binnedFolders.push(decision.existing);
  }
  const replacing = new Map<TreeSource, Item>();
  const skippedFiles = new Set<TreeSource>();
  for (const [index, file] of loose.entries()) {
    const decision = decisions[folders.length + index];
    if (decision?.choice === 'skip') skippedFiles.add(file.source);
    else if (decision?.choice === 'replace') replacing.set(file.source, decision.existing);
  }
  if (binnedFolders.length > 0) await toBin(binnedFolders);
  const rename = (path: readonly string[]) => (renamedFolders.has(path[0]) ? [renamedFolders.get(path[0])!, ...path.slice(1)] : [...path]);
  return {
    tree: {
      files: tree.files
        .filter((file) => !skippedFiles.has(file.source) && renamedFolders.get(file.dirs[0]) !== null)
        .map((file) => (file.dirs.length > 0 ? { ...file, dirs: rename(file.dirs) } : file)),
      dirs: tree.dirs.filter((path) => renamedFolders.get(path[0]) !== null).map(rename),
    },
    replacing,
  };
}

type TreeSource = DroppedTree['files'][number]['source'];

async function enqueueTree(folderId: number, dropped: DroppedTree) {
  if (dropped.files.length === 0 && dropped.dirs.length === 0) return;
  const resolved = await resolveConflicts(folderId, dropped).catch((error: unknown) => {
    const t = messagesFor(getLanguage());
    notify('error', t.actionFailed, describeError(error, t).message);
    return null;
  });
  if (!resolved) return;
  const { tree, replacing } = resolved;
  // Refused before a byte is sent; the service checks again as each file is added.
  const needed = tree.files.reduce((sum, file) => sum + file.source.size, 0);
  const left = await bytesLeft();
  if (left !== undefined && needed > left) {
    const language = getLanguage();
    const t = messagesFor(language);
    notify('error', t.uploadOverQuotaTitle, t.uploadOverQuota(formatSize(needed, language), formatSize(left, language)));
    return;
  }
  const loose = tree.files.filter((file) => file.dirs.length === 0);
  const requests = loose.map(({ source }): UploadRequest => {
    const old = replacing.get(source);
    return { source, folder: folderId, onAdded: old && ((file) => void replaceWith(file, source.name, old)) };
  });
  if (requests.length > 0) uploadQueue.add(requests);
  const nested = tree.files.filter((file) => file.dirs.length > 0);
  if (nested.length > 0 || tree.dirs.length > 0) uploadQueue.addTree(folderId, nested, tree.dirs);
}

/** Queues the files of a file picker, or the tree of a folder picker (webkitRelativePath). */
export function uploadPicked(folderId: number, files: Iterable<File>) {
  void enqueueTree(folderId, treeFromPicked(files));
}

/** Queues what was dropped, from what captureDrop took during the drop event. */
export function uploadDropped(folderId: number, walk: () => Promise<DroppedTree>) {
  walk().then(
    (tree) => enqueueTree(folderId, tree),
    (error: unknown) => console.error('Reading the dropped folders failed', error),
  );
}

/** Folders and files as one ZIP (ZipDownload); encrypted items only while this session has them unlocked, else 423. */
export async function downloadZip(items: readonly Item[]): Promise<void> {
  startBrowserDownload((await api.zipDownload(idParams(items))).url);
}

/** A locked file (423) asks for its password first; cancelling is the user's choice, not an error. */
export async function downloadFile(fileId: number): Promise<void> {
  const answer = await withUnlock(() => api.fileDownload({ fid: fileId }));
  if (!answer) return;
  startBrowserDownload(answer.url);
}
