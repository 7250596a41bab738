import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../api/session';
import { createShareCodeStore } from './share-code-store';

describe('the share code store', () => {
  it('remembers the accepted extraction code per share, until forgotten', () => {
    const store = createShareCodeStore(memoryStorage());
    expect(store.acceptedCode('abc')).toBeNull();
    store.rememberCode('abc', 'pw12');
    store.rememberCode('xyz', 'other');
    expect(store.acceptedCode('abc')).toBe('pw12');
    store.forgetCode('abc');
    expect(store.acceptedCode('abc')).toBeNull();
    expect(store.acceptedCode('xyz')).toBe('other');
  });

  it('draws the trail from the shared folder down to the folder, from the folders opened', () => {
    const storage = memoryStorage();
    const store = createShareCodeStore(storage);
    // The shared folder is 5; the visitor opened 12 in it, then 30 in 12.
    store.rememberFolder('abc', 12, { name: 'Photos', parent: 5 });
    store.rememberFolder('abc', 30, { name: '2026', parent: 12 });
    expect(store.trail('abc', 5, 'Shared', 0)).toEqual([{ id: 0, name: 'Shared' }]);
    expect(store.trail('abc', 5, 'Shared', 5)).toEqual([{ id: 0, name: 'Shared' }]);
    expect(store.trail('abc', 5, 'Shared', 30)).toEqual([
      { id: 0, name: 'Shared' },
      { id: 12, name: 'Photos' },
      { id: 30, name: '2026' },
    ]);
    // Another store over the same storage (a reload) knows them too; another share does not.
    expect(createShareCodeStore(storage).trail('abc', 5, 'Shared', 12)).toEqual([
      { id: 0, name: 'Shared' },
      { id: 12, name: 'Photos' },
    ]);
    expect(store.trail('xyz', 5, 'Shared', 12)).toEqual([
      { id: 0, name: 'Shared' },
      { id: -1, name: '' },
      { id: 12, name: '' },
    ]);
  });

  it('marks the stretch it never saw, above a folder it knows', () => {
    const store = createShareCodeStore(memoryStorage());
    store.rememberFolder('abc', 30, { name: '2026', parent: 12 });
    expect(store.trail('abc', 5, 'Shared', 30)).toEqual([
      { id: 0, name: 'Shared' },
      { id: -1, name: '' },
      { id: 30, name: '2026' },
    ]);
  });

  it('survives a loop in what it was told, and forgets the oldest folders beyond 500', () => {
    const store = createShareCodeStore(memoryStorage());
    store.rememberFolder('abc', 1, { name: 'a', parent: 2 });
    store.rememberFolder('abc', 2, { name: 'b', parent: 1 });
    expect(store.trail('abc', 5, 'Shared', 1).at(1)).toEqual({ id: -1, name: '' });

    for (let id = 100; id < 700; id++) store.rememberFolder('abc', id, { name: `f${id}`, parent: 5 });
    expect(store.trail('abc', 5, 'Shared', 150)).toEqual([{ id: 0, name: 'Shared' }, { id: -1, name: '' }, { id: 150, name: '' }]);
    expect(store.trail('abc', 5, 'Shared', 699)).toEqual([{ id: 0, name: 'Shared' }, { id: 699, name: 'f699' }]);
  });

  it('keeps working when the storage refuses', () => {
    const broken = { getItem: () => { throw new Error('blocked'); }, setItem: () => { throw new Error('blocked'); }, removeItem: () => { throw new Error('blocked'); } };
    const store = createShareCodeStore(broken);
    store.rememberCode('abc', 'pw12');
    store.rememberFolder('abc', 12, { name: 'Photos', parent: 5 });
    expect(store.acceptedCode('abc')).toBeNull();
    expect(store.trail('abc', 5, 'Shared', 12)).toHaveLength(3);
  });
});
