/**
 * A real PostgreSQL server for the tests, started by the tests themselves: Debian's PostgreSQL 15
 * binaries (initdb, postgres) on 127.0.0.1 and a free port, with a temporary data folder that is
 * removed when the server stops. Started once per run by the vitest global setup of the "postgres"
 * project (server/test/postgres-global-setup.ts), which migrates a template database once; every
 * test then gets a fresh database copied from that template (CREATE DATABASE … TEMPLATE), which is
 * much faster than migrating each one.
 *
 * Which engine the tests run on: FSS_TEST_DATABASE=postgres (set by the "postgres" project in
 * vitest.config.ts), else SQLite. The helpers in database.ts and app-server.ts ask here.
 *
 * Speed settings (fsync, full_page_writes and synchronous_commit off) lose data on a power cut:
 * fine for a throwaway test server, never for a real one.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os, { userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { inject } from 'vitest';

const run = promisify(execFile);

export const POSTGRES_BIN = process.env.FSS_TEST_POSTGRES_BIN || '/usr/lib/postgresql/15/bin';

/** The database every test database is copied from: migrated once per run. */
export const TEMPLATE_DATABASE = 'fss_template';

/** What the global setup hands to the test workers (vitest provide/inject). */
export interface ProvidedPostgres {
  /** A superuser URL of the server's maintenance database (`postgres`). */
  readonly adminUrl: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    fssPostgres: ProvidedPostgres | null;
  }
}

export type TestEngine = 'sqlite' | 'postgres';

/** The engine these tests run on (FSS_TEST_DATABASE). */
export function testEngine(): TestEngine {
  const engine = process.env.FSS_TEST_DATABASE || 'sqlite';
  if (engine !== 'sqlite' && engine !== 'postgres') throw new Error(`FSS_TEST_DATABASE must be sqlite or postgres, got "${engine}"`);
  return engine;
}

export interface PostgresServer {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:PORT/<database>`. */
  urlOf(database: string): string;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (free a moment ago: postgres fails to start if it is taken since). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * How to run the PostgreSQL binaries: postgres refuses to run as root, so as root they run as the
 * `postgres` system user (which Debian's postgresql package creates) through setpriv, which execs
 * the program itself (no process in between that would have to pass signals on).
 */
function asServerUser(): { prefix: string[]; uid: number; gid: number } | null {
  if (userInfo().uid !== 0) return null;
  const user = process.env.FSS_TEST_POSTGRES_USER || 'postgres';
  let ids: { uid: number; gid: number };
  try {
    ids = lookupUser(user);
  } catch {
    throw new Error(`the PostgreSQL tests run as root need the system user "${user}" (apt-get install postgresql-15 creates it)`);
  }
  return { prefix: ['setpriv', `--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', '--'], ...ids };
}

function lookupUser(user: string): { uid: number; gid: number } {
  // getent is in every Debian base system; node has no getpwnam.
  const line = execFileSync('getent', ['passwd', user], { encoding: 'utf8' });
  const [, , uid, gid] = line.trim().split(':');
  if (uid === undefined || gid === undefined) throw new Error(`no user ${user}`);
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Where the server's temporary folder goes: /dev/shm (memory) when there is one, since a test
 * server's data need not survive anything and copying a database per test is then quick; else the
 * system's temporary folder. FSS_TEST_POSTGRES_TMP overrides it.
 */
function postgresTempBase(): string {
  if (process.env.FSS_TEST_POSTGRES_TMP) return process.env.FSS_TEST_POSTGRES_TMP;
  return existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
}

const OWNER_FILE = 'owner.pid';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Servers of earlier runs whose test process died without its teardown (killed, or crashed):
 * each folder names its owner (OWNER_FILE); when that process is gone, the server started in the
 * folder (its postmaster.pid, if that process still runs postgres on that very folder) is shut
 * down and the folder removed. Servers of runs still going are left alone.
 */
async function removeAbandonedServers(base: string): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(base).filter((name) => name.startsWith('fss-postgres-'));
  } catch {
    return;
  }
  for (const name of names) {
    const root = path.join(base, name);
    let owner: number;
    try {
      owner = Number(readFileSync(path.join(root, OWNER_FILE), 'utf8'));
    } catch {
      continue; // being created, or not ours to judge
    }
    if (!Number.isSafeInteger(owner) || owner <= 0 || isRunning(owner)) continue;
    const dataDir = path.join(root, 'data');
    try {
      const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const commandLine = readFileSync(`/proc/${postmaster}/cmdline`, 'utf8');
      if (commandLine.includes('postgres') && commandLine.includes(dataDir)) {
        // SIGQUIT: immediate shutdown, which still releases the server's shared memory; SIGKILL
        // would leave its segments in /dev/shm.
        process.kill(postmaster, 'SIGQUIT');
        for (let waited = 0; waited < 5_000 && isRunning(postmaster); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
        if (isRunning(postmaster)) process.kill(postmaster, 'SIGKILL');
      }
    } catch {
      // no server running there
    }
    rmSync(root, { recursive: true, force: true });
  }
}

class PortTaken extends Error {}

interface Launched {
  readonly port: number;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

/** Starts postgres on `port` and waits until it accepts connections. PortTaken when the port was not free. */
async function launch(prefix: string[], postgres: string, root: string, dataDir: string, socketDir: string, port: number): Promise<Launched> {
  const settings = {
    listen_addresses: '127.0.0.1',
    port: String(port),
    unix_socket_directories: socketDir,
    // Tests only: nothing needs to survive a crash of the machine.
    fsync: 'off',
    full_page_writes: 'off',
    synchronous_commit: 'off',
    // Every test file holds a pool or two at a time; templates are copied per test.
    max_connections: '300',
    shared_buffers: '64MB',
    log_min_messages: 'warning',
    logging_collector: 'off',
    // FSS_TEST_POSTGRES_LOG=file: the server's log goes there, with every statement slower than
    // 100 ms, and the plans (with actual times) of those slower than a second.
    ...(process.env.FSS_TEST_POSTGRES_LOG
      ? {
          log_min_duration_statement: '100',
          shared_preload_libraries: 'auto_explain',
          'auto_explain.log_min_duration': '1000',
          'auto_explain.log_analyze': 'on',
          'auto_explain.log_nested_statements': 'on',
        }
      : {}),
  };
  const args = ['-D', dataDir, ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])];
  const [command, ...rest] = [...prefix, postgres, ...args];
  const child = spawn(command, rest, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C.UTF-8' } });
  let output = '';
  const logFile = process.env.FSS_TEST_POSTGRES_LOG;
  child.stderr!.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
    if (logFile) appendFileSync(logFile, chunk);
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (hasExited) {
      if (/could not bind|Address already in use/i.test(output)) throw new PortTaken(`port ${port} is taken`);
      throw new Error(`postgres exited before accepting connections:\n${output}`);
    }
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('select 1');
      await client.end();
      return { port, child, exited };
    } catch (error) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        await exited;
        throw new Error(`postgres did not accept connections within 60 s: ${String(error)}\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * initdb and start a server in a new temporary folder; resolves once it accepts connections.
 * The superuser is `postgres`, trusted on 127.0.0.1 only (the folder's unix socket is private).
 */
export async function startPostgres(): Promise<PostgresServer> {
  const initdb = path.join(POSTGRES_BIN, 'initdb');
  const postgres = path.join(POSTGRES_BIN, 'postgres');
  if (!existsSync(postgres)) {
    throw new Error(`PostgreSQL is not installed at ${POSTGRES_BIN} (Debian: apt-get install postgresql-15; or set FSS_TEST_POSTGRES_BIN)`);
  }
  const user = asServerUser();
  await removeAbandonedServers(postgresTempBase());
  const root = mkdtempSync(path.join(postgresTempBase(), 'fss-postgres-'));
  // Whose server this is: a later run removes it if this process died without its teardown.
  writeFileSync(path.join(root, OWNER_FILE), String(process.pid));
  const dataDir = path.join(root, 'data');
  const socketDir = path.join(root, 'socket');
  mkdirSync(socketDir);
  if (user) {
    chownSync(root, user.uid, user.gid);
    chownSync(socketDir, user.uid, user.gid);
  }
  const prefix = user?.prefix ?? [];
  const exec = (program: string, args: string[]) => {
    const [command, ...rest] = [...prefix, program, ...args];
    return run(command, rest, { env: { ...process.env, LC_ALL: 'C.UTF-8' }, cwd: root });
  };
  try {
    await exec(initdb, ['-D', dataDir, '--username=postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8', '--no-sync']);
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(error as { stderr?: string }).stderr ?? String(error)}`);
  }

  // The port was free a moment ago; if another process takes it first, start again on another.
  let launched: Launched | undefined;
  for (let attempt = 1; !launched; attempt++) {
    try {
      launched = await launch(prefix, postgres, root, dataDir, socketDir, await freePort());
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= 3) {
        rmSync(root, { recursive: true, force: true });
        throw error;
      }
    }
  }
  const { port, child, exited } = launched;
  const urlOf = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  // A test run that dies without its teardown must not leave a server behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  return {
    port,
    urlOf,
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        // SIGINT: "fast" shutdown (open sessions are ended); SIGKILL if that takes too long.
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

// ---- Databases for tests ---------------------------------------------------------------------------

let admin: pg.Pool | undefined;
let counter = 0;

function provided(): ProvidedPostgres {
  const value = inject('fssPostgres');
  if (!value) throw new Error('no PostgreSQL server: FSS_TEST_DATABASE=postgres needs the global setup server/test/postgres-global-setup.ts');
  return value;
}

function adminPool(): pg.Pool {
  if (!admin) {
    admin = new pg.Pool({ connectionString: provided().adminUrl, max: 2 });
    // An idle connection ended by the server (a test database dropped with FORCE, the server
    // stopping) is dropped by the pool; without a listener its error would end the test process.
    admin.on('error', () => undefined);
  }
  return admin;
}

function databaseUrl(name: string): string {
  const url = new URL(provided().adminUrl);
  url.pathname = `/${name}`;
  return url.href;
}

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  /** Drops the database, ending any session still connected to it. */
  drop(): Promise<void>;
}

/** A new database, migrated (a copy of the template), that the caller drops. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `fss_test_${process.pid}_${++counter}`;
  await adminPool().query(`create database ${name} template ${TEMPLATE_DATABASE}`);
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      await adminPool().query(`drop database if exists ${name} with (force)`);
    },
  };
}

/**
 * An empty database (no migrations applied), that the caller drops: for the migration tests.
 */
export async function createEmptyDatabase(): Promise<TestDatabase> {
  const name = `fss_empty_${process.pid}_${++counter}`;
  await adminPool().query(`create database ${name} template template0`);
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      await adminPool().query(`drop database if exists ${name} with (force)`);
    },
  };
}

// ---- One database per test -------------------------------------------------------------------------

/**
 * The database of the test that is running: made ready before each test (postgres-setup.ts, a
 * beforeEach, since copying is asynchronous and testConfig is not), dropped before the next one
 * starts (by then everything of the test, its onTestFinished cleanups included, has closed).
 */
let current: TestDatabase | undefined;

/** Data folders of the current test, and the database `fss` processes on them use (service-process.ts). */
const databaseOfDataDir = new Map<string, string>();

/** postgres-setup.ts, before each test: drops the previous test's database and copies a new one. */
export async function prepareTestDatabase(): Promise<void> {
  await dropTestDatabase();
  current = await createTestDatabase();
}

/** postgres-setup.ts, after the last test of a file: drops the last database. */
export async function dropTestDatabase(): Promise<void> {
  const finished = current;
  current = undefined;
  databaseOfDataDir.clear();
  await finished?.drop();
}

/**
 * The URL of the current test's database, for the configuration of `dataDir` (testConfig). A test
 * has one database: like one data folder on SQLite, every configuration of the test shares it.
 */
export function perTestDatabaseUrl(dataDir: string): string {
  if (!current) throw new Error('no test database: testConfig() runs inside a test (postgres-setup.ts prepares one before each)');
  databaseOfDataDir.set(dataDir, current.url);
  return current.url;
}

/** The database a configuration of the current test named for `dataDir`, if any (service-process.ts). */
export function databaseUrlOfDataDir(dataDir: string): string | undefined {
  return databaseOfDataDir.get(dataDir);
}

/** Closes this worker's admin connections (the setup file's afterAll). */
export async function closeAdminPool(): Promise<void> {
  const pool = admin;
  admin = undefined;
  await pool?.end();
}
