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
