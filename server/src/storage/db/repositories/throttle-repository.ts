/** SQL for failure counters: each change is one statement, so concurrent requests on several instances lose no count. */
import type { Kysely } from 'kysely';
import type { Database } from '../schema';

export interface ThrottleState {
  readonly key: string;
  readonly failures: number;
  readonly windowStart: Date;
  /** The epoch (1970) when not blocked. */
  readonly blockedUntil: Date;
}

const STATE_COLUMNS = ['key', 'failures', 'window_start', 'blocked_until'] as const;

const toState = (row: { key: string; failures: number; window_start: number; blocked_until: number }): ThrottleState => ({
  key: row.key,
  failures: row.failures,
  windowStart: new Date(row.window_start),
  blockedUntil: new Date(row.blocked_until),
});

export async function findThrottleStates(db: Kysely<Database>, keys: readonly string[]): Promise<ThrottleState[]> {
  if (keys.length === 0) return [];
  const rows = await db.selectFrom('throttle').select(STATE_COLUMNS).where('key', 'in', keys).execute();
  return rows.map(toState);
}

/** Counts a failure for `key`; a run restarts from 1 only after `quietMs` since both its start and its last block, so back-off keeps growing. */
export async function countFailure(db: Kysely<Database>, key: string, now: Date, quietMs: number): Promise<ThrottleState> {
  const at = now.getTime();
  const quietSince = at - quietMs;
  const row = await db
    .insertInto('throttle')
    .values({ key, failures: 1, window_start: at, blocked_until: 0 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet((eb) => {
        const runEnded = eb.and([eb('throttle.window_start', '<=', quietSince), eb('throttle.blocked_until', '<=', quietSince)]);
        return {
          failures: eb.case().when(runEnded).then(1).else(eb('throttle.failures', '+', 1)).end(),
          window_start: eb.case().when(runEnded).then(at).else(eb.ref('throttle.window_start')).end(),
        };
      }),
    )
    .returning(STATE_COLUMNS)
    .executeTakeFirstOrThrow();
  return toState(row);
}

/** Blocks `key` until `until`, unless it is already blocked for longer. */
export async function blockUntil(db: Kysely<Database>, key: string, until: Date): Promise<void> {
  await db
    .updateTable('throttle')
    .set({ blocked_until: until.getTime() })
    .where('key', '=', key)
    .where('blocked_until', '<', until.getTime())
    .execute();
}

export async function clearThrottle(db: Kysely<Database>, key: string): Promise<void> {
  await db.deleteFrom('throttle').where('key', '=', key).execute();
}

/** Forgets counters with no failure and no block since `before`. */
export async function deleteStaleThrottles(db: Kysely<Database>, before: Date): Promise<number> {
  const result = await db
    .deleteFrom('throttle')
    .where('window_start', '<', before.getTime())
    .where('blocked_until', '<', before.getTime())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
