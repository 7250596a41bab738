/**
 * Whether anything was committed to a SQLite file since a moment, for one small read of the WAL-index header in
 * `-shm` (https://www.sqlite.org/walformat.html), which the writer rewrites on every commit: equal readings mean no
 * commit between them. The two copies differing (a commit half done) or an unreadable file give null: read the database.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';

export const WAL_INDEX_HEADER_BYTES = 48;

export class CommitStamps {
  readonly #fd: number;
  readonly #scratch = Buffer.alloc(2 * WAL_INDEX_HEADER_BYTES);
  #closed = false;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /** The stamps of `database`; null when not in WAL mode, in memory, or in exclusive locking mode. */
  static of(database: BetterSqlite3.Database): CommitStamps | null {
    if (database.memory || database.readonly) return null;
    if (String(database.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return null;
    if (String(database.pragma('locking_mode', { simple: true })).toLowerCase() !== 'normal') return null;
    return CommitStamps.ofIndexFile(`${database.name}-shm`);
  }

  /** The stamps read from a WAL-index file; null when it cannot be opened. */
  static ofIndexFile(indexPath: string): CommitStamps | null {
    try {
      return new CommitStamps(openSync(indexPath, 'r'));
    } catch {
      return null;
    }
  }

  /** The header now (a fresh copy), or null when it cannot be told (half-written commit, unset, unreadable). */
  current(): Buffer | null {
    const header = this.#read();
    return header && Buffer.from(header);
  }

  /** Whether the header is now exactly `stamp`: nothing committed since `stamp` was taken. */
  unchangedSince(stamp: Buffer): boolean {
    const header = this.#read();
    return header !== null && header.equals(stamp);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.#fd);
  }

  /** The first copy of the header, in the scratch buffer, when both copies agree and it is set up. */
  #read(): Buffer | null {
    if (this.#closed) return null;
    let length: number;
    try {
      length = readSync(this.#fd, this.#scratch, 0, this.#scratch.length, 0);
    } catch {
      return null;
    }
    if (length !== this.#scratch.length) return null;
    const first = this.#scratch.subarray(0, WAL_INDEX_HEADER_BYTES);
    // isInit, the 13th byte: 1 once a connection has built the index (0 while it is being rebuilt).
    if (first[12] !== 1) return null;
    return first.equals(this.#scratch.subarray(WAL_INDEX_HEADER_BYTES)) ? first : null;
  }
}
