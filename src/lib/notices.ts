/** Short messages about finished or failed actions; errors stay until dismissed, the rest go after a few seconds. */
import { useSyncExternalStore } from 'react';

export interface Notice {
  readonly id: number;
  readonly kind: 'info' | 'error';
  readonly text: string;
  /** The service's own message, for errors. */
  readonly detail?: string;
}

const INFO_MS = 6000;
let notices: readonly Notice[] = [];
let nextId = 1;
const listeners = new Set<() => void>();

function emit() {
  for (const listener of [...listeners]) listener();
}

export function dismissNotice(id: number): void {
  notices = notices.filter((notice) => notice.id !== id);
  emit();
}

export function notify(kind: Notice['kind'], text: string, detail?: string): void {
  const notice: Notice = { id: nextId++, kind, text, ...(detail ? { detail } : {}) };
  notices = [...notices.slice(-4), notice];
  emit();
  if (kind === 'info') setTimeout(() => dismissNotice(notice.id), INFO_MS);
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

const snapshot = () => notices;

export function useNotices(): readonly Notice[] {
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}
