/**
 * Early writeback of files about to become content: an fdatasync started in the background while the file is written,
 * so the final fsync does not wait for a whole GiB. Errors are ignored here: the final fsync reports them.
 */
import { promises as fs } from 'node:fs';

/** Files with a writeback under way in this process: at most one at a time per file. */
const running = new Set<string>();

/** Asks the kernel to write `file`'s dirty pages to disk now, without waiting for it. */
export function startWriteback(file: string): void {
  if (running.has(file)) return;
  running.add(file);
  void datasync(file)
    .catch(() => {})
    .finally(() => running.delete(file));
}

async function datasync(file: string): Promise<void> {
  const handle = await fs.open(file, 'r');
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/** A writeback is started each time a file being written grows past a multiple of this. */
export const WRITEBACK_EVERY_BYTES = 16 * 1024 * 1024;

/** Whether writing from `from` to `to` crossed a multiple of `step` (WRITEBACK_EVERY_BYTES). */
export function crossedWritebackStep(from: number, to: number, step = WRITEBACK_EVERY_BYTES): boolean {
  return Math.floor(to / step) > Math.floor(from / step);
}

/** Writes `buffers` one after another from `position` (again after a short write); the position after them. */
export async function writeFully(handle: fs.FileHandle, buffers: Buffer[], position: number): Promise<number> {
  let rest = buffers;
  while (rest.length > 0) {
    let written = (await handle.writev(rest, position)).bytesWritten;
    position += written;
    while (rest.length > 0 && written >= rest[0].length) {
      written -= rest[0].length;
      rest = rest.slice(1);
    }
    if (written > 0) rest = [rest[0].subarray(written), ...rest.slice(1)];
  }
  return position;
}
