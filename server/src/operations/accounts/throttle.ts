/**
 * Throttling of repeated failures and of logins per address, counted in the database (shared by all instances). A rule's
 * limit blocks; each further failure in the run doubles the block; a run ends after `windowMs` of quiet.
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
  /** One account, any address: anyone can trip it and lock the owner out, so higher and shorter. */
  account: { limit: 20, windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 15 * MINUTE },
  /** One address, whatever the account: a guesser spreading attempts over many accounts. */
  address: { limit: 50, windowMs: 15 * MINUTE, firstBlockMs: MINUTE, maxBlockMs: 60 * MINUTE },
} as const satisfies Record<string, ThrottleRule>;

/** Share codes (128 random bits: counted per address only) and extraction codes (counted like passwords). */
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

// Successful logins per address (limit FSS_LOGINS_PER_ADDRESS): each costs a hash, but an office shares
// one address and anyone there can trip it, so its blocks stay short.
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
 * A password login's counters: pair, account, address. `account` is the id, or what was tried when it
 * matches none: an unknown account is throttled like a known one, so throttling reveals nothing.
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

/** Counts a failure (a success, on the successful-logins counter) on every counter; seconds until all are unblocked. */
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

// ---- Item passwords (Unlock, Decrypt): each guess costs the server a scrypt, so guessing must stay slow.
// Windows stay within LONGEST_WINDOW_MS, so housekeeping purges these counters too.
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
