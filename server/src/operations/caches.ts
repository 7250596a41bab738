/**
 * The call path's caches (docs/design.md §6), one object per app built by buildApp: sessions, folder states and
 * listings share one LRU and budget, each value kept with the account version it was read at.
 */
import type { Config } from '../config';
import { Lru } from '../lru';
import { AccountVersions } from '../storage/db/engine/hot-queries';
import type { FolderState } from './accounts/account-reads';
import type { KeptListing } from './tree/listing-cache';
import type { KeptSession } from './accounts/sessions';

const MIB = 1024 * 1024;

export interface Kept<V> {
  /** The account's version the value was read at (or after). */
  readonly version: number;
  readonly value: V;
}

/** Values of one kind read at an account's version, in the shared order under keys of their own. */
export class KeptReads<V> {
  constructor(
    private readonly lru: Lru<string, Kept<unknown>>,
    private readonly kind: string,
  ) {}

  get enabled(): boolean {
    return this.lru.budget > 0;
  }

  /** The value kept under `key`, whatever its version. */
  peek(key: string): Kept<V> | undefined {
    return this.lru.get(this.kind + key) as Kept<V> | undefined;
  }

  /** The value kept under `key` if read at `version`; an older one is let go. */
  get(key: string, version: number): V | undefined {
    const kept = this.peek(key);
    if (!kept) return undefined;
    if (kept.version === version) return kept.value;
    if (kept.version < version) this.delete(key);
    return undefined;
  }

  /** Keeps `value` unless one of a later version is kept already. */
  put(key: string, version: number, value: V, bytes: number): void {
    const kept = this.peek(key);
    if (kept && kept.version > version) return;
    this.lru.set(this.kind + key, { version, value }, bytes);
  }

  delete(key: string): void {
    this.lru.delete(this.kind + key);
  }
}

export interface CallCaches {
  /** Token rows and their unsealed signing keys, by the token's hash (sessions.ts). */
  readonly sessions: KeptReads<KeptSession>;
  /** Whether a folder is live and its encrypted ancestors, by account and folder (account-reads.ts). */
  readonly folderStates: KeptReads<FolderState>;
  /** Folder listings of up to 2,000 items and their rendered answers (listing-cache.ts). */
  readonly listings: KeptReads<KeptListing>;
  /** On SQLite, the accounts' versions read since the last commit (hot-queries.ts). */
  readonly accountVersions: AccountVersions;
}

export function callCaches(config: Pick<Config, 'cacheMb'>): CallCaches {
  const lru = new Lru<string, Kept<unknown>>(config.cacheMb * MIB);
  return {
    sessions: new KeptReads(lru, 's:'),
    folderStates: new KeptReads(lru, 'f:'),
    listings: new KeptReads(lru, 'l:'),
    accountVersions: new AccountVersions(),
  };
}
