import { QueryClient } from '@tanstack/react-query';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cachedItemName,
  currentUnlockRequest,
  insideFolderOf,
  lockOf,
  registerUnlockHost,
  rememberUnlocked,
  requestUnlock,
  unlockedHolder,
  withUnlock,
  type UnlockRequest,
} from './encryption';
import { ApiError } from './errors';
import { DEFAULT_SORT, fileKeys, hasRunningJobs } from './files';
import type { FileItem, FolderItem, Listing, PathListing } from './results';
import { session } from './session';

const folder = (id: number, name: string, extra: Partial<FolderItem> = {}): FolderItem => ({
  type: 'folder', id, dir: 0, name, time: '', size: 0, shared: false, linked: false, encrypted: false, ...extra,
});
const file = (id: number, name: string): FileItem => ({
  type: 'file', id, dir: 0, name, ext: 'txt', hash: '', time: '', size: 0, shared: false, linked: false, encrypted: false,
});
const listing = (folders: FolderItem[], files: FileItem[] = []): Listing => ({ count: folders.length + files.length, folders, files, truncated: false });

const locked = (details: Record<string, string | number>) => new ApiError('Locked', 'the item is in an encrypted folder: unlock the folder first', details, 423);

describe('lockOf', () => {
  it('reads the item to unlock from a 423: id, type and hint', () => {
    expect(lockOf(locked({ id: 12, tip: 'the cat', type: 'folder' }))).toEqual({ type: 'folder', id: 12, tip: 'the cat' });
    expect(lockOf(locked({ id: 3, type: 'file' }))).toEqual({ type: 'file', id: 3, tip: '' });
  });

  it('is null for the 423 "already encrypted" (no type), and for other errors', () => {
    expect(lockOf(locked({ id: 12 }))).toBeNull();
    expect(lockOf(new ApiError('Forbidden', 'wrong password', {}, 403))).toBeNull();
    expect(lockOf(new Error('x'))).toBeNull();
  });
});

describe('insideFolderOf', () => {
  it('is the folder id of a Decrypt 409, else undefined', () => {
    expect(insideFolderOf(new ApiError('Conflict', 'the folder is inside an encrypted folder', { id: 7 }, 409))).toBe(7);
    expect(insideFolderOf(new ApiError('Conflict', 'the folder is not encrypted', {}, 409))).toBeUndefined();
    expect(insideFolderOf(locked({ id: 7, type: 'folder' }))).toBeUndefined();
  });
});

describe('cachedItemName', () => {
  it('finds a folder or file by id in cached listings, or a folder on a cached path', () => {
    const client = new QueryClient();
    client.setQueryData(fileKeys.listing(0, DEFAULT_SORT), listing([folder(5, 'Vault')], [file(5, 'notes.txt')]));
    const withPath: PathListing = { ...listing([]), path: { value: '/Vault/Deep', dirs: [{ id: 0, name: '' }, { id: 5, name: 'Vault' }, { id: 9, name: 'Deep' }] } };
    client.setQueryData(fileKeys.withPath(9, DEFAULT_SORT), withPath);
    expect(cachedItemName(client, { type: 'folder', id: 5 })).toBe('Vault');
    expect(cachedItemName(client, { type: 'file', id: 5 })).toBe('notes.txt');
    expect(cachedItemName(client, { type: 'folder', id: 9 })).toBe('Deep');
    expect(cachedItemName(client, { type: 'folder', id: 4 })).toBeUndefined();
  });
});

describe('hasRunningJobs', () => {
  it('is true while a folder of the listing shows a job below 100%', () => {
    expect(hasRunningJobs(undefined)).toBe(false);
    expect(hasRunningJobs(listing([folder(1, 'A')]))).toBe(false);
    expect(hasRunningJobs(listing([folder(1, 'A'), folder(2, 'B', { encrypted: true, progress: 40 })]))).toBe(true);
    expect(hasRunningJobs(listing([folder(2, 'B', { encrypted: true, progress: 100 })]))).toBe(false);
  });
});

describe('withUnlock', () => {
  let unregister: (() => void) | undefined;
  afterEach(() => {
    unregister?.();
    unregister = undefined;
  });

  /** A host that answers each request as `answer` says, and records what it was asked. */
  function host(answer: (request: UnlockRequest) => 'unlocked' | 'cancelled') {
    const asked: UnlockRequest[] = [];
    const stop = registerUnlockHost();
    // The host component re-renders on each new request (useUnlockRequest); here, poll for it.
    const timer = setInterval(() => {
      const next = currentUnlockRequest();
      if (next && !asked.includes(next)) {
        asked.push(next);
        next.answer(answer(next));
      }
    }, 1);
    unregister = () => {
      clearInterval(timer);
      stop();
    };
    return asked;
  }

  it('returns the result at once when nothing is locked', async () => {
    expect(await withUnlock(async () => 42)).toBe(42);
  });

  it('rethrows a 423 when no page can ask for the password', async () => {
    const error = locked({ id: 12, tip: '', type: 'folder' });
    await expect(withUnlock(() => Promise.reject(error))).rejects.toBe(error);
  });

  it('asks to unlock what the 423 names, then calls again', async () => {
    const asked = host(() => 'unlocked');
    let calls = 0;
    const result = await withUnlock(async () => {
      calls++;
      if (calls === 1) throw locked({ id: 12, tip: 'hint', type: 'folder' });
      return 'url';
    });
    expect(result).toBe('url');
    expect(calls).toBe(2);
    expect(asked.map((request) => request.lock)).toEqual([{ type: 'folder', id: 12, tip: 'hint' }]);
  });

  it('asks again when another password on the way is needed (a file with its own, in an encrypted folder)', async () => {
    const asked = host(() => 'unlocked');
    const answers = [locked({ id: 12, type: 'folder' }), locked({ id: 3, type: 'file' })];
    const result = await withUnlock(async () => {
      const next = answers.shift();
      if (next) throw next;
      return 'url';
    });
    expect(result).toBe('url');
    expect(asked.map((request) => `${request.lock.type}${request.lock.id}`)).toEqual(['folder12', 'file3']);
  });

  it('answers undefined when the user cancels', async () => {
    host(() => 'cancelled');
    expect(await withUnlock(() => Promise.reject(locked({ id: 12, type: 'folder' })))).toBeUndefined();
  });

  it('shows one request for several callers waiting on the same item', async () => {
    unregister = registerUnlockHost();
    const first = requestUnlock({ type: 'folder', id: 12, tip: '' });
    const second = requestUnlock({ type: 'folder', id: 12, tip: '' });
    const request = currentUnlockRequest();
    expect(request?.lock.id).toBe(12);
    request?.answer('unlocked');
    expect(await Promise.all([first, second])).toEqual(['unlocked', 'unlocked']);
    expect(currentUnlockRequest()).toBeNull();
  });

  it('cancels what waits when the last host goes', async () => {
    const stop = registerUnlockHost();
    const waiting = requestUnlock({ type: 'file', id: 3, tip: '' });
    stop();
    expect(await waiting).toBe('cancelled');
  });
});

describe('unlockedHolder: what Lock locks again', () => {
  const encrypted = { ...file(9, 'diary.txt'), encrypted: true };
  afterEach(() => session.clear());

  it('an encrypted item this tab unlocked is its own holder; a plain or never unlocked one has none', () => {
    rememberUnlocked({ type: 'file', id: 9 }, true);
    expect(unlockedHolder(encrypted)).toEqual({ type: 'file', id: 9 });
    expect(unlockedHolder({ ...encrypted, id: 10 })).toBeNull();
    expect(unlockedHolder(file(9, 'diary.txt'))).toBeNull();
    rememberUnlocked({ type: 'file', id: 9 }, false);
    expect(unlockedHolder(encrypted)).toBeNull();
  });

  it('an encrypted item inside an unlocked folder of the path is held by that folder', () => {
    rememberUnlocked({ type: 'folder', id: 5 }, true);
    expect(unlockedHolder({ ...encrypted, id: 11 }, [0, 5, 7])).toEqual({ type: 'folder', id: 5 });
    expect(unlockedHolder({ ...encrypted, id: 11 }, [0, 6])).toBeNull();
  });

  it('the end of the session forgets every unlock', () => {
    session.set({ uid: 1, token: 't', key: 'k', expires: '', account: 'alice' });
    rememberUnlocked({ type: 'folder', id: 5 }, true);
    session.clear();
    expect(unlockedHolder(encrypted, [5])).toBeNull();
  });
});
