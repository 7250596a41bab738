/**
 * One crash scenario, run to its number of kills: the service works on one data folder, a client
 * keeps calling it, and at a random moment (a seeded delay) the process gets SIGKILL. Then:
 *
 * 1. `fss fsck` on the data folder as the crash left it must find nothing, or only what `--repair`
 *    exists for (counters, orphan bytes); then `fsck --repair` must fix it and a second fsck be
 *    clean. Every repair is counted and reported: on a healthy service there are none.
 * 2. The service starts again on the same folder, and the scenario checks its ledger: everything
 *    acknowledged before the kill is there exactly, and the unacknowledged call happened wholly or
 *    not at all.
 *
 * fsck after each kill runs the `fss` command's own code (cli.ts `main`) in this process, which
 * saves a Node start per kill; the last check of each scenario runs `node bin/fss.mjs fsck`.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { main } from '../../../src/cli';
import { fsck as fsckProcess, startService, type ServiceProcess } from '../../helpers/service-process';
import type { Random } from '../budget';
import { CallFailed, login, type Session } from './client';

export interface CommandOutcome {
  readonly code: number;
  readonly output: string;
}

/** An `fss` command on `dataDir`, through the command's own code (cli.ts `main`) in this process. */
export async function fssInProcess(dataDir: string, argv: readonly string[]): Promise<CommandOutcome> {
  let output = '';
  const sink = { write: (text: string) => (output += text) };
  const code = await main([...argv], { FSS_DATA_DIR: dataDir }, { stdout: sink, stderr: sink, stdin: process.stdin });
  return { code, output };
}

/** `fss fsck [--repair]` on `dataDir`, in this process. */
export const fsckInProcess = (dataDir: string, repair = false) => fssInProcess(dataDir, repair ? ['fsck', '--repair'] : ['fsck']);

const CLEAN = 'fsck: no problems\n';

export interface ScenarioContext {
  readonly name: string;
  readonly dataDir: string;
  readonly random: Random;
  readonly account: { readonly name: string; readonly password: string; id: number };
  server: ServiceProcess;
  session: Session;
  /** The number of the current round (1-based); 0 while preparing. */
  round: number;
  log(line: string): void;
}

export interface Scenario {
  readonly name: string;
  /** Settings of the service for this scenario. */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * The kill comes after a delay drawn in [minDelayMs, maxDelayMs] from the start of a round's
   * work, or, for a scenario that `armsKill`, from its first call of `arm` (when what it is about
   * begins, after the preparation of each round).
   */
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly armsKill?: boolean;
  /** With the service running, before the first round. */
  prepare(ctx: ScenarioContext): Promise<void>;
  /** Calls the service one call at a time until one gets no answer (the kill); must not end before. */
  work(ctx: ScenarioContext, arm: () => void): Promise<void>;
  /** After the kill and fsck, before the restart: what the crash left (for the scenario's figures). */
  afterKill?(ctx: ScenarioContext): void;
  /** After the restart: the ledger check (throws on any difference). */
  verify(ctx: ScenarioContext): Promise<void>;
  /** After the last round, with the service running: the final checks. */
  finish?(ctx: ScenarioContext): Promise<void>;
}

export interface ScenarioReport {
  readonly name: string;
  readonly kills: number;
  /** fsck findings after a kill (each fixed by --repair); 0 on a healthy service. */
  readonly repairs: string[];
  readonly problems: number;
  readonly seconds: number;
  readonly notes: string[];
}

/** Runs `scenario` for `kills` rounds on a new data folder; throws (naming the seed and round) on a problem. */
export async function runScenario(scenario: Scenario, kills: number, random: Random, entry: string, seed: number): Promise<ScenarioReport> {
  const started = performance.now();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `fss-crash-${scenario.name}-`));
  const repairs: string[] = [];
  const notes: string[] = [];
  const account = { name: `crash-${scenario.name}`, password: 'crash-password-1', id: 0 };
  const spent = { work: 0, fsck: 0, start: 0, verify: 0 };
  const timed = async <T>(phase: keyof typeof spent, work: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      spent[phase] += performance.now() - t0;
    }
  };
  const start = () => timed('start', () => startService(dataDir, scenario.env ?? {}, { entry }));
  let ctx: ScenarioContext | null = null;
  try {
    const added = await fssInProcess(dataDir, ['user', 'add', account.name, '--password', account.password]);
    if (added.code !== 0) throw new Error(`fss user add: ${added.output}`);
    account.id = Number(/id (\d+)/.exec(added.output)![1]);
    const server = await start();
    ctx = { name: scenario.name, dataDir, random, account, server, session: await login(server.url, account.name, account.password), round: 0, log: (line) => notes.push(line) };
    await scenario.prepare(ctx);

    for (ctx.round = 1; ctx.round <= kills; ctx.round++) {
      const delay = random.int(scenario.minDelayMs, scenario.maxDelayMs);
      let arm = () => {};
      const armed = new Promise<void>((resolve) => (arm = resolve));
      if (!scenario.armsKill) arm();
      const working = scenario.work(ctx, arm).then(
        () => new Error('the work ended before the kill'),
        (error: unknown) => error,
      );
      await timed('work', async () => {
        const first = await Promise.race([armed.then(() => null), working]);
        if (first !== null) throw first;
        await sleep(delay);
      });
      await ctx.server.kill9();
      const ended = await working;
      if (!(ended instanceof CallFailed)) throw ended;

      const found = await timed('fsck', () => fsckInProcess(dataDir));
      if (found.output !== CLEAN) {
        const repaired = await fsckInProcess(dataDir, true);
        const again = await fsckInProcess(dataDir);
        if (repaired.code !== 0 || again.output !== CLEAN) {
          throw new Error(`fsck after kill ${ctx.round} (delay ${delay} ms) found what --repair cannot fix:\n${found.output}--- repair:\n${repaired.output}--- again:\n${again.output}`);
        }
        repairs.push(`kill ${ctx.round}: ${found.output.trim().replace(/\n/g, '; ')}`);
      }
      scenario.afterKill?.(ctx);
      ctx.server = await start();
      await timed('verify', () => scenario.verify(ctx!));
    }
    notes.push(`seconds spent: ${Object.entries(spent).map(([phase, ms]) => `${phase} ${(ms / 1000).toFixed(1)}`).join(', ')}`);
    await scenario.finish?.(ctx);
    await ctx.server.stop();
    const last = await fsckProcess(dataDir);
    if (last.code !== 0 || last.stdout !== CLEAN) throw new Error(`the final fss fsck: exit ${last.code}\n${last.stdout}${last.stderr}`);
    if (ctx.server.output().includes('"level":"error"')) throw new Error(`the service logged an error:\n${errorLines(ctx.server.output())}`);
  } catch (error) {
    const where = ctx ? `round ${ctx.round} of ${kills}` : 'preparation';
    const message = error instanceof Error ? error.stack ?? error.message : String(error);
    throw new Error(`crash scenario "${scenario.name}" failed in ${where} (FSS_RELIABILITY_SEED=${seed} replays it)\n${message}` + (ctx ? `\n--- service output (end) ---\n${ctx.server.output().slice(-4000)}` : ''));
  } finally {
    await ctx?.server.kill9();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
  return { name: scenario.name, kills, repairs, problems: repairs.length, seconds: (performance.now() - started) / 1000, notes };
}

const errorLines = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.includes('"level":"error"'))
    .slice(0, 10)
    .join('\n');

/** Polls `check` until it holds. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000, everyMs = 25): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

