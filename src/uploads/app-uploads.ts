/** The app's one upload queue: listings refresh as files are added; a change of account stops it (remembered uploads stay, per account). */
import { api } from '../api/client';
import type { Item } from '../api/results';
import { withUnlock } from '../api/encryption';
import { bytesLeft, invalidateAccountInfo } from '../api/account';
import { invalidateFiles } from '../api/files';
import { session } from '../api/session';
import { createTusClient } from '../api/tus';
import { getLanguage, messagesFor } from '../i18n';
import { startBrowserDownload } from '../lib/browser-download';
import { formatSize } from '../lib/format';
import { notify } from '../lib/notices';
import { queryClient } from '../api/query-client';
import { createUploadTransport, createWorkerHasher, localStorageResumeStore } from './browser';
import { treeFromPicked, type DroppedTree } from './dropped-files';
import { createUploadQueue, type UploadQueue } from './upload-queue';

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

async function enqueueTree(folderId: number, tree: DroppedTree) {
  if (tree.files.length === 0 && tree.dirs.length === 0) return;
  // Refused before a byte is sent; the service checks again as each file is added.
  const needed = tree.files.reduce((sum, file) => sum + file.source.size, 0);
  const left = await bytesLeft();
  if (left !== undefined && needed > left) {
    const language = getLanguage();
    const t = messagesFor(language);
    notify('error', t.uploadOverQuotaTitle, t.uploadOverQuota(formatSize(needed, language), formatSize(left, language)));
    return;
  }
  if (tree.dirs.length === 0) uploadQueue.add(tree.files.map(({ source }) => ({ source, folder: folderId })));
  else uploadQueue.addTree(folderId, tree.files, tree.dirs);
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

/** Folders and files as one ZIP (ZipDownload); encrypted items are refused (423): ZIPs carry plaintext only. */
export async function downloadZip(items: readonly Item[]): Promise<void> {
  const ids = (type: Item['type']) => items.filter((item) => item.type === type).map((item) => item.id).join(',');
  startBrowserDownload((await api.zipDownload({ dirids: ids('folder'), fids: ids('file') })).url);
}

/** A locked file (423) asks for its password first; cancelling is the user's choice, not an error. */
export async function downloadFile(fileId: number): Promise<void> {
  const answer = await withUnlock(() => api.fileDownload({ fid: fileId }));
  if (!answer) return;
  startBrowserDownload(answer.url);
}
