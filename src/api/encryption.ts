// Encryption (docs/encryption.md): no query of its own (it shows in the listings), what a 423 says is locked,
// and unlock requests by which code outside React (a download) asks the user for a password.
import { useMutation, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { api } from './client';
import { isApiError } from './errors';
import { cachedListings, invalidateFiles, useSettledMutation } from './files';
import type { Item } from './results';
import { session } from './session';
import { createListeners } from '../lib/listeners';

/** An encrypted item to unlock: what a 423 names (the root-most locked item on the way), with its hint. */
export interface ItemLock {
  readonly type: 'folder' | 'file';
  readonly id: number;
  /** The password hint; "" when there is none. */
  readonly tip: string;
}

/** The item a 423 asks to unlock; null otherwise, including FileEncrypt's "already encrypted", which names no type. */
export function lockOf(error: unknown): ItemLock | null {
  if (!isApiError(error, 'Locked')) return null;
  const { id, type, tip } = error.details;
  if (typeof id !== 'number' || (type !== 'folder' && type !== 'file')) return null;
  return { type, id, tip: typeof tip === 'string' ? tip : '' };
}

/** Unlock's and Decrypt's item: the folder's id in dirid, or the file's in fid, the other 0. */
const targetParams = (item: { readonly type: 'folder' | 'file'; readonly id: number }) =>
  item.type === 'folder' ? { dirid: item.id, fid: 0 } : { dirid: 0, fid: item.id };

const refOf = (item: Item) => ({ type: item.type, id: item.id }) as const;

/** An item's name from any cached listing or path: the service's 423 and 409 name items by id only. */
export function cachedItemName(client: QueryClient, item: { readonly type: 'folder' | 'file'; readonly id: number }): string | undefined {
  for (const [, listing] of cachedListings(client)) {
    const found = (item.type === 'folder' ? listing.folders : listing.files).find((candidate) => candidate.id === item.id);
    if (found) return found.name;
    if (item.type === 'folder') {
      const dir = listing.path?.dirs.find((segment) => segment.id === item.id);
      if (dir && dir.id !== 0) return dir.name;
    }
  }
  return undefined;
}

export interface EncryptVariables {
  readonly item: Item;
  readonly password: string;
  readonly tip: string;
}

/** A big folder goes on in the background (its listing shows `progress`); either way the item is locked at once. */
export const useEncryptItem = () =>
  useSettledMutation(
    ({ item, password, tip }: EncryptVariables) =>
      item.type === 'folder' ? api.folderEncrypt({ dirid: item.id, password, password_tip: tip }) : api.fileEncrypt({ fid: item.id, password, password_tip: tip }),
    invalidateFiles,
  );

/** An item inside an encrypted folder answers 409 with that folder's `id` (see `insideFolderOf`). */
export const useDecryptItem = () =>
  useSettledMutation(({ item, password }: { readonly item: Item; readonly password: string }) => api.decrypt({ ...targetParams(refOf(item)), password }), invalidateFiles);

/** The encrypted folder a Decrypt refusal (409 with an id) says the item is inside; undefined otherwise. */
export function insideFolderOf(error: unknown): number | undefined {
  if (!isApiError(error, 'Conflict')) return undefined;
  const { id } = error.details;
  return typeof id === 'number' ? id : undefined;
}

/** Unlock for this session, then refetch every listing. `onUnlocked` is given here, not to mutate(): the asking form is often unmounted by then. */
export function useUnlockItem({ onUnlocked }: { readonly onUnlocked?: () => void } = {}) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ lock, password }: { readonly lock: ItemLock; readonly password: string }) => api.unlock({ ...targetParams(lock), password }),
    onSuccess: async (_result, { lock }) => {
      rememberUnlocked(lock, true);
      await invalidateFiles(client);
      onUnlocked?.();
    },
  });
}

/** Unlock requests from code outside React, answered by UnlockRequests (unlock-dialog.tsx); several for one item share one dialog. */
export type UnlockAnswer = 'unlocked' | 'cancelled' | 'unavailable';

export interface UnlockRequest {
  readonly lock: ItemLock;
  /** Answers every caller waiting for this item, and takes the request away. */
  readonly answer: (answer: Exclude<UnlockAnswer, 'unavailable'>) => void;
}

let requests: readonly UnlockRequest[] = [];
/** The callers waiting for each requested item ("folder:12"). */
const waitingFor = new Map<string, ((answer: UnlockAnswer) => void)[]>();
let hosts = 0;
const { subscribe, emit } = createListeners();

/** Asks the user to unlock `lock`; 'unavailable' at once when no page can show the dialog. */
export function requestUnlock(lock: ItemLock): Promise<UnlockAnswer> {
  if (hosts === 0) return Promise.resolve('unavailable');
  return new Promise((resolve) => {
    const key = `${lock.type}:${lock.id}`;
    const waiting = waitingFor.get(key);
    if (waiting) {
      waiting.push(resolve);
      return;
    }
    const callers: ((answer: UnlockAnswer) => void)[] = [resolve];
    waitingFor.set(key, callers);
    const request: UnlockRequest = {
      lock,
      answer: (answer) => {
        if (waitingFor.get(key) !== callers) return; // answered already
        waitingFor.delete(key);
        requests = requests.filter((candidate) => candidate !== request);
        emit();
        for (const caller of callers) caller(answer);
      },
    };
    requests = [...requests, request];
    emit();
  });
}

/** Passwords one call may ask for in turn: a file with its own password in an encrypted folder needs two. */
const MAX_UNLOCKS_PER_CALL = 3;

/** Runs `call`, asking to unlock and retrying while it meets locked items; undefined when the user declines. */
export async function withUnlock<T>(call: () => Promise<T>): Promise<T | undefined> {
  for (let unlocks = 0; ; unlocks++) {
    try {
      return await call();
    } catch (error) {
      const lock = lockOf(error);
      if (!lock || unlocks >= MAX_UNLOCKS_PER_CALL) throw error;
      const answer = await requestUnlock(lock);
      if (answer === 'unavailable') throw error;
      if (answer === 'cancelled') return undefined;
    }
  }
}

/** The request to show now: the oldest one waiting, or null. */
export const currentUnlockRequest = (): UnlockRequest | null => requests[0] ?? null;

export function useUnlockRequest(): UnlockRequest | null {
  return useSyncExternalStore(subscribe, currentUnlockRequest, currentUnlockRequest);
}

/** Says that a component can show unlock requests (from its mount to the returned function). */
export function registerUnlockHost(): () => void {
  hosts++;
  return () => {
    hosts--;
    // The last host went (the page changed): nobody will answer what waits.
    if (hosts === 0) for (const request of [...requests]) request.answer('cancelled');
  };
}

// ---- What this tab unlocked: the service's listings do not say, so the app remembers (per tab, as the session is kept).

const UNLOCKED_KEY = 'fss.unlocked';
const refKey = (item: { readonly type: 'folder' | 'file'; readonly id: number }) => `${item.type}:${item.id}`;
function readUnlocked(): Set<string> {
  try {
    return new Set(JSON.parse(sessionStorage.getItem(UNLOCKED_KEY) ?? '[]') as string[]);
  } catch {
    return new Set();
  }
}
const unlocked = readUnlocked();
function saveUnlocked(): void {
  try {
    sessionStorage.setItem(UNLOCKED_KEY, JSON.stringify([...unlocked]));
  } catch {
    // No storage (a test, a private window): remembered until a reload.
  }
}
// A session that ends (Logout, expiry) takes its unlocks with it.
session.subscribe(() => {
  if (session.get()) return;
  unlocked.clear();
  saveUnlocked();
});

/** Records that this tab's session unlocked (or locked) `item`. */
export function rememberUnlocked(item: { readonly type: 'folder' | 'file'; readonly id: number }, isUnlocked: boolean): void {
  if (isUnlocked) unlocked.add(refKey(item));
  else unlocked.delete(refKey(item));
  saveUnlocked();
}

/**
 * What to Lock so that an encrypted `item` is locked again: itself when this tab unlocked it, else the unlocked folder on its
 * path (`pathIds`) whose password it shares (encryption does not nest); null when it is not known to be unlocked.
 */
export function unlockedHolder(item: Item, pathIds: readonly number[] = []): { readonly type: 'folder' | 'file'; readonly id: number } | null {
  if (!item.encrypted) return null;
  if (unlocked.has(refKey(item))) return refOf(item);
  const folder = pathIds.find((id) => unlocked.has(refKey({ type: 'folder', id })));
  return folder === undefined ? null : { type: 'folder', id: folder };
}

/** Lock (ext): this session forgets the password of `holder` (see unlockedHolder); every listing is read again, locked. */
export function useLockItem() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (holder: { readonly type: 'folder' | 'file'; readonly id: number }) => api.lock(targetParams(holder)),
    onSuccess: (_result, holder) => rememberUnlocked(holder, false),
    onSettled: () => invalidateFiles(client),
  });
}
