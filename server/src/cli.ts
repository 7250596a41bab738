/**
 * The `fss` command: runs the service and administers accounts (DECISIONS.md §4), configured from the environment as
 * the service is. Exit codes: 0 done, 1 refused or failed, 2 misuse (unknown command, argument or option).
 */
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig, type Config } from './config';
import {
  createAccount,
  createApiKey,
  listAccounts,
  listApiKeys,
  revokeApiKey,
  setPassword,
  setQuota,
  ACCOUNT_NAME_RULE,
  PASSWORD_RULE,
} from './operations/accounts/accounts';
import type { Services } from './operations/context';
import { passwordHashQueue } from './operations/crypto/hash-queue';
import { callCaches } from './operations/caches';
import { checkIntegrity, describeReport, problemCount, unrepairable } from './operations/admin/integrity';
import { prepareContentStores } from './storage/content/stores';
import { closeDatabase, openDatabase } from './storage/db/engine/database';
import { loadServerSecret } from './storage/secret';

export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  /** Where `user passwd` (and `user add` without --password) reads the password: one line. */
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

const USAGE = `Usage: fss <command>

  fss serve                                   run the service (settings from the environment)
  fss user add NAME [--password P] [--quota BYTES]
                                              create an account
  fss user passwd NAME [--password P]         set a new password (ends the account's sessions)
  fss user quota NAME BYTES                   set the storage quota
  fss user list                               list accounts: id, name, quota, used, created
  fss apikey create NAME [--label TEXT]       create an API key for APILogin (shown once)
  fss apikey list NAME                        list an account's API keys
  fss apikey revoke NAME ID                   delete an API key and end its sessions
  fss fsck [--repair]                         check the database against the content store;
                                              --repair recomputes counters, removes orphan bytes
  fss migrate --from-data-dir DIR [--dry-run | --verify-only] [--jobs N]
                                              move the embedded installation in DIR (its SQLite
                                              file and content) into the PostgreSQL database and
                                              S3 bucket of the settings (FSS_DATABASE_URL,
                                              FSS_S3_*), with FSS_SECRET set to its secret; copies,
                                              then verifies every row and blob; stop the service
                                              first; safe to run again (continues where it stopped)
  fss backup DIR                              copy the embedded installation (database, content,
                                              secret.key) into the new folder DIR, while the
                                              service runs; DIR holds secrets: keep it private
  fss restore DIR                             copy the backup in DIR into FSS_DATA_DIR (an empty
                                              folder, the service stopped), then check it as fsck
  fss help                                    show this help

NAME is an account name or its numeric id; ${ACCOUNT_NAME_RULE}.
Without --password, the password is read from standard input (one line); ${PASSWORD_RULE}.
BYTES is a whole number of bytes, or a number with KiB, MiB, GiB or TiB (e.g. 10GiB).

Environment: FSS_DATA_DIR (default ./data), PORT, HOST, FSS_PUBLIC_URL, FSS_NAMESPACE,
FSS_TOKEN_IDLE_SECONDS, FSS_TOKEN_MAX_SECONDS, FSS_DEFAULT_QUOTA_BYTES, FSS_MAX_UPLOAD_BYTES, …
`;

class UsageError extends Error {}

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

const defaultIo: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, io: CliIo = defaultIo): Promise<number> {
  try {
    return await run(argv, env, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`fss: ${error.message}\nRun "fss help" for usage.\n`);
      return EXIT_USAGE;
    }
    // A refusal (OpError, ConfigError) or any other failure: its message, exit 1.
    io.stderr.write(`fss: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  }
}

async function run(argv: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'help':
    case '--help':
    case '-h':
      io.stdout.write(USAGE);
      return EXIT_OK;
    case 'serve':
      parse(rest, {}, 0);
      return serve(loadConfig(env), io);
    case 'user':
      return userCommand(rest, env, io);
    case 'apikey':
      return apiKeyCommand(rest, env, io);
    case 'fsck':
      return fsck(rest, env, io);
    case 'migrate':
      return migrate(rest, env, io);
    case 'backup':
      return backup(rest, env, io);
    case 'restore':
      return restore(rest, env, io);
    case undefined:
      throw new UsageError('missing command');
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

type Command = (args: string[], env: NodeJS.ProcessEnv, io: CliIo) => Promise<number>;

/** Runs the sub-command of `command` named by the first argument (`fss user add …`). */
function subCommand(command: string, subs: Record<string, Command>): Command {
  const names = Object.keys(subs);
  const choices = `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
  return ([sub, ...rest], env, io) => {
    if (sub === undefined) throw new UsageError(`missing ${command} command: ${choices}`);
    if (!Object.hasOwn(subs, sub)) throw new UsageError(`unknown ${command} command "${sub}": use ${choices}`);
    return subs[sub](rest, env, io);
  };
}

const userCommand = subCommand('user', {
  add: async (args, env, io) => {
    const { positionals, values } = parse(args, { password: { type: 'string' }, quota: { type: 'string' } }, 1, 'NAME');
    const quotaBytes = values.quota === undefined ? undefined : parseBytes(values.quota);
    const password = values.password ?? (await readPassword(io, `Password for ${positionals[0]}: `));
    return withServices(env, async (services) => {
      const account = await createAccount(services, { name: positionals[0], password, quotaBytes });
      io.stdout.write(`created account ${account.name} (id ${account.id}, quota ${account.quotaBytes} bytes)\n`);
    });
  },
  passwd: async (args, env, io) => {
    const { positionals, values } = parse(args, { password: { type: 'string' } }, 1, 'NAME');
    const password = values.password ?? (await readPassword(io, `New password for ${positionals[0]}: `));
    return withServices(env, async (services) => {
      const account = await setPassword(services, positionals[0], password);
      io.stdout.write(`password of ${account.name} changed; its sessions have ended\n`);
    });
  },
  quota: async (args, env, io) => {
    const { positionals } = parse(args, {}, 2, 'NAME BYTES');
    const quotaBytes = parseBytes(positionals[1]);
    return withServices(env, async (services) => {
      const account = await setQuota(services, positionals[0], quotaBytes);
      io.stdout.write(`quota of ${account.name} set to ${account.quotaBytes} bytes\n`);
    });
  },
  list: async (args, env, io) => {
    parse(args, {}, 0);
    return withServices(env, async (services) => {
      const accounts = await listAccounts(services);
      const rows = accounts.map((a) => [String(a.id), a.name, String(a.quotaBytes), String(a.usedBytes), a.createdAt.toISOString()]);
      io.stdout.write(table(['ID', 'NAME', 'QUOTA', 'USED', 'CREATED'], rows));
    });
  },
});

const apiKeyCommand = subCommand('apikey', {
  create: async (args, env, io) => {
    const { positionals, values } = parse(args, { label: { type: 'string' } }, 1, 'NAME');
    return withServices(env, async (services) => {
      const { key, apiKey } = await createApiKey(services, positionals[0], values.label ?? '');
      io.stdout.write(`${key}\n`);
      io.stderr.write(`API key ${apiKey.id} created for ${positionals[0]}. It is shown only this once: store it now.\n`);
    });
  },
  list: async (args, env, io) => {
    const { positionals } = parse(args, {}, 1, 'NAME');
    return withServices(env, async (services) => {
      const keys = await listApiKeys(services, positionals[0]);
      const rows = keys.map((k) => [String(k.id), k.label, k.createdAt.toISOString(), k.lastUsedAt?.toISOString() ?? '-']);
      io.stdout.write(table(['ID', 'LABEL', 'CREATED', 'LAST USED'], rows));
    });
  },
  revoke: async (args, env, io) => {
    const { positionals } = parse(args, {}, 2, 'NAME ID');
    if (!/^\d{1,15}$/.test(positionals[1])) throw new UsageError(`invalid API key id "${positionals[1]}"`);
    return withServices(env, async (services) => {
      await revokeApiKey(services, positionals[0], Number(positionals[1]));
      io.stdout.write(`API key ${positionals[1]} revoked\n`);
    });
  },
});

/** Exit 0 when nothing is wrong (after repair, when asked), 1 when problems remain. */
async function fsck(args: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const { values } = parse(args, { repair: { type: 'boolean' } }, 0);
  return withServices(env, async (services) => {
    const report = await checkIntegrity(services, { repair: values.repair === true });
    for (const line of describeReport(report)) io.stdout.write(line + '\n');
    const remaining = report.repaired ? unrepairable(report) : problemCount(report);
    io.stdout.write(remaining === 0 ? 'fsck: no problems\n' : `fsck: ${remaining} problem(s)\n`);
    return remaining === 0 ? EXIT_OK : EXIT_FAILED;
  });
}

/** Exit 0 when everything was copied (or found, --verify-only) and verified, or a dry run found nothing in the way; else 1. */
async function migrate(args: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const { values } = parse(
    args,
    { 'from-data-dir': { type: 'string' }, 'dry-run': { type: 'boolean' }, 'verify-only': { type: 'boolean' }, jobs: { type: 'string' } },
    0,
  );
  const from = values['from-data-dir'];
  if (from === undefined || from === '') throw new UsageError('missing --from-data-dir DIR: the data folder of the embedded installation to move');
  if (values['dry-run'] && values['verify-only']) throw new UsageError('--dry-run and --verify-only do not go together');
  const jobs = values.jobs === undefined ? undefined : Number(values.jobs);
  if (jobs !== undefined && (!/^\d{1,2}$/.test(values.jobs ?? '') || jobs < 1 || jobs > 64)) throw new UsageError(`invalid --jobs "${values.jobs}": give 1 to 64`);
  const target = loadConfig(env);
  await prepareContentStores(target);
  // The admin tools are loaded by their commands only, not by `fss serve`.
  const { migrateInstallation } = await import('./operations/admin/migrate-installation');
  const report = await migrateInstallation({
    sourceDataDir: path.resolve(from),
    target,
    mode: values['dry-run'] ? 'dry-run' : values['verify-only'] ? 'verify-only' : 'migrate',
    jobs,
    print: (line) => io.stdout.write(line + '\n'),
  });
  return report.ok ? EXIT_OK : EXIT_FAILED;
}

/** Exit 0 when the backup is complete and every blob was found whole; 1 otherwise (the problems are listed). */
async function backup(args: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const { positionals } = parse(args, {}, 1, 'DIR');
  const config = loadConfig(env);
  await prepareContentStores(config);
  const { backupInstallation } = await import('./operations/admin/backup');
  const summary = await backupInstallation(config, positionals[0], (line) => io.stdout.write(line + '\n'));
  if (summary.problems.length === 0) return EXIT_OK;
  io.stdout.write(`${summary.problems.length} problem(s) in the installation, copied as they are (fss fsck on it tells more):\n`);
  for (const problem of summary.problems) io.stdout.write(`  ${problem}\n`);
  return EXIT_FAILED;
}

/** Restores, then checks the result as `fss fsck` does: exit 0 only when it is clean. */
async function restore(args: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const { positionals } = parse(args, {}, 1, 'DIR');
  const config = loadConfig(env);
  await prepareContentStores(config);
  const { restoreInstallation } = await import('./operations/admin/backup');
  await restoreInstallation(config, positionals[0], (line) => io.stdout.write(line + '\n'));
  return fsck([], env, io);
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses options and exactly `count` positional arguments, named `names` in the message. */
function parse<O extends Options>(args: string[], options: O, count: number, names = '') {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { positionals } = parsed;
  if (positionals.length < count) throw new UsageError(`missing argument: ${names.split(' ').slice(positionals.length).join(' ')}`);
  if (positionals.length > count) throw new UsageError(`unexpected argument "${positionals[count]}"`);
  return parsed;
}

const UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/** A byte count: digits, optionally followed by B, KiB, MiB, GiB or TiB. */
export function parseBytes(text: string): number {
  const match = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const unit = match && UNITS[match[2].toLowerCase()];
  const bytes = match && unit ? Number(match[1]) * unit : NaN;
  if (!Number.isSafeInteger(bytes)) {
    throw new UsageError(`invalid quota "${text}": give a whole number of bytes, or one with KiB, MiB, GiB or TiB`);
  }
  return bytes;
}

/** Runs `work` on the services of the environment's installation; exit 0 unless it says otherwise (or throws). */
async function withServices(env: NodeJS.ProcessEnv, work: (services: Services) => Promise<number | void>): Promise<number> {
  const config = loadConfig(env);
  await prepareContentStores(config); // loads the S3 modules only when content is in S3
  const db = await openDatabase(config);
  try {
    return (await work({ db, config, now: () => new Date(), secret: await loadServerSecret(config), passwordHashes: passwordHashQueue(config), caches: callCaches(config) })) ?? EXIT_OK;
  } finally {
    await closeDatabase(db);
  }
}

async function serve(config: Config, io: CliIo): Promise<number> {
  const { startServer } = await import('./server');
  const server = await startServer(config);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  io.stderr.write(`fss: ${signal}, shutting down\n`);
  // A second signal: the operator does not want to wait; the log's last lines are written at exit (log.ts).
  const stopAtOnce = (again: NodeJS.Signals) => {
    io.stderr.write(`fss: ${again} again, stopping at once\n`);
    process.exit(128 + os.constants.signals[again]);
  };
  process.on('SIGINT', stopAtOnce);
  process.on('SIGTERM', stopAtOnce);
  await server.close();
  return EXIT_OK;
}

/** One line from stdin; on a terminal, prompted and not echoed. */
async function readPassword(io: CliIo, prompt: string): Promise<string> {
  const onTerminal = io.stdin.isTTY === true;
  if (onTerminal) io.stderr.write(prompt);
  // On a terminal, readline echoes what is typed to `output`: a sink keeps the password off screen.
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const lines = createInterface({ input: io.stdin, output: onTerminal ? sink : undefined, terminal: onTerminal });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      lines.once('close', () => resolve(''));
      lines.once('SIGINT', () => reject(new UsageError('cancelled')));
    });
    return line;
  } finally {
    lines.close();
    if (onTerminal) io.stderr.write('\n');
  }
}

function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => row[column].length)));
  return all.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd() + '\n').join('');
}
