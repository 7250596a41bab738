/**
 * Kills during changes of the tree: deletes (to the bin and for good), restores, and moves. Each
 * scenario's client keeps a supply of small branches (a folder, a subfolder, five files) and
 * changes them one call at a time until the kill; the ledger (ledger.ts) then requires the tree to
 * be exactly what was acknowledged, with the call under way done wholly or not at all.
 */
import type { Scenario, ScenarioContext } from './harness';
import { TreeClient } from './tree-client';

const clients = new WeakMap<ScenarioContext, TreeClient>();
const clientOf = (ctx: ScenarioContext) => clients.get(ctx)!;

async function prepareTree(ctx: ScenarioContext): Promise<void> {
  const client = new TreeClient(ctx);
  clients.set(ctx, client);
  await client.uploadOriginals(4);
  for (let i = 0; i < 3; i++) await client.addBranch(0);
}

async function verifyTree(ctx: ScenarioContext): Promise<void> {
  await clientOf(ctx).verify();
}

async function reportTree(ctx: ScenarioContext): Promise<void> {
  const { outcomes, committed } = clientOf(ctx).ledger;
  ctx.log(`calls under way at the kills: ${outcomes.done} had happened wholly, ${outcomes.notDone} not at all; ${committed.size} items at the end`);
}

/** Keeps at least `live` changeable items: a new branch in a random live folder when short. */
async function supply(client: TreeClient, ctx: ScenarioContext, live: number): Promise<void> {
  while (client.liveItems().length < live) await client.addBranch(ctx.random.pick(client.liveFolders()));
}

export const deletesScenario: Scenario = {
  name: 'deletes',
  minDelayMs: 10,
  maxDelayMs: 500,
  prepare: prepareTree,
  verify: verifyTree,
  finish: reportTree,
  async work(ctx) {
    const client = clientOf(ctx);
    for (;;) {
      await supply(client, ctx, 12);
      const roll = ctx.random.next();
      const entries = client.entries();
      if (roll < 0.2 && entries.length > 0) await client.remove(client.pickUnrelated(entries, ctx.random.int(1, 2)), 1);
      else await client.remove(client.pickUnrelated(client.liveItems(), ctx.random.int(1, 3)), roll < 0.6 ? 0 : 1);
    }
  },
};

export const restoresScenario: Scenario = {
  name: 'restores',
  minDelayMs: 10,
  maxDelayMs: 500,
  prepare: prepareTree,
  verify: verifyTree,
  finish: reportTree,
  async work(ctx) {
    const client = clientOf(ctx);
    for (;;) {
      await supply(client, ctx, 10);
      const entries = client.entries();
      if (entries.length < 3 || ctx.random.chance(0.3)) await client.remove(client.pickUnrelated(client.liveItems(), ctx.random.int(1, 3)), 0);
      else await client.restore(client.pickUnrelated(entries, ctx.random.int(1, 3)));
      // Now and then the bin is thinned, so that restores meet entries whose folder is gone.
      if (client.entries().length > 12) await client.remove([ctx.random.pick(client.entries())], 1);
    }
  },
};

export const movesScenario: Scenario = {
  name: 'moves',
  minDelayMs: 10,
  maxDelayMs: 500,
  prepare: prepareTree,
  verify: verifyTree,
  finish: reportTree,
  async work(ctx) {
    const client = clientOf(ctx);
    for (;;) {
      await supply(client, ctx, 15);
      const items = client.pickUnrelated(client.liveItems(), ctx.random.int(1, 3));
      // A destination outside every folder moved (no cycles) and not where any of them is already.
      const inside = new Set<number>();
      for (const item of items) if (item.type === 'folder') for (const id of [item.id, ...client.subfolders(item.id)]) inside.add(id);
      const targets = client.liveFolders().filter((id) => !inside.has(id) && !items.some((item) => item.parent === id));
      if (targets.length === 0) {
        await client.addBranch(0);
        continue;
      }
      await client.move(items, ctx.random.pick(targets));
    }
  },
};
