/**
 * Reads kept at the account's version (docs/design.md §8, "The call path"): what the checks of a
 * call read about an account (its token, the folder it names) is kept in memory with the version
 * it was read at, and used again while that is still the account's version.
 *
 * The account's version (storage/db/hot-queries.ts accountVersion) is a counter that the database
 * itself moves on, in triggers, with every committed change to the account's folders, files,
 * encryption (migration 0008_listing_versions) and sessions (0011_session_versions), whoever makes
 * it: this process, another instance on the same PostgreSQL, the CLI. A value is kept with a
 * version read no later than the value itself, so it can be newer than its version but never older;
 * and it is used only while the account's version read afresh is the same. A change committed
 * anywhere is therefore seen by the next call, exactly as without the cache.
 *
 * Every authenticated call reads its account's version once, when its token is checked
 * (sessions.ts: it is `caller.accountVersion`), and its checks use that reading: one small query
 * instead of one per check. Bounded: KEPT_ENTRIES per database, least recently used first.
 */
import type { Kysely } from 'kysely';
import { lockChain, type LockLink } from '../storage/db/encryption-repository';
import { isLiveFolderOf } from '../storage/db/hot-queries';
import type { Database } from '../storage/db/schema';
import type { CallContext, Services } from './context';

/** How many reads each database's store keeps (a few hundred bytes each). */
export const KEPT_ENTRIES = 20_000;

export interface Kept<V> {
  /** The account's version the value was read at (or after). */
  readonly version: number;
  readonly value: V;
}

/** A kept value, and when it was last put at the end of the order. */
interface Entry<V> extends Kept<V> {
  placedAt: number;
}

/**
 * Values by key, each with its version; least recently used first (a Map keeps insertion order).
 *
 * A value used is moved to the end of the order only when at least half the bound has been placed
 * after it since it last was: moving costs a delete and an insert in the map, which a store in
 * steady use (every call reads its token) paid on every call for nothing. A value used at least
 * once every maxEntries / 2 placements is therefore never let go, as with a strict order; among
 * the others, the one let go is the one placed longest ago.
 */
export class KeptReads<V> {
  readonly #entries = new Map<string, Entry<V>>();
  /** Placements at the end of the order so far. */
  #placements = 0;

  constructor(readonly maxEntries = KEPT_ENTRIES) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The value kept under `key` and its version, whatever the version; undefined when none. */
  peek(key: string): Kept<V> | undefined {
    const kept = this.#entries.get(key);
    if (kept && this.#placements - kept.placedAt >= this.maxEntries / 2) {
      this.#entries.delete(key);
      this.#entries.set(key, kept);
      kept.placedAt = ++this.#placements;
    }
    return kept;
  }

  /** The value kept under `key` if it was read at `version`; a value of an older version is let go. */
  get(key: string, version: number): V | undefined {
    const kept = this.peek(key);
    if (!kept) return undefined;
    if (kept.version === version) return kept.value;
    if (kept.version < version) this.#entries.delete(key);
    return undefined;
  }

  /** Keeps `value`, read at `version`, unless a value of a later version is kept already. */
  put(key: string, version: number, value: V): void {
    const kept = this.#entries.get(key);
    if (kept && kept.version > version) return;
    this.#entries.delete(key);
    if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { version, value, placedAt: ++this.#placements });
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }
}

/** One store per database and kind (a process serving two databases, as tests do, keeps them apart). */
export function keptReadsPerDatabase<V>(): (services: Services) => KeptReads<V> {
  const stores = new WeakMap<Kysely<Database>, KeptReads<V>>();
  return (services) => {
    let store = stores.get(services.db);
    if (!store) stores.set(services.db, (store = new KeptReads<V>()));
    return store;
  };
}

/** The version a call's checks of `accountId` may use: the caller's reading, when it is of that account. */
export function callVersionOf(ctx: CallContext, accountId: number): number | undefined {
  return ctx.caller?.uid === accountId ? ctx.caller.accountVersion : undefined;
}

/** What the checks of a call on a folder need to know of it. */
export interface FolderState {
  /** The folder exists, is the account's and is not in the bin. */
  readonly live: boolean;
  /** The encrypted folders at and above it, root-most first (storage lockChain); [] when not live. */
  readonly lockChain: readonly LockLink[];
}

const folderStates = keptReadsPerDatabase<FolderState>();

/** A folder of the account (not the root), as of the call: kept at the call's version, else read. */
export async function folderState(ctx: CallContext, accountId: number, folderId: number): Promise<FolderState> {
  const version = callVersionOf(ctx, accountId);
  const key = `${accountId}/${folderId}`;
  const store = version === undefined ? null : folderStates(ctx.services);
  const kept = store?.get(key, version!);
  if (kept) return kept;
  const { db } = ctx.services;
  const live = await isLiveFolderOf(db, accountId, folderId);
  const state: FolderState = Object.freeze({ live, lockChain: Object.freeze(live ? await lockChain(db, accountId, { type: 'folder', id: folderId }) : []) });
  store?.put(key, version!, state);
  return state;
}
