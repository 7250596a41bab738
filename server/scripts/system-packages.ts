/**
 * The first step of `npm test` (`system-packages.ts test`) and of `npm run bench` (`… bench`): the
 * system packages they drive for real (Debian's Chromium, Python zeep, PostgreSQL 15; wrk) are
 * checked before anything else runs. Missing ones are installed with apt-get when this runs as root
 * on a Debian machine; otherwise it stops at once with the exact command to run, rather than
 * failing a hundred tests twenty minutes later.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';

const postgresBin = process.env.FSS_TEST_POSTGRES_BIN || '/usr/lib/postgresql/15/bin';

interface Prerequisite {
  readonly what: string;
  readonly debianPackage: string;
  readonly present: () => boolean;
}

const chromium: Prerequisite = {
  what: 'Chromium at /usr/bin/chromium (the browser tests in e2e/, the app section of the bench)',
  debianPackage: 'chromium',
  present: () => existsSync('/usr/bin/chromium'),
};

const onPath = (command: string) => () => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

const needs: Readonly<Record<string, readonly Prerequisite[]>> = {
  test: [
    chromium,
    {
      what: 'Python zeep for /usr/bin/python3 (a real SOAP client, server/test/clients/zeep.test.ts)',
      debianPackage: 'python3-zeep',
      present: () => spawnSync('/usr/bin/python3', ['-c', 'import zeep'], { stdio: 'ignore' }).status === 0,
    },
    {
      what: `the PostgreSQL 15 server at ${postgresBin} and its system user (the "postgres" test project)`,
      debianPackage: 'postgresql-15',
      present: () =>
        existsSync(`${postgresBin}/postgres`) &&
        (userInfo().uid !== 0 || spawnSync('getent', ['passwd', 'postgres'], { stdio: 'ignore' }).status === 0),
    },
  ],
  bench: [
    { what: 'wrk (the load generator of the call throughput figures)', debianPackage: 'wrk', present: onPath('wrk') },
    { what: 'taskset (pins each server and the load generator to a CPU of its own)', debianPackage: 'util-linux', present: onPath('taskset') },
    chromium,
  ],
};

const purpose = process.argv[2] ?? '';
const prerequisites = needs[purpose];
if (!prerequisites) {
  console.error(`usage: system-packages.ts ${Object.keys(needs).join('|')}`);
  process.exit(2);
}
const command = purpose === 'test' ? 'npm test' : 'npm run bench';

function missing(): Prerequisite[] {
  return prerequisites.filter((p) => !p.present());
}

function run(command: string, args: string[]): boolean {
  console.log(`$ ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return result.status === 0;
}

function canInstall(): boolean {
  return userInfo().uid === 0 && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
}

let absent = missing();
if (absent.length > 0 && canInstall()) {
  console.log(`${command}: installing what it needs:\n${absent.map((p) => `  - ${p.what}`).join('\n')}`);
  const packages = absent.map((p) => p.debianPackage);
  if (run('apt-get', ['update', '-qq'])) run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages]);
  absent = missing();
}
if (absent.length > 0) {
  const packages = absent.map((p) => p.debianPackage).join(' ');
  console.error(
    `${command} needs these system packages first:\n${absent.map((p) => `  - ${p.what}`).join('\n')}\n` +
      `Install them, then run ${command} again:\n\n  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${packages}\n`,
  );
  process.exit(1);
}
