// Recreates a dropped folder tree with FolderAdd. A taken folder name is reused, so dropping again after an interruption resumes;
// a file holding the name gives the first free numbered name (`Photos (1)`), as FileAdd does.
import { isApiError } from '../api/errors';
import type { FolderItem } from '../api/results';
import type { UploadTransport } from './types';

/** The service's name comparison (docs/protocol.md §10.1): NFC, then lower case. */
export const sameNameKey = (name: string) => name.normalize('NFC').toLowerCase();

/** At most this many FolderAdd calls at once: a dropped tree of 1,000 folders must not send 1,000 calls together. */
const FOLDER_CALLS_AT_ONCE = 4;
const MAX_NUMBERED_NAMES = 100;

export type FolderResolver = (dirs: readonly string[]) => Promise<number>;

/** Each folder is made once however many files ask; a failure is not remembered, so asking again tries again. */
export function createFolderResolver(
  transport: Pick<UploadTransport, 'folderAdd' | 'listFolder'>,
  rootId: number,
  onFolderAdded?: (folder: FolderItem) => void,
): FolderResolver {
  const known = new Map<string, Promise<number>>();
  const limit = limiter(FOLDER_CALLS_AT_ONCE);

  const ensure = async (parent: number, name: string): Promise<number> => {
    try {
      const folder = await limit(() => transport.folderAdd({ dirid: parent, name }));
      onFolderAdded?.(folder);
      return folder.id;
    } catch (error) {
      if (!isApiError(error, 'Conflict')) throw error;
    }
    // The name is taken: by a folder (reuse it) or by a file (take a numbered name).
    const listing = await limit(() => transport.listFolder(parent));
    const key = sameNameKey(name);
    const existing = listing.folders.find((folder) => sameNameKey(folder.name) === key);
    if (existing) return existing.id;
    const taken = new Set([...listing.folders, ...listing.files].map((item) => sameNameKey(item.name)));
    for (let n = 1; n <= MAX_NUMBERED_NAMES; n++) {
      const candidate = `${name} (${n})`;
      if (taken.has(sameNameKey(candidate))) continue;
      try {
        const folder = await limit(() => transport.folderAdd({ dirid: parent, name: candidate }));
        onFolderAdded?.(folder);
        return folder.id;
      } catch (error) {
        if (!isApiError(error, 'Conflict')) throw error;
        taken.add(sameNameKey(candidate));
      }
    }
    throw new Error(`No free name for the folder "${name}".`);
  };

  const resolve: FolderResolver = (dirs) => {
    if (dirs.length === 0) return Promise.resolve(rootId);
    const path = dirs.join('\u0000');
    let id = known.get(path);
    if (!id) {
      const parent = resolve(dirs.slice(0, -1));
      id = parent.then((parentId) => ensure(parentId, dirs[dirs.length - 1]));
      known.set(path, id);
      // Reported through the files that wait for it; forgotten, so that retrying them tries again.
      id.catch(() => known.get(path) === id && known.delete(path));
    }
    return id;
  };
  return resolve;
}

/** Runs at most `size` of the given tasks at a time; a finishing task hands its turn to the next waiting one. */
function limiter(size: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running < size) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
