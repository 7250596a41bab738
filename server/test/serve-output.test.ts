/**
 * What an operator sees when `fss serve` starts: one JSON object per log line, the demo account and
 * the "listening on" line, and nothing else: no warnings on standard error (README, "Set up and run").
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { tempDir } from './helpers/database';
import { startTestS3Server, testS3Settings, type TestS3Server } from './helpers/s3-server';
import { killAllServices, startService, type ServiceProcess } from './helpers/service-process';

afterEach(killAllServices);

/** The lines of standard output that are not log lines (JSON objects). */
function plainLines(service: ServiceProcess): string[] {
  return service
    .output()
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('{'));
}

function logLines(service: ServiceProcess): Array<Record<string, unknown>> {
  return service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('fss serve on the embedded default', () => {
  test('a first start prints the demo account and where it listens, and nothing on standard error', async () => {
    const service = await startService(tempDir());
    expect(service.errorOutput()).toBe('');
    const plain = plainLines(service);
    expect(plain).toHaveLength(2);
    expect(plain[0]).toMatch(/^demo account created: name "demo", password "\S+" \(shown once;/);
    expect(plain[1]).toBe(`listening on ${service.url}`);
    expect(logLines(service).filter((line) => line.level !== 'info')).toEqual([]);
  });
});

describe('fss serve with content in S3', () => {
  let s3: TestS3Server | undefined;
  afterAll(async () => s3?.close());

  test("a dependency's process warning is one warn line of the log, never text on standard error", async () => {
    s3 = await startTestS3Server();
    const settings = testS3Settings(s3);
    const service = await startService(tempDir(), {
      FSS_S3_BUCKET: settings.bucket,
      FSS_S3_ENDPOINT: settings.endpoint,
      FSS_S3_REGION: settings.region,
      FSS_S3_ACCESS_KEY_ID: settings.accessKeyId,
      FSS_S3_SECRET_ACCESS_KEY: settings.secretAccessKey,
      FSS_S3_PREFIX: settings.prefix,
    });
    // The AWS SDK announces on Node.js before 22 that its later releases need 22 (a process warning).
    const nodeMajor = Number(process.versions.node.split('.')[0]);
    await expect.poll(() => logLines(service).filter((line) => line.event === 'process warning').length).toBe(nodeMajor < 22 ? 1 : 0);
    expect(service.errorOutput()).toBe('');
    for (const line of logLines(service).filter((entry) => entry.event === 'process warning')) {
      expect(line.level).toBe('warn');
      expect(line.message).toMatch(/AWS SDK/);
    }
  });
});

describe('fss serve whose log is read slowly', () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

  test('a SIGTERM while request lines wait for the reader: the requests were answered meanwhile, and every line is written before the process ends', async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('FSS_')));
    const child = spawn(process.execPath, [path.join(root, 'bin', 'fss.mjs'), 'serve'], {
      cwd: root,
      env: { ...env, FSS_DATA_DIR: tempDir(), PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const url = await new Promise<string>((resolve) => {
        const watch = () => {
          const match = /^listening on (\S+)$/m.exec(output);
          if (match) resolve(match[1]);
          else setTimeout(watch, 20);
        };
        watch();
      });
      child.stdout.pause(); // nobody reads the log from here on
      const requests = 5000; // about 800 KB of lines: more than the pipe holds
      let next = 0;
      const client = async () => {
        while (next < requests) {
          next++;
          await (await fetch(`${url}/log-test`)).arrayBuffer();
        }
      };
      await Promise.all(Array.from({ length: 8 }, client));
      child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 500));
      child.stdout.resume();
      const [code] = (await once(child, 'close')) as [number | null];
      expect(code).toBe(0);
      const lines = output.split('\n');
      expect(lines.pop()).toBe('');
      const requestLines = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.path === '/log-test');
      expect(requestLines).toHaveLength(requests);
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);
});
