import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { dismissNotice, holdNotice, latestUndoable, notify, notifyUndoable, UNDO_MS } from './notices';

// The newest notice with Undo: what Ctrl+Z would press.
const current = () => latestUndoable();

describe('notices with Undo', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    for (let notice = current(); notice; notice = current()) dismissNotice(notice.id);
    vi.useRealTimers();
  });

  it('offers Undo for UNDO_MS, then goes by itself', () => {
    notifyUndoable('Moved “a.txt” to /B.', () => undefined);
    vi.advanceTimersByTime(UNDO_MS - 1);
    expect(current()?.text).toBe('Moved “a.txt” to /B.');
    vi.advanceTimersByTime(1);
    expect(current()).toBeUndefined();
  });

  it('runs the undo once, and the notice goes when it is pressed', () => {
    const undo = vi.fn();
    notifyUndoable('Moved “a.txt” to the recycle bin.', undo);
    const notice = current();
    notice?.undo?.();
    notice?.undo?.();
    expect(undo).toHaveBeenCalledTimes(1);
    expect(current()).toBeUndefined();
  });

  it('stays while held (pointer or focus on it), and gets its full time again when let go', () => {
    notifyUndoable('Moved 2 items to /B.', () => undefined);
    const id = current()!.id;
    holdNotice(id, true);
    vi.advanceTimersByTime(UNDO_MS * 3);
    expect(current()?.id).toBe(id);
    holdNotice(id, false);
    vi.advanceTimersByTime(UNDO_MS - 1);
    expect(current()?.id).toBe(id);
    vi.advanceTimersByTime(1);
    expect(current()).toBeUndefined();
  });

  it('Ctrl+Z takes the newest notice that can be undone, not a later plain one', () => {
    notifyUndoable('first', () => undefined);
    notifyUndoable('second', () => undefined);
    notify('info', 'Created “C”.');
    expect(current()?.text).toBe('second');
  });
});
