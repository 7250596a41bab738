/**
 * The first step of `npm test`: the system packages the tests drive for real (Debian's Chromium,
 * Python zeep, PostgreSQL 15) are checked before anything else runs. Missing ones are installed
 * with apt-get when this runs as root on a Debian machine; otherwise it stops at once with the
 * exact command to run, rather than failing a hundred tests twenty minutes later.
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

const prerequisites: readonly Prerequisite[] = [
  {
    what: 'Chromium at /usr/bin/chromium (the browser tests in e2e/)',
    debianPackage: 'chromium',
    present: () => existsSync('/usr/bin/chromium'),
  },
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
];

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
  console.log(`npm test: installing what the tests need:\n${absent.map((p) => `  - ${p.what}`).join('\n')}`);
  const packages = absent.map((p) => p.debianPackage);
  if (run('apt-get', ['update', '-qq'])) run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages]);
  absent = missing();
}
if (absent.length > 0) {
  const packages = absent.map((p) => p.debianPackage).join(' ');
  console.error(
    `npm test needs these system packages first:\n${absent.map((p) => `  - ${p.what}`).join('\n')}\n` +
      `Install them, then run npm test again:\n\n  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${packages}\n`,
  );
  process.exit(1);
}
