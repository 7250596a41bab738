import { useSyncExternalStore } from 'react';

/** The listeners of state kept outside React (for useSyncExternalStore): `emit` calls each one subscribed when it starts. */
export function createListeners() {
  const listeners = new Set<() => void>();
  return {
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    emit: () => [...listeners].forEach((listener) => listener()),
  };
}

/** A choice remembered on this device (localStorage `key`, removed where `kept` says no) and applied to the page as it changes. */
export function createPreference<T extends string>(
  key: string,
  valid: (value: unknown) => value is T,
  fallback: () => T,
  apply: (value: T) => void,
  kept: (value: T) => boolean = () => true,
) {
  let stored: T | undefined;
  try {
    const value = globalThis.localStorage?.getItem(key);
    stored = valid(value) ? value : undefined;
  } catch {
    stored = undefined;
  }
  let current = stored ?? fallback();
  apply(current);
  const { subscribe, emit } = createListeners();
  const get = () => current;
  return {
    get,
    set(value: T): void {
      try {
        if (kept(value)) globalThis.localStorage?.setItem(key, value);
        else globalThis.localStorage?.removeItem(key);
      } catch {
        // storage unavailable: the choice lasts for this page
      }
      if (value === current) return;
      current = value;
      apply(value);
      emit();
    },
    use: () => useSyncExternalStore(subscribe, get, get),
  };
}
