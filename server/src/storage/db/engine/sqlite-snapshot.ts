/**
 * A consistent copy of the embedded SQLite file while a service writes to it (`fss backup`): VACUUM INTO reads one
 * snapshot in one read transaction, which in WAL mode never blocks the service's writers nor restarts (as the
 * online-backup API does when another process writes).
 */
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { SQLITE_FILE_NAME } from './database';

export interface SnapshotSummary {
  /** Rows of `files` (live and in the bin). */
  readonly files: number;
  /** Unfinished uploads left out: their bytes are in the upload folder, which is not backed up. */
  readonly unfinishedUploads: number;
}

/** Writes the database of `dataDir` as it is now to `targetFile` (which must not exist), less what only a running service needs. */
export function snapshotSqlite(dataDir: string, targetFile: string): SnapshotSummary {
  const live = new SQLite(path.join(dataDir, SQLITE_FILE_NAME), { fileMustExist: true });
  try {
    live.pragma('busy_timeout = 5000');
    live.prepare('VACUUM INTO ?').run(targetFile);
  } finally {
    live.close();
  }
  const copy = new SQLite(targetFile, { fileMustExist: true });
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`the copy of the database fails SQLite's quick_check: ${String(check)}`);
    // Locks of requests in flight end with their service; unfinished uploads start again from their clients.
    const left = copy.transaction(() => {
      copy.prepare('DELETE FROM upload_locks').run();
      return copy.prepare('DELETE FROM uploads WHERE completed_at IS NULL').run().changes;
    })();
    const files = (copy.prepare('SELECT count(*) AS n FROM files').get() as { n: number }).n;
    return { files, unfinishedUploads: left };
  } finally {
    copy.close();
  }
}
