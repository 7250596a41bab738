/** Short messages about finished or failed actions; errors stay until dismissed, the rest go after a few seconds. */
import { useSyncExternalStore } from 'react';
import { createListeners } from './listeners';

export interface Notice {
  readonly id: number;
  readonly kind: 'info' | 'error';
  readonly text: string;
  /** The service's own message, for errors. */
  readonly detail?: string;
  /** Takes the action back (a move, a delete to the bin); offered for UNDO_MS. */
  readonly undo?: () => void;
}

const INFO_MS = 6000;
export const UNDO_MS = 8000;
let notices: readonly Notice[] = [];
let nextId = 1;
const { subscribe, emit } = createListeners();
const timers = new Map<number, ReturnType<typeof setTimeout>>();

export function dismissNotice(id: number): void {
  clearTimeout(timers.get(id));
  timers.delete(id);
  notices = notices.filter((notice) => notice.id !== id);
  emit();
}

/** Keeps a notice while the pointer or focus is on it (time to read it, or to reach its Undo); on release it gets its full time again. */
export function holdNotice(id: number, held: boolean): void {
  const notice = notices.find((candidate) => candidate.id === id);
  if (!notice || notice.kind === 'error') return;
  clearTimeout(timers.get(id));
  if (held) timers.delete(id);
  else timers.set(id, setTimeout(() => dismissNotice(id), notice.undo ? UNDO_MS : INFO_MS));
}

function add(notice: Notice) {
  notices = [...notices.slice(-4), notice];
  emit();
  holdNotice(notice.id, false);
}

export function notify(kind: Notice['kind'], text: string, detail?: string): void {
  add({ id: nextId++, kind, text, ...(detail ? { detail } : {}) });
}

/** A notice with an Undo button; `undo` runs at most once, and the notice goes when it is pressed. */
export function notifyUndoable(text: string, undo: () => void): void {
  const id = nextId++;
  add({
    id,
    kind: 'info',
    text,
    undo: () => {
      if (!notices.some((notice) => notice.id === id)) return;
      dismissNotice(id);
      undo();
    },
  });
}

/** The newest notice that can still be undone (Ctrl+Z). */
export function latestUndoable(): Notice | undefined {
  return notices.findLast((notice) => notice.undo !== undefined);
}

const snapshot = () => notices;

export function useNotices(): readonly Notice[] {
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}
