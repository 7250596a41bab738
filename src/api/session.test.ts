import { describe, expect, it, vi } from 'vitest';
import { createSessionStore, memoryStorage, type Session } from './session';

const alice: Session = { uid: 1001, token: 'tok-a', key: 'k', expires: '2026-11-22T10:00:00Z', account: 'alice' };

describe('the session store', () => {
  it('keeps the session for this tab unless asked to remember it, and tells subscribers', () => {
    const tab = memoryStorage();
    const local = memoryStorage();
    const store = createSessionStore({ session: tab, local });
    const listener = vi.fn();
    store.subscribe(listener);

    store.set(alice);
    expect(store.get()).toEqual(alice);
    expect(tab.getItem('fss.session')).not.toBeNull();
    expect(local.getItem('fss.session')).toBeNull();

    store.set(alice, { remember: true });
    expect(tab.getItem('fss.session')).toBeNull();
    expect(local.getItem('fss.session')).not.toBeNull();
    expect(createSessionStore({ session: memoryStorage(), local }).get()).toEqual(alice);

    store.clear();
    expect(store.get()).toBeNull();
    expect(store.lastEnd()).toBe('logout');
    expect(local.getItem('fss.session')).toBeNull();
    expect(listener).toHaveBeenCalledTimes(3);
  });

  it('a 401 for an older token does not end a newer session', () => {
    const store = createSessionStore({ session: memoryStorage(), local: memoryStorage() });
    const onUnauthorized = vi.fn();
    store.onUnauthorized(onUnauthorized);
    store.set(alice);
    store.unauthorized('tok-old');
    expect(store.get()).toEqual(alice);
    store.unauthorized('tok-a');
    expect(store.get()).toBeNull();
    expect(store.lastEnd()).toBe('expired');
    expect(onUnauthorized).toHaveBeenCalledOnce();
  });

  it('ignores a corrupt stored session', () => {
    const tab = memoryStorage();
    tab.setItem('fss.session', '{"uid":"x"');
    expect(createSessionStore({ session: tab, local: memoryStorage() }).get()).toBeNull();
  });
});
