// Per share code, for this tab only (sessionStorage): the accepted extraction code, so reload does not ask again,
// and the folders opened, so breadcrumbs can be drawn again (ShareList gives no paths).

/** The part of the Web Storage API the store uses; tests give a Map-backed one. */
type KeyValueStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

export interface KnownFolder {
  readonly name: string;
  /** The folder it is in. */
  readonly parent: number;
}

export interface TrailSegment {
  /** 0 for the shared folder itself; -1 for folders in between that this tab never saw. */
  readonly id: number;
  readonly name: string;
}

/** More folders than anyone walks through by hand; the oldest are forgotten first. */
const MAX_FOLDERS = 500;

function sessionStorageOrMemory(): KeyValueStorage {
  try {
    if (typeof sessionStorage !== 'undefined') return sessionStorage;
  } catch {
    // storage blocked (privacy settings): remember for this page only
  }
  const map = new Map<string, string>();
  return { getItem: (key) => map.get(key) ?? null, setItem: (key, value) => void map.set(key, value), removeItem: (key) => void map.delete(key) };
}

export interface ShareCodeStore {
  acceptedCode(share: string): string | null;
  rememberCode(share: string, downpwd: string): void;
  forgetCode(share: string): void;
  rememberFolder(share: string, id: number, folder: KnownFolder): void;
  /** From the shared folder to `dir` as far as this tab knows; an unknown stretch is one segment with id -1. */
  trail(share: string, rootId: number, rootName: string, dir: number): TrailSegment[];
}

export function createShareCodeStore(storage: KeyValueStorage = sessionStorageOrMemory()): ShareCodeStore {
  const codeKey = (share: string) => `fss.share.${share}.code`;
  const foldersKey = (share: string) => `fss.share.${share}.folders`;

  const read = (key: string): string | null => {
    try {
      return storage.getItem(key);
    } catch {
      return null;
    }
  };
  const write = (key: string, value: string | null) => {
    try {
      if (value === null) storage.removeItem(key);
      else storage.setItem(key, value);
    } catch {
      // full or blocked: the page still works, it only forgets
    }
  };

  // An array of [id, name, parent], oldest first (object keys that are numbers would not keep their order).
  function folders(share: string): Map<number, KnownFolder> {
    const known = new Map<number, KnownFolder>();
    try {
      const parsed: unknown = JSON.parse(read(foldersKey(share)) ?? '[]');
      if (Array.isArray(parsed)) {
        for (const entry of parsed) {
          if (Array.isArray(entry) && typeof entry[0] === 'number' && typeof entry[1] === 'string' && typeof entry[2] === 'number') {
            known.set(entry[0], { name: entry[1], parent: entry[2] });
          }
        }
      }
    } catch {
      // unreadable: start again
    }
    return known;
  }

  return {
    acceptedCode: (share) => read(codeKey(share)),
    rememberCode: (share, downpwd) => write(codeKey(share), downpwd),
    forgetCode: (share) => write(codeKey(share), null),

    rememberFolder(share, id, folder) {
      const known = folders(share);
      known.delete(id);
      known.set(id, folder);
      const entries = [...known].slice(-MAX_FOLDERS).map(([key, value]) => [key, value.name, value.parent]);
      write(foldersKey(share), JSON.stringify(entries));
    },

    trail(share, rootId, rootName, dir) {
      const root: TrailSegment = { id: 0, name: rootName };
      if (dir === 0 || dir === rootId) return [root];
      const known = folders(share);
      const below: TrailSegment[] = [];
      const seen = new Set<number>();
      let id = dir;
      while (id !== rootId && id !== 0) {
        const folder = known.get(id);
        if (!folder || seen.has(id)) {
          below.unshift({ id: -1, name: '' });
          break;
        }
        seen.add(id);
        below.unshift({ id, name: folder.name });
        id = folder.parent;
      }
      if (below.at(-1)?.id !== dir) below.push({ id: dir, name: '' });
      return [root, ...below];
    },
  };
}

/** The app's store, in this tab's sessionStorage. */
export const shareCodeStore: ShareCodeStore = createShareCodeStore();
