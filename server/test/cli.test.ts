import { execFile } from 'node:child_process';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli';
import { callCaches } from '../src/operations/caches';
import { passwordHashQueue } from '../src/operations/crypto/hash-queue';
import { hashSecret } from '../src/operations/accounts/passwords';
import { apiLogin, login } from '../src/operations/accounts/sessions';
import { closeDatabase, openDatabase } from '../src/storage/db/engine/database';
import { callContext, tempDir, testConfig, testEnv } from './helpers/database';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Runs `fss …` in-process against one data folder, capturing its output. */
function cli(dataDir = tempDir()) {
  return async (args: string[], stdinText = '') => {
    let stdout = '';
    let stderr = '';
    const code = await main(args, testEnv(dataDir), {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      stdin: Readable.from(stdinText ? [stdinText] : []),
    });
    return { code, stdout, stderr };
  };
}

/** Logs in directly against the data folder the CLI wrote. */
async function tryLogin(dataDir: string, uid: string, pwd: string) {
  const config = testConfig({ dataDir });
  const db = await openDatabase(config);
  try {
    return await login(callContext({ db, config, now: () => new Date(), secret: Buffer.alloc(32), passwordHashes: passwordHashQueue(config), caches: callCaches(config) }), { uid, pwd });
  } finally {
    await closeDatabase(db);
  }
}

describe('fss command line', () => {
  test('user add creates an account, and user list shows it', async () => {
    const fss = cli();
    const added = await fss(['user', 'add', 'alice', '--password', 'secret123']);
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(added.stdout).toContain('alice');
    const listed = await fss(['user', 'list']);
    expect(listed.code).toBe(0);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header.split(/\s+/)).toEqual(['ID', 'NAME', 'QUOTA', 'USED', 'CREATED']);
    expect(row.split(/\s+/).slice(0, 4)).toEqual(['1001', 'alice', String(10 * 1024 ** 3), '0']);
    expect(row.split(/\s+/)[4]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test('user add takes a quota', async () => {
    const fss = cli();
    await fss(['user', 'add', 'alice', '--password', 'secret123', '--quota', '1GiB']);
    expect((await fss(['user', 'list'])).stdout).toContain(String(1024 ** 3));
  });

  test('the new account can log in', async () => {
    const dataDir = tempDir();
    await cli(dataDir)(['user', 'add', 'alice', '--password', 'secret123']);
    expect((await tryLogin(dataDir, 'alice', 'secret123')).kind).toBe('token');
  });

  test('user passwd sets the password given with --password', async () => {
    const dataDir = tempDir();
    const fss = cli(dataDir);
    await fss(['user', 'add', 'alice', '--password', 'secret123']);
    expect((await fss(['user', 'passwd', 'alice', '--password', 'new-secret-1'])).code).toBe(0);
    expect((await tryLogin(dataDir, 'alice', 'new-secret-1')).kind).toBe('token');
    expect((await tryLogin(dataDir, 'alice', 'secret123')).kind).toBe('tokenRefused');
  });

  test('user passwd reads the password from stdin when not given', async () => {
    const dataDir = tempDir();
    const fss = cli(dataDir);
    await fss(['user', 'add', 'alice', '--password', 'secret123']);
    expect((await fss(['user', 'passwd', 'alice'], 'from-stdin-9\n')).code).toBe(0);
    expect((await tryLogin(dataDir, 'alice', 'from-stdin-9')).kind).toBe('token');
  });

  test('user quota sets the quota, in bytes or with a unit', async () => {
    const fss = cli();
    await fss(['user', 'add', 'alice', '--password', 'secret123']);
    expect((await fss(['user', 'quota', 'alice', '5GiB'])).code).toBe(0);
    expect((await fss(['user', 'list'])).stdout).toContain(String(5 * 1024 ** 3));
    expect((await fss(['user', 'quota', '1001', '1234'])).code).toBe(0);
    expect((await fss(['user', 'list'])).stdout).toContain(' 1234 ');
  });

  test('apikey create prints a key once, stores only its hash, and the key logs in', async () => {
    const dataDir = tempDir();
    const fss = cli(dataDir);
    await fss(['user', 'add', 'alice', '--password', 'secret123']);
    const created = await fss(['apikey', 'create', 'alice', '--label', 'backup']);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^fss_[\w-]{43}$/);
    expect(created.stderr).toContain('shown only this once');

    const config = testConfig({ dataDir });
    const db = await openDatabase(config);
    try {
      const row = await db.selectFrom('api_keys').selectAll().executeTakeFirstOrThrow();
      expect(row).toMatchObject({ key_hash: hashSecret(key), label: 'backup' });
      const result = await apiLogin(callContext({ db, config, now: () => new Date(), secret: Buffer.alloc(32), passwordHashes: passwordHashQueue(config), caches: callCaches(config) }), { sid: key });
      expect(result).toMatchObject({ kind: 'token', uid: 1001 });
    } finally {
      await closeDatabase(db);
    }
    expect((await fss(['apikey', 'list', 'alice'])).stdout).toContain('backup');
  });

  test('help prints the usage', async () => {
    const result = await cli()(['help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('fss user add NAME');
  });

  describe('misuse: a message on stderr and a non-zero exit', () => {
    test.each([
      [[], 'missing command'],
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['user'], 'missing user command'],
      [['user', 'delete', 'alice'], 'unknown user command "delete"'],
      [['user', 'add'], 'missing argument: NAME'],
      [['user', 'add', 'alice', 'bob', '--password', 'secret123'], 'unexpected argument "bob"'],
      [['user', 'add', 'alice', '--pasword', 'secret123'], "Unknown option '--pasword'"],
      [['user', 'quota', 'alice'], 'missing argument: BYTES'],
      [['user', 'quota', 'alice', 'lots'], 'invalid quota "lots"'],
      [['user', 'quota', 'alice', '1.5GiB'], 'invalid quota "1.5GiB"'],
      [['user', 'quota', 'alice', '10XB'], 'invalid quota "10XB"'],
      [['apikey', 'create'], 'missing argument: NAME'],
    ])('fss %j', async (args, message) => {
      const result = await cli()(args);
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(message);
    });

    test('a duplicate user', async () => {
      const fss = cli();
      await fss(['user', 'add', 'alice', '--password', 'secret123']);
      const result = await fss(['user', 'add', 'ALICE', '--password', 'secret123']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('an account named "ALICE" already exists');
    });

    test('an unknown user', async () => {
      const fss = cli();
      for (const args of [['user', 'quota', 'bob', '1'], ['user', 'passwd', 'bob', '--password', 'secret123'], ['apikey', 'create', 'bob']]) {
        const result = await fss(args);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('no account "bob"');
      }
    });

    test('an invalid name, with the rule', async () => {
      const result = await cli()(['user', 'add', 'al ice', '--password', 'secret123']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('letters, digits');
    });

    test('a password too short, or none on stdin', async () => {
      const fss = cli();
      expect((await fss(['user', 'add', 'alice', '--password', 'short'])).stderr).toContain('8-256 characters');
      const fromEmptyStdin = await fss(['user', 'add', 'alice']);
      expect(fromEmptyStdin.code).toBe(1);
      expect(fromEmptyStdin.stderr).toContain('8-256 characters');
    });

    test('a bad setting in the environment', async () => {
      const result = await main(['user', 'list'], { FSS_DATA_DIR: tempDir(), PORT: 'eighty' }, {
        stdout: { write: () => true },
        stderr: { write: (text: string) => expect(text).toContain('PORT must be a whole number') },
        stdin: Readable.from([]),
      });
      expect(result).toBe(1);
    });
  });

  test('the installed bin: fss user add, then fss user list', async () => {
    const run = promisify(execFile);
    const env = { ...process.env, ...testEnv(tempDir()) };
    const bin = path.join(root, 'bin', 'fss.mjs');
    const added = await run(process.execPath, [bin, 'user', 'add', 'alice', '--password', 'secret123'], { env, cwd: root });
    expect(added.stdout).toContain('alice');
    const listed = await run(process.execPath, [bin, 'user', 'list'], { env, cwd: root });
    expect(listed.stdout).toMatch(/^1001\s+alice\s/m);
    const misuse = await run(process.execPath, [bin, 'user', 'nope'], { env, cwd: root }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(misuse?.code).toBe(2);
    expect(misuse?.stderr).toContain('unknown user command "nope"');
  });
});
