/**
 * Model-based tests of the tree (docs/reliability.md): random sequences of FolderAdd, FileAdd
 * (over tus, or without a transfer for owned content), renames, Move, Copy, deletes to the bin and for
 * good, restores, RecycleEmpty, shares, direct links, FolderEncrypt, Unlock and new logins, each
 * in a random one of the four call forms, against the real service over HTTP; invalid steps among
 * them (name clashes, a folder into its own subtree, another account's ids, missing ids, items in
 * the bin, locked folders) must be refused with the documented code and change nothing. After
 * every step the listings are held to the model (model/checks.ts); a failing sequence is shrunk
 * to a shortest one and printed step by step.
 *
 * The budget: FSS_RELIABILITY_BUDGET=ci (default) | quick | long (budget.ts);
 * FSS_RELIABILITY_SEED=<seed> replays a run, FSS_RELIABILITY_TRACE=1 prints each step as it runs.
 * The service's clock is the test's (whole seconds, moved by the steps), so the model knows every
 * item's `time`, and steps that leave it standing make equal times for the "time" order.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app-server';
import { FORMS } from '../helpers/requests';
import { modelBudget } from './model/budget';
import { Checker } from './model/checks';
import { commandArbitrary, CONTENTS, outcomes, type ModelBox, type Real } from './model/commands';
import { ServiceClient } from './model/service-client';
import { TreeModel } from './model/tree-model';

const budget = modelBudget();

let app: TestApp;
let foreign: Real['foreign'];
/** The service's clock: whole seconds, moved by the steps. */
let clock = Math.floor(Date.now() / 1000) * 1000;

beforeAll(async () => {
  // Every sequence logs in (and Relogin steps again) from the loopback address, as a whole office
  // behind one address would: its successful Logins must not run into the per-address limit.
  app = await startTestApp({ FSS_LOGINS_PER_ADDRESS: '1000000' });
  // The service reads its clock through services.now (a test clock, as operations tests use).
  (app.app.services as { now: () => Date }).now = () => new Date(clock);
  // Another account's items, for the ids every operation must refuse as not found.
  const mallory = await ServiceClient.forNewAccount(app, 'mallory');
  const folder = await mallory.call('post', 'FolderAdd', { dirid: 0, name: 'not yours' });
  const hash = await mallory.upload(CONTENTS[1]);
  const file = await mallory.call('post', 'FileAdd', { name: 'not yours.txt', ext: 'txt', size: CONTENTS[1].length, dirid: 0, hash });
  foreign = { folderId: Number(folder.items[0].attrs.id), fileId: Number(file.items[0].attrs.id) };
});
afterAll(() => app?.close());

describe('the tree, held to its model', () => {
  it(
    'answers every step of random sequences as the model says, and lists exactly the model afterwards',
    async () => {
      const started = performance.now();
      let client: ServiceClient | undefined;
      const checker = new Checker(() => client!);
      let accounts = 0;
      await fc.assert(
        fc.asyncProperty(fc.commands([commandArbitrary], { maxCommands: budget.maxSteps, size: 'max' }), async (steps) => {
          client = await ServiceClient.forNewAccount(app, `seq-${++accounts}`);
          const box: ModelBox = { tree: new TreeModel(clock) };
          const real: Real = {
            client,
            checker,
            foreign,
            setClock: (ms) => {
              clock = ms;
            },
            fullCheckEvery: budget.fullCheckEvery,
            step: 0,
            trace: [],
            nextKeyId: 1,
          };
          await fc.asyncModelRun(() => ({ model: box, real }), steps);
          await checker.checkEveryOrder(box.tree, (i) => FORMS[i % FORMS.length]);
          checker.stats.sequences++;
        }),
        { numRuns: budget.runs, seed: budget.seed, endOnFailure: false },
      );
      const { sequences, steps, checks } = checker.stats;
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(
        `tree model (budget ${budget.name}): ${sequences} sequences, ${steps} steps, ${checks} checks against the model (listings, link probes, used bytes) in ${seconds} s`,
      );
      const answered = [...outcomes].sort(([a], [b]) => a.localeCompare(b)).map(([what, times]) => `${what}: ${times}`);
      console.log(`answers: ${answered.join(', ')}`);
      expect(sequences).toBe(budget.runs);
    },
    budget.runs * 60_000,
  );
});
