/**
 * How much the reliability suite does, from FSS_RELIABILITY_BUDGET (docs/reliability.md):
 *
 * - unset or `ci`: what every `npm test` runs on a 2-core machine, within a few minutes;
 * - `quick`: a smoke run for local work (a few sequences and kills, a short load);
 * - `long`: the soak run: ten times the model's sequences, 1,000+ kills, the load for longer.
 *
 * And the seed of the random choices (FSS_RELIABILITY_SEED, else a new one), printed by each test
 * so that a failure can be replayed with the same kill delays and the same operations.
 */
export type Budget = 'quick' | 'ci' | 'long';

export function reliabilityBudget(env: NodeJS.ProcessEnv = process.env): Budget {
  const raw = env.FSS_RELIABILITY_BUDGET ?? 'ci';
  if (raw === '' || raw === 'ci') return 'ci';
  if (raw === 'quick' || raw === 'long') return raw;
  throw new Error(`FSS_RELIABILITY_BUDGET must be quick, ci or long, got "${raw}"`);
}

/** Sequences of the model-based tests (tree-model.test.ts), each on a fresh account. */
export const MODEL_SEQUENCES: Record<Budget, number> = { quick: 10, ci: 60, long: 600 };

/** Kills per crash scenario: six scenarios, so ci is 6 × 34 = 204 and long 6 × 170 = 1,020. */
export const KILLS_PER_SCENARIO: Record<Budget, number> = { quick: 3, ci: 34, long: 170 };

/** How long the load test runs. */
export const LOAD_SECONDS: Record<Budget, number> = { quick: 10, ci: 60, long: 600 };

export function reliabilitySeed(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.FSS_RELIABILITY_SEED;
  if (raw !== undefined && raw !== '') {
    const seed = Number(raw);
    if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`FSS_RELIABILITY_SEED must be a whole number, got "${raw}"`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}

/** A seeded generator (mulberry32): the same seed gives the same choices. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** In [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** A whole number in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from nothing');
    return items[this.int(0, items.length - 1)];
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A generator of its own, for one scenario or one client, derived from this one's next value. */
  fork(): Random {
    return new Random(Math.floor(this.next() * 2 ** 32));
  }
}
