/** The login session, in sessionStorage, or localStorage when the user stays signed in, so that a reload keeps it. */
import { createListeners } from '../lib/listeners';

export interface Session {
  readonly uid: number;
  readonly token: string;
  /** The signing key for `sign` (DECISIONS.md §5). */
  readonly key: string;
  /** ISO 8601 time the service gave with the token. The service decides; a 401 ends the session. */
  readonly expires: string;
  /** The account name (or id) the user logged in with, for display. */
  readonly account: string;
}

/** Why the last session ended: the user logged out, or the service refused its token. */
export type SessionEnd = 'logout' | 'expired';

export interface SessionStore {
  get(): Session | null;
  /** Starts a session; `remember` keeps it across browser restarts (localStorage). */
  set(session: Session, options?: { remember?: boolean }): void;
  clear(): void;
  /** Why the session last ended, null while one is active or none ever was. */
  lastEnd(): SessionEnd | null;
  subscribe(listener: () => void): () => void;
  /** Ends the session only if `token` is still current: an old request must not end a newer session. */
  unauthorized(token: string): void;
  onUnauthorized(listener: () => void): () => void;
}

const STORAGE_KEY = 'fss.session';

/** The subset of the Web Storage API the store uses; tests give a Map-backed one. */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export function memoryStorage(): KeyValueStorage {
  const map = new Map<string, string>();
  return {
    getItem: (key) => map.get(key) ?? null,
    setItem: (key, value) => void map.set(key, value),
    removeItem: (key) => void map.delete(key),
  };
}

function browserStorage(name: 'sessionStorage' | 'localStorage'): KeyValueStorage | undefined {
  try {
    const storage = (globalThis as Record<string, unknown>)[name] as Storage | undefined;
    return storage ?? undefined;
  } catch {
    return undefined; // storage disabled (privacy settings): the session lives in memory only
  }
}

function parseSession(raw: string | null): Session | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Partial<Session>;
    if (
      typeof value.uid === 'number' &&
      typeof value.token === 'string' &&
      typeof value.key === 'string' &&
      typeof value.expires === 'string' &&
      typeof value.account === 'string'
    ) {
      return value as Session;
    }
  } catch {
    // fall through: a corrupt entry is no session
  }
  return null;
}

export function createSessionStore(
  storages: { session?: KeyValueStorage; local?: KeyValueStorage } = {
    session: browserStorage('sessionStorage'),
    local: browserStorage('localStorage'),
  },
): SessionStore {
  const tab = storages.session ?? memoryStorage();
  const persistent = storages.local ?? memoryStorage();
  const inTab = parseSession(tab.getItem(STORAGE_KEY));
  let current: Session | null = inTab ?? parseSession(persistent.getItem(STORAGE_KEY));
  /** Whether `current` lives in the persistent storage, shared with the other tabs. */
  let remembered = !inTab && current !== null;
  let ended: SessionEnd | null = null;
  const changes = createListeners();
  const refusals = createListeners();

  const write = (session: Session | null, remember: boolean) => {
    for (const storage of [tab, persistent]) {
      try {
        storage.removeItem(STORAGE_KEY);
      } catch {
        // storage unavailable: nothing to remove
      }
    }
    if (!session) return;
    try {
      (remember ? persistent : tab).setItem(STORAGE_KEY, JSON.stringify(session));
    } catch {
      // quota or privacy mode: the session still works in memory for this page
    }
  };

  const change = (session: Session | null, end: SessionEnd | null, remember = false) => {
    current = session;
    remembered = session !== null && remember;
    ended = end;
    write(session, remember);
    changes.emit();
  };

  // Another tab changed the shared (remembered) session: follow it, unless this tab has its own.
  if (typeof window !== 'undefined' && storages.local) {
    window.addEventListener('storage', (event) => {
      if (event.key !== STORAGE_KEY || event.storageArea !== (storages.local as unknown)) return;
      if (current && !remembered) return;
      const next = parseSession(event.newValue);
      if (next?.token === current?.token) return;
      current = next;
      remembered = next !== null;
      ended = next ? null : 'logout';
      changes.emit();
    });
  }

  return {
    get: () => current,
    set: (session, options) => change(session, null, options?.remember ?? false),
    clear: () => change(null, 'logout'),
    lastEnd: () => ended,
    subscribe: changes.subscribe,
    unauthorized(token) {
      if (!current || current.token !== token) return;
      change(null, 'expired');
      refusals.emit();
    },
    onUnauthorized: refusals.subscribe,
  };
}

export const session: SessionStore = createSessionStore();
