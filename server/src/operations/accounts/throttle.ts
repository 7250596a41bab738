/**
 * Throttling of repeated failures: logins, and share codes and extraction codes (ShareService); and
 * of successful logins from one address, each of which costs a password hash as a failure does.
 * Stateless: every count lives in the database, so all instances behind a load balancer share it.
 *
 * A counter counts the failures of one run. Reaching the rule's limit blocks the counter; every
 * further failure in the same run doubles the block, up to a maximum. A run ends after `windowMs`
 * without a new run start or block, and the next failure starts again from one.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../storage/db/schema';
import { blockUntil, clearThrottle, countFailure, deleteStaleThrottles, findThrottleStates } from '../../storage/db/repositories/throttle-repository';

export interface ThrottleRule {
  /** Failures in one run before the first block. */
  readonly limit: number;
  readonly windowMs: number;
  readonly firstBlockMs: number;
  readonly maxBlockMs: number;
}

/** A counter and the rule that applies to it. */
export interface Counter {
  readonly key: string;
  readonly rule: ThrottleRule;
}

const MINUTE = 60_000;

export const loginRules = {
  /** One account from one address: someone mistyping, or a guesser aiming at one account. */
  pair: { limit: 5, windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 60 * MINUTE },
  /**
   * One account, whatever the address: a guesser spreading attempts over many addresses. Higher
   * and shorter than the pair's rule, because anyone can trip it and lock the owner out for a while.
   */
  account: { limit: 20, windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 15 * MINUTE },
  /** One address, whatever the account: a guesser spreading attempts over many accounts. */
  address: { limit: 50, windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 60 * MINUTE },
} as const satisfies Record<string, ThrottleRule>;

/**
 * Share codes and extraction codes (ShareService, operations/sharing/share-service.ts). A share code is 128
 * random bits, so wrong ones are counted per address only (nobody guesses one; an address trying
 * many is a scanner). Wrong extraction codes are counted like passwords: per (share, address)
 * pair, per share whatever the address (lower block maximum: anyone can trip it), and per address.
 */
export const shareRules = {
  /** One address, wrong share codes and wrong extraction codes of any share together. */
  address: { limit: 30, windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 60 * MINUTE },
  /** One share from one address. */
  pair: { limit: 5, windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 60 * MINUTE },
  /** One share, whatever the address. */
  share: { limit: 20, windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 15 * MINUTE },
} as const satisfies Record<string, ThrottleRule>;

/** The counter of wrong share codes and wrong extraction codes from one address. */
export function shareAddressCounter(clientAddress: string): Counter {
  return { key: `share-address:${clientAddress}`, rule: shareRules.address };
}

/** The counters of wrong extraction codes of one share: the (share, address) pair, then the share. */
export function extractionCodeCounters(shareId: number, clientAddress: string): [pair: Counter, share: Counter] {
  return [
    { key: `share-code:${shareId}@${clientAddress}`, rule: shareRules.pair },
    { key: `share-code-share:${shareId}`, rule: shareRules.share },
  ];
}

/**
 * Successful Logins from one address, whatever the account: the limit is a setting
 * (FSS_LOGINS_PER_ADDRESS, default 100), since many people behind one office's address log in
 * rightly. Anyone there can trip it, so its blocks stay short, as the account counter's.
 */
const successfulLoginsRule = { windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 15 * MINUTE } as const;

/** A counter whose run ended (nothing for the longest window of any rule) can be forgotten. */
const LONGEST_WINDOW_MS = Math.max(
  ...[...Object.values(loginRules), ...Object.values(shareRules), successfulLoginsRule].map((rule) => rule.windowMs),
);

/** The counter of successful Logins from one address: blocks after `limit` in a run. */
export function successfulLoginsCounter(clientAddress: string, limit: number): Counter {
  return { key: `login-ok:${clientAddress}`, rule: { ...successfulLoginsRule, limit } };
}

/** The counter of every failed login (password or API key) from one address. */
export function addressCounter(clientAddress: string): Counter {
  return { key: `login-address:${clientAddress}`, rule: loginRules.address };
}

/**
 * The counters of a password login: the (account, address) pair, the account, then the address. `account` is
 * the account's id, or, for a name or id that matches no account, what was tried: an unknown
 * account is throttled exactly like a known one, so throttling reveals nothing either.
 */
export function loginCounters(account: string, clientAddress: string): [pair: Counter, account: Counter, address: Counter] {
  return [
    { key: `login:${account}@${clientAddress}`, rule: loginRules.pair },
    { key: `login-account:${account}`, rule: loginRules.account },
    addressCounter(clientAddress),
  ];
}

/** Whole seconds until none of the counters is blocked; 0 when none is. */
export async function secondsBlocked(db: Kysely<Database>, counters: readonly Counter[], now: Date): Promise<number> {
  const states = await findThrottleStates(
    db,
    counters.map((counter) => counter.key),
  );
  const until = Math.max(now.getTime(), ...states.map((state) => state.blockedUntil.getTime()));
  return Math.ceil((until - now.getTime()) / 1000);
}

/**
 * Counts a failure (or, on the counter of successful logins, a success) on every counter; returns
 * whole seconds until all are unblocked (0 if none is).
 */
export async function recordFailure(db: Kysely<Database>, counters: readonly Counter[], now: Date): Promise<number> {
  let until = now.getTime();
  for (const { key, rule } of counters) {
    const state = await countFailure(db, key, now, rule.windowMs);
    const beyond = state.failures - rule.limit;
    if (beyond < 0) continue;
    // The exponent is capped so that a very long run cannot overflow to Infinity.
    const blockMs = Math.min(rule.firstBlockMs * 2 ** Math.min(beyond, 40), rule.maxBlockMs);
    const blockedUntil = now.getTime() + blockMs;
    await blockUntil(db, key, new Date(blockedUntil));
    until = Math.max(until, blockedUntil);
  }
  return Math.ceil((until - now.getTime()) / 1000);
}

/** Forgets a counter's failures (a login succeeded). */
export async function clearFailures(db: Kysely<Database>, counter: Counter): Promise<void> {
  await clearThrottle(db, counter.key);
}

/** Forgets counters whose runs have ended; for periodic housekeeping. */
export async function purgeStaleCounters(db: Kysely<Database>, now: Date): Promise<number> {
  return deleteStaleThrottles(db, new Date(now.getTime() - LONGEST_WINDOW_MS));
}

// ---- Item passwords (Unlock, Decrypt: operations/encryption/encryption.ts) ------------------------------

/**
 * Wrong passwords of encrypted items (DECISIONS.md §11, §3: 403, then 429). Each attempt costs the
 * guesser one scrypt (about 0.2 s and 32 MiB of the server's), so the counters keep guessing slow
 * and the server's memory safe. Windows stay within LONGEST_WINDOW_MS, so stale counters are
 * purged by the same housekeeping.
 */
export const itemPasswordRules = {
  /** One item's password (one key), whoever tries: the item's owner mistyping, or a guesser. */
  item: { limit: 5, windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 60 * MINUTE },
  /** Every item of one account: a guesser moving from item to item. */
  account: { limit: 20, windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 15 * MINUTE },
} as const satisfies Record<string, ThrottleRule>;

/** The counters of a password attempt on key `keyId` of account `accountId`: the key's, then the account's. */
export function itemPasswordCounters(accountId: number, keyId: number): [key: Counter, account: Counter] {
  return [
    { key: `item-password:${keyId}`, rule: itemPasswordRules.item },
    { key: `item-password-account:${accountId}`, rule: itemPasswordRules.account },
  ];
}
