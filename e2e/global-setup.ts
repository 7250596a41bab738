/**
 * Starts the real service for the browser tests: a fresh data folder with two accounts (one for
 * the login tests, one for the file manager's), the built web app (dist/web, built by
 * `npm run test:e2e` before Playwright starts), a free port. Builds nothing itself. Then it starts
 * filling a folder with 10,000 items in the background, while the tests run (FolderAdd takes a few
 * ms each; e2e/big-folder.spec.ts waits for the last). Returns the teardown: stop the filling,
 * stop the service, remove the data folder.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { addFolder, addFolders, apiLogin } from './files-api';
import { startSmtpMailbox } from './smtp-mailbox';
import {
  MAILBOX_VARIABLE,
  BASE_URL_VARIABLE,
  BIG_FOLDER_NAME,
  BIG_FOLDER_SIZE,
  BIG_FOLDER_VARIABLE,
  E2E_ACCOUNT,
  E2E_PASSWORD,
  FILES_ACCOUNT,
  QUOTA_ACCOUNT,
  QUOTA_BYTES,
  QUOTA_PASSWORD,
  FILES_PASSWORD,
  bigItemName,
} from './service';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fss = path.join(root, 'bin', 'fss.mjs');
// FSS_E2E_WEB_ROOT: another build of the app to test (default: dist/web, what `npm run test:e2e` builds).
const webRoot = path.resolve(root, process.env.FSS_E2E_WEB_ROOT ?? path.join('dist', 'web'));
const START_TIMEOUT_MS = 60_000;

/** A port free on loopback now: the service is given it, so that its address is known before it starts. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The settings of a service on `port`, with the data folder `dataDir`. FSS_PUBLIC_URL is its own
 * address (links must point at this service), unless `publicUrl` is false: without it the service
 * sends no share e-mails (docs/protocol.md §16).
 */
export function serviceEnv(dataDir: string, port: number, options: { readonly publicUrl?: boolean } = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: String(port), FSS_DATA_DIR: dataDir, FSS_WEB_ROOT: webRoot };
  if (options.publicUrl === false) delete env.FSS_PUBLIC_URL;
  else env.FSS_PUBLIC_URL = `http://127.0.0.1:${port}`;
  // Every test logs in from 127.0.0.1, as a whole office behind one address would: the successful
  // Logins of a long run must not run into the per-address limit (docs/protocol.md §5.5).
  env.FSS_LOGINS_PER_ADDRESS = '1000000';
  return env;
}

/** Resolves with the URL of the `listening on http://HOST:PORT` line; rejects if the service ends first. */
function waitUntilListening(child: ChildProcess, output: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(() => {
      reject(new Error(`fss serve did not print "listening on" within ${START_TIMEOUT_MS / 1000} s. Output:\n${output()}`));
    }, START_TIMEOUT_MS);
    child.stdout?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const match = /listening on (https?:\/\/[^\s/]+)/.exec(pending);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`fss serve ended before listening (code ${code}, signal ${signal}). Output:\n${output()}`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * A second service, for a test that needs other settings than the main one's: a fresh data folder
 * with the files account, no SMTP server (it writes any e-mail to its outbox), the same web app.
 */
export async function startExtraService(options: { readonly publicUrl?: boolean }): Promise<{ readonly url: string; stop(): Promise<void> }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fss-e2e-extra-'));
  const env = serviceEnv(dataDir, await freePort(), options);
  let output = '';
  let child: ChildProcess | undefined;
  try {
    await promisify(execFile)(process.execPath, [fss, 'user', 'add', FILES_ACCOUNT, '--password', FILES_PASSWORD], { cwd: root, env, timeout: START_TIMEOUT_MS });
    child = spawn(process.execPath, [fss, 'serve'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const url = await waitUntilListening(child, () => output);
    const started = child;
    return {
      url,
      async stop() {
        await stop(started);
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (child) await stop(child);
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!existsSync(path.join(webRoot, 'index.html'))) {
    throw new Error('dist/web/index.html is missing: build the web app first (npm run test:e2e runs vite build).');
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fss-e2e-'));
  const env = serviceEnv(dataDir, await freePort());

  try {
    for (const [account, password, ...options] of [
      [E2E_ACCOUNT, E2E_PASSWORD],
      [FILES_ACCOUNT, FILES_PASSWORD],
      [QUOTA_ACCOUNT, QUOTA_PASSWORD, '--quota', String(QUOTA_BYTES)],
    ]) {
      await promisify(execFile)(process.execPath, [fss, 'user', 'add', account, '--password', password, ...options], {
        cwd: root,
        env,
        timeout: START_TIMEOUT_MS,
      });
    }
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`fss user add failed: ${(error as Error).message}\n${stdout}${stderr}`);
  }

  // E-mail: a real SMTP server on loopback that keeps each message it receives as a .eml file in
  // the folder named by FSS_E2E_MAILBOX (e2e/smtp-mailbox.ts; read with e2e/mailbox.ts). Started
  // before the service, which sends share e-mails through it (plain SMTP: no TLS on loopback).
  const mailbox = await startSmtpMailbox();
  env.FSS_SMTP_URL = mailbox.url;
  env.FSS_MAIL_FROM = 'File Storage <no-reply@files.example>';
  process.env[MAILBOX_VARIABLE] = mailbox.folder;

  // The service's output goes to .tmp/e2e-service.log (kept after the run, for failures).
  await mkdir(path.join(root, '.tmp'), { recursive: true });
  const log = createWriteStream(path.join(root, '.tmp', 'e2e-service.log'));
  let output = '';
  const child = spawn(process.execPath, [fss, 'serve'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      log.write(chunk);
      if (output.length < 20_000) output += chunk.toString('utf8');
    });
  }

  let baseUrl: string;
  try {
    baseUrl = await waitUntilListening(child, () => output);
  } catch (error) {
    await stop(child);
    await mailbox.close();
    log.end();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  process.env[BASE_URL_VARIABLE] = baseUrl;

  let filling: Promise<unknown> = Promise.resolve();
  const stopFilling = new AbortController();
  // FSS_E2E_SKIP_BIG_FOLDER=1: a run of other specs need not spend its CPU on the filling.
  if (process.env.FSS_E2E_SKIP_BIG_FOLDER === '1') stopFilling.abort();
  try {
    const files = await apiLogin(baseUrl, FILES_ACCOUNT, FILES_PASSWORD);
    const bigFolder = await addFolder(files, 0, BIG_FOLDER_NAME);
    process.env[BIG_FOLDER_VARIABLE] = String(bigFolder);
    const names = Array.from({ length: BIG_FOLDER_SIZE }, (_, index) => bigItemName(index));
    // Not awaited: the tests run meanwhile. A failure shows as the big-folder test's timeout, and here.
    filling = addFolders(files, bigFolder, names, { signal: stopFilling.signal }).catch((error: unknown) => {
      log.write(`filling the big folder failed: ${String(error)}\n`);
    });
  } catch (error) {
    await stop(child);
    await mailbox.close();
    log.end();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }

  return async () => {
    // A run without the big-folder test (one spec file) need not wait for the rest of the filling.
    stopFilling.abort();
    await filling;
    await stop(child);
    // After the service: it finishes the messages it is sending when it stops.
    await mailbox.close();
    log.end();
    await rm(dataDir, { recursive: true, force: true });
  };
}
