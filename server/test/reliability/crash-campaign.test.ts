/**
 * The crash campaign (docs/reliability.md): hundreds of SIGKILLs of the real service at random
 * moments of uploads, deletes, restores, moves, folder encryptions and e-mail shares. After each
 * kill `fss fsck` must find nothing that --repair cannot fix (and, on a healthy service, nothing at
 * all), and the client's ledger must find everything it was told was done, to the byte, and the
 * call under way done wholly or not at all (crash/harness.ts, crash/ledger.ts).
 *
 * FSS_RELIABILITY_BUDGET: ci (default) ≥ 200 kills, quick a few, long ≥ 1,000.
 * FSS_RELIABILITY_SEED replays a run: the delays and the operations follow from it.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpServer, type TestSmtpServer } from '../helpers/mail';
import { killAllServices } from '../helpers/service-process';
import { KILLS_PER_SCENARIO, Random, reliabilityBudget, reliabilitySeed } from './budget';
import { bundleFssCommand } from './crash/bundle';
import { emailScenario } from './crash/email-scenario';
import { encryptionScenario } from './crash/encryption-scenario';
import { runScenario, type Scenario, type ScenarioReport } from './crash/harness';
import { deletesScenario, movesScenario, restoresScenario } from './crash/tree-scenarios';
import { uploadsScenario } from './crash/upload-scenario';

const budget = reliabilityBudget();
const seed = reliabilitySeed();
const kills = KILLS_PER_SCENARIO[budget];
/** The SMTP server the e-mail scenario's service delivers to; started before the scenarios are listed. */
const smtp: TestSmtpServer = await startSmtpServer();
const scenarios: Scenario[] = [uploadsScenario, deletesScenario, restoresScenario, movesScenario, encryptionScenario, emailScenario(smtp)];
const reports: ScenarioReport[] = [];
let entry: string;

beforeAll(async () => {
  console.log(`crash campaign: budget ${budget}, FSS_RELIABILITY_SEED=${seed}, ${kills} kills per scenario`);
  entry = await bundleFssCommand('crash-campaign');
});

afterAll(async () => {
  await killAllServices();
  await smtp.close();
  if (entry) await rm(entry, { force: true });
  const total = reports.reduce((n, r) => n + r.kills, 0);
  const seconds = reports.reduce((n, r) => n + r.seconds, 0);
  console.log(
    `crash campaign summary (seed ${seed}, budget ${budget}): ${total} kills in ${seconds.toFixed(0)} s; ` +
      reports.map((r) => `${r.name} ${r.kills} (${r.seconds.toFixed(0)} s)`).join(', ') +
      `; problems found: ${reports.reduce((n, r) => n + r.problems, 0)}`,
  );
  for (const report of reports) for (const line of [...report.repairs, ...report.notes]) console.log(`  ${report.name}: ${line}`);
});

/** Two scenarios at a time: a restart is mostly one core's work, and the machine has two. */
const SCENARIOS_AT_ONCE = 2;
let running = 0;
const waiting: Array<() => void> = [];
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= SCENARIOS_AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

describe.concurrent('SIGKILL at random moments', () => {
  it.each(scenarios.map((s) => [s.name, s] as const))(
    'during %s: fsck finds nothing and every acknowledged change is there, the one under way wholly or not at all',
    // 20 minutes for the ci budget's kills, waiting for a turn included; longer budgets in proportion.
    { timeout: 20 * 60_000 * Math.max(1, kills / KILLS_PER_SCENARIO.ci) },
    async (_name, scenario) => {
      // Each scenario draws from a stream of its own, so that one can be replayed alone (-t).
      const random = new Random(seed + 7919 * (scenarios.indexOf(scenario) + 1));
      const report = await inTurn(() => runScenario(scenario, kills, random, entry, seed));
      reports.push(report);
      expect(report.repairs).toEqual([]);
    },
  );
});
