#!/usr/bin/env node
// CI's newcomer smoke test: walks the README's path on a fresh clone of this checkout's commit.
// `npm ci`, then exactly `npm start` on a free port and an empty data folder; logs in as the demo
// account it prints, lists the root with a signed GetFiles, loads the app and a script it names,
// the WSDL, runs `npx fss user list` and `npx fss help`, stops the service with SIGTERM (exit 0).
// Any warning of the project's making in the install or the start fails it too. Plain Node, no
// dependencies: it must run before anything is installed. A failure names its step.
import { spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const checkout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(tmpdir(), 'fss-newcomer-'));
const clone = path.join(work, 'fss');
const dataDir = path.join(work, 'data');
const started = Date.now();
let service; // the `npm start` process, while it runs
let currentStep = 'setting up';

/** Output lines that are warnings of the project's making (npm's, Vite's, Node's, the log's). */
const WARNING = /^npm warn|^\(!\)|Warning:|"level":"warn"/im;

class StepFailure extends Error {}

function fail(message, output = '') {
  throw new StepFailure(`${message}${output ? `\n--- output ---\n${output.slice(-6000)}` : ''}`);
}

async function step(name, work) {
  currentStep = name;
  const t0 = Date.now();
  const result = await work();
  console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  return result;
}

/** Runs a command to its end in `cwd`; fails the step on a non-zero exit. */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? clone,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 240_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.error) fail(`${command} ${args.join(' ')}: ${result.error.message}`, output);
  if (result.status !== 0) fail(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`, output);
  return output;
}

function expectNoWarnings(what, output) {
  const line = output.split('\n').find((text) => WARNING.test(text));
  if (line !== undefined) fail(`${what} printed a warning: ${line}`, output);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function http(url, init) {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  } catch (error) {
    return fail(`${init?.method ?? 'GET'} ${url}: ${error.message}`);
  }
}

async function expectOk(response, what) {
  const text = await response.text();
  if (response.status !== 200) fail(`${what} answered ${response.status}`, text);
  return text;
}

/** The sign of docs/protocol.md §6: HMAC-SHA256 over the operation and its sorted, encoded parameters. */
function sign(key, operation, params) {
  const pairs = Object.keys(params)
    .sort()
    .map((name) => `${name}=${encodeURIComponent(params[name])}`)
    .join('&');
  return createHmac('sha256', key).update(`${operation}\n${pairs}`).digest('hex');
}

async function main() {
  const commit = await step('the checkout names its commit', () => run('git', ['rev-parse', 'HEAD'], { cwd: checkout }).trim());
  await step(`git clone of ${commit.slice(0, 12)} into a new folder`, () => {
    run('git', ['clone', '--quiet', '--no-checkout', checkout, clone], { cwd: work });
    run('git', ['checkout', '--quiet', '--detach', commit]);
  });
  await step('npm ci', () => expectNoWarnings('npm ci', run('npm', ['ci', '--no-audit', '--no-fund'], { timeoutMs: 600_000 })));

  const port = await freePort();
  const { url, demo } = await step(`npm start (PORT=${port}, FSS_DATA_DIR empty) until it listens`, () => startService(port));

  const session = await step('Login as the demo account over HTTP POST', async () => {
    const body = new URLSearchParams({ uid: demo.name, pwd: demo.password });
    const text = await expectOk(await http(`${url}/OAuthService.asmx/Login`, { method: 'POST', body }), 'Login');
    const match = /<token uid="(\d+)" key="([^"]+)"[^>]*>([^<]+)<\/token>/.exec(text);
    if (!match) fail('Login did not answer a token', text);
    return { uid: match[1], key: match[2], token: match[3] };
  });

  await step('GetFiles of the root, signed, over HTTP POST', async () => {
    const params = { uid: session.uid, token: session.token, dir: '0', order: 'name', desc: '0' };
    const body = new URLSearchParams({ ...params, sign: sign(session.key, 'GetFiles', params) });
    const text = await expectOk(await http(`${url}/UserService.asmx/GetFiles`, { method: 'POST', body }), 'GetFiles');
    if (!/<result code="0" msg="" count="\d+"/.test(text)) fail('GetFiles did not list the root', text);
  });

  await step('the app at / and a script it names', async () => {
    const html = await expectOk(await http(`${url}/`), 'GET /');
    const script = /<script[^>]+src="([^"]+\.js)"/.exec(html)?.[1];
    if (!script) fail('the page names no script', html);
    const response = await http(new URL(script, url));
    const js = await expectOk(response, `GET ${script}`);
    if (!/javascript/.test(response.headers.get('content-type') ?? '') || js.length < 1000) fail(`${script} is not the app's script`, js.slice(0, 500));
  });

  await step('the WSDL at /OAuthService.asmx?WSDL', async () => {
    const text = await expectOk(await http(`${url}/OAuthService.asmx?WSDL`), 'the WSDL');
    if (!/<wsdl:definitions[\s>]/.test(text) || !/name="Login"/.test(text)) fail('the WSDL is not a WSDL with Login', text.slice(0, 2000));
  });

  await step('npx fss user list', () => {
    const output = run('npx', ['fss', 'user', 'list'], { env: { FSS_DATA_DIR: dataDir } });
    if (!output.includes(demo.name)) fail('the demo account is not listed', output);
    expectNoWarnings('npx fss user list', output);
  });

  await step('npx fss help', () => {
    const output = run('npx', ['fss', 'help'], { env: { FSS_DATA_DIR: dataDir } });
    if (!/Usage: fss/.test(output)) fail('fss help printed no usage', output);
    expectNoWarnings('npx fss help', output);
  });

  await step('SIGTERM stops the service with exit status 0', () => stopService());
}

/** `npm start` as the README runs it; resolves with the URL and the demo account once it listens. */
function startService(port) {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['start'], {
      cwd: clone,
      env: { ...process.env, PORT: String(port), FSS_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // a process group of its own, so that nothing it started can outlive a failure
    });
    let output = '';
    service = { child, output: () => output, exit: new Promise((done) => child.once('exit', (code, signal) => done({ code, signal }))) };
    const timer = setTimeout(() => reject(new StepFailure(`no "listening on" line within 180 s\n--- output ---\n${output.slice(-6000)}`)), 180_000);
    const onData = (chunk) => {
      output += chunk;
      const listening = /^listening on (http:\/\/\S+)$/m.exec(output);
      if (!listening) return;
      clearTimeout(timer);
      const demo = /^demo account created: name "([^"]+)", password "([^"]+)"/m.exec(output);
      if (!demo) return reject(new StepFailure(`the first start printed no demo account\n--- output ---\n${output}`));
      const warning = output.split('\n').find((text) => WARNING.test(text));
      if (warning !== undefined) return reject(new StepFailure(`npm start printed a warning: ${warning}\n--- output ---\n${output.slice(-6000)}`));
      resolve({ url: listening[1], demo: { name: demo[1], password: demo[2] } });
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    void service.exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new StepFailure(`npm start exited (${code ?? signal}) before it listened\n--- output ---\n${output.slice(-6000)}`));
    });
  });
}

/** SIGTERM to npm alone, as a process manager sends it: npm must pass it on to the service. */
async function stopService() {
  const { child, exit } = service;
  child.kill('SIGTERM');
  const ended = await Promise.race([exit, new Promise((done) => setTimeout(() => done(null), 30_000))]);
  const output = service.output();
  if (ended === null) fail('the service did not exit within 30 s of SIGTERM', output);
  service = undefined;
  if (ended.code !== 0) fail(`the service exited with ${ended.code ?? ended.signal}, not 0`, output);
}

try {
  await main();
  console.log(`newcomer smoke test passed in ${Math.round((Date.now() - started) / 1000)} s`);
} catch (error) {
  console.error(`newcomer smoke test FAILED at step "${currentStep}":\n${error instanceof StepFailure ? error.message : error.stack}`);
  process.exitCode = 1;
} finally {
  if (service) {
    try {
      process.kill(-service.child.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  }
  rmSync(work, { recursive: true, force: true });
}
