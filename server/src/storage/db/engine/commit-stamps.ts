/**
 * Whether anything was committed to an SQLite database since a given moment, for the price of one
 * small file read instead of a query: what lets the account's version (hot-queries.ts) be read once
 * and then used again by every call until something commits (docs/design.md §6).
 *
 * In WAL mode every SQLite connection to the file, in any process, shares the WAL index: the
 * `-shm` file beside the database, mapped into memory by each of them. It begins with a header, in
 * two copies of 48 bytes (https://www.sqlite.org/walformat.html, "The WAL-Index Header"), that the
 * writer rewrites on every commit: a counter of transactions, the last valid frame of the WAL, the
 * running checksum of its frames and the salts of the current WAL. A reader finds what has been
 * committed through this header and nothing else; SQLite itself decides by comparing it whether the
 * pages it holds in memory are still good. So two equal readings of it mean that no transaction
 * committed between them, whoever ran it.
 *
 * The writer writes the second copy first and the first copy last, and a reader that finds them
 * different caught a commit half done: the stamp is then null ("cannot tell"), as it is when the
 * file cannot be read, and the caller reads the database.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';

/** The size of one copy of the WAL-index header. */
export const WAL_INDEX_HEADER_BYTES = 48;

export class CommitStamps {
  readonly #fd: number;
  readonly #scratch = Buffer.alloc(2 * WAL_INDEX_HEADER_BYTES);
  #closed = false;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /**
   * The stamps of `database`, or null when it has none to read: not in WAL mode, in memory, or
   * holding its WAL index in its own memory (exclusive locking mode).
   */
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

  /**
   * The header as it is now (a fresh copy, the caller's to keep), or null when it cannot be told:
   * a commit half written, a header not yet written, the file unreadable or closed.
   */
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
