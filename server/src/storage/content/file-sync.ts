/** fsync helpers: a power loss loses what was not synced, and on ext4 a size may cover zeros (docs/uploads-and-downloads.md §3). */
import { constants, promises as fs } from 'node:fs';

/** fsync(2) of a file by name: its bytes and its metadata. */
export async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes a directory's entries durable; platforms that cannot fsync a directory (Windows) refuse, and nothing more can be done. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(dir, constants.O_RDONLY);
  } catch (error) {
    if (['EISDIR', 'EPERM', 'EINVAL'].includes((error as NodeJS.ErrnoException).code ?? '')) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!['EISDIR', 'EPERM', 'EINVAL', 'EBADF'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    await handle.close();
  }
}

/** Writes `bytes` as the whole of `file` (created 0600 if new; `wx`: only new), and fsyncs it. */
export async function writeFileSynced(file: string, bytes: Buffer, flags: 'w' | 'wx' = 'w'): Promise<void> {
  const handle = await fs.open(file, flags, 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** What `work` gives, or `missing` when it fails because the file is not there (ENOENT). */
export function unlessMissing<T, M>(work: Promise<T>, missing: M): Promise<T | M> {
  return work.catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? missing : Promise.reject(error)));
}
