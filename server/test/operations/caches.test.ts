/** The call's caches (src/operations/caches.ts): one budget, FSS_CACHE_MB, over every kind. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { callCaches } from '../../src/operations/caches';
import type { KeptSession } from '../../src/operations/accounts/sessions';

describe('the call caches', () => {
  it('take their budget from FSS_CACHE_MB, or from FSS_LISTING_CACHE_MB, its former name, when it is not set', () => {
    expect(loadConfig({}).cacheMb).toBe(32);
    expect(loadConfig({ FSS_LISTING_CACHE_MB: '4' }).cacheMb).toBe(4);
    expect(loadConfig({ FSS_CACHE_MB: '8', FSS_LISTING_CACHE_MB: '4' }).cacheMb).toBe(8);
  });

  it('share one budget: values of one kind let the least recently used of another go', () => {
    const caches = callCaches({ cacheMb: 1 });
    caches.sessions.put('token', 1, {} as KeptSession, 1_000);
    for (let i = 0; i < 20; i++) caches.folderStates.put(`1/${i}`, 1, { live: true, lockChain: [] }, 100_000);
    expect(caches.sessions.get('token', 1)).toBeUndefined();
    expect(caches.folderStates.get('1/19', 1)).toEqual({ live: true, lockChain: [] });
  });

  it('keep nothing with a budget of 0', () => {
    const caches = callCaches({ cacheMb: 0 });
    caches.folderStates.put('1/1', 1, { live: true, lockChain: [] }, 1);
    expect(caches.folderStates.get('1/1', 1)).toBeUndefined();
    expect(caches.listings.enabled).toBe(false);
  });
});
