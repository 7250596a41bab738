/**
 * How much the model-based tests run, from the suite's budget (../budget.ts): sequences of up to
 * 40 steps. FSS_RELIABILITY_SEED replays a run (fast-check prints the seed and path of a failure).
 */
import { MODEL_SEQUENCES, reliabilityBudget, reliabilitySeed } from '../budget';

export interface ModelBudget {
  readonly name: string;
  /** Sequences of steps, each on a fresh account. */
  readonly runs: number;
  /** The most steps one sequence has. */
  readonly maxSteps: number;
  /** All folders are listed every this many steps (the others list the folders a step touched). */
  readonly fullCheckEvery: number;
  readonly seed: number;
}

export function modelBudget(env: NodeJS.ProcessEnv = process.env): ModelBudget {
  const name = reliabilityBudget(env);
  return { name, runs: MODEL_SEQUENCES[name], maxSteps: 40, fullCheckEvery: 5, seed: reliabilitySeed(env) };
}
