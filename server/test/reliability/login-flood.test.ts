/**
 * A flood of expensive unauthenticated work must not starve other users (docs/protocol.md §5.5,
 * docs/security.md "Password hashes and the thread pool"). Every Login costs a password hash
 * (scrypt, about 0.2 s of a thread of libuv's pool, the pool that also reads files); before the
 * hash queue, 32 clients looping Login held every thread, and a 1 MiB download took 8 s instead
 * of 10 ms.
 *
 * Against one real service process (`fss serve`, as operators run it): 32 clients loop Login in
 * the four call forms, half with the right password of a real account, half with unknown
 * accounts. Each attempt comes from an address of its own (the service trusts the loopback peer
 * as its proxy, FSS_TRUSTED_PROXIES, and reads X-Forwarded-For) and each unknown account is new,
 * so no counter of §5.5 can block anything: every throttled answer comes from the hash queue.
 * Meanwhile a user downloads a 1 MiB file.
 *
 * What must hold: logins go on being answered (tokens for the right password, `invalid` for the
 * unknown accounts, which still cost a hash), the excess is refused as the protocol throttles a
 * login (`reason="throttled"` with retryAfter, HTTP 200, in every form), nothing else is answered,
 * and the download completes with the right bytes. Its time is only checked against a generous
 * bound (well under the 8 s of before); the figure itself is the bench's (bench/README.md §4).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { element } from '../helpers/app-server';
import { callInForm, FORMS, resultXml, type Form } from '../helpers/requests';
import { killAllServices, runFss, startService, type ServiceProcess } from '../helpers/service-process';
import { apiLogin, bytesOf, fetchSha256, ok, Ops, sha256, upload, type Session } from './crash/client';

const CLIENTS = 32;
const PASSWORD = 'flood-password-1';
const FILE_BYTES = 1024 * 1024;
/** The downloads timed while the flood runs. */
const DOWNLOADS = 3;
/** Far above what a download takes with the queue (tens of ms), far below the 8 s without it. */
const GENEROUS_DOWNLOAD_MS = 5_000;

let dataDir: string;
let service: ServiceProcess;
let user: Session;
let fileId: number;
const bytes = bytesOf('login flood', FILE_BYTES);

async function fss(args: string[]): Promise<string> {
  const result = await runFss(dataDir, args);
  if (result.code !== 0) throw new Error(`fss ${args.join(' ')}: exit ${result.code}\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'fss-login-flood-'));
  await fss(['user', 'add', 'flood', '--password', PASSWORD]);
  const apiKey = (await fss(['apikey', 'create', 'flood', '--label', 'downloads'])).trim();
  service = await startService(dataDir, { FSS_TRUSTED_PROXIES: '127.0.0.1' });
  // The downloading user's session comes from an API key: no password hash to wait for.
  user = await apiLogin(service.url, apiKey);
  const uploaded = await upload(service.url, user, bytes, 256 * 1024);
  expect(uploaded.sha256).toBe(sha256(bytes));
  const added = await ok(service.url, Ops.FileAdd, user, { name: 'one-mebibyte.bin', ext: 'bin', size: FILE_BYTES, dirid: 0, hash: uploaded.sha256 });
  fileId = Number(added.files[0].id);
}, 120_000);

afterAll(async () => {
  await killAllServices();
  await rm(dataDir, { recursive: true, force: true });
});

interface Tally {
  tokens: number;
  invalid: number;
  throttled: number;
  /** retryAfter of each throttled answer, as sent. */
  retryAfters: Set<string>;
  /** Forms that answered a throttled login. */
  throttledForms: Set<Form>;
  /** Anything else: status, form, body. */
  unexpected: string[];
}

/** One client: Login after Login until `stop`, each from a fresh address; unknown accounts are fresh too. */
async function loopLogins(client: number, tally: Tally, stop: { now: boolean }): Promise<void> {
  const form = FORMS[client % FORMS.length];
  const rightPassword = client % 2 === 0;
  for (let attempt = 0; !stop.now; attempt++) {
    const uid = rightPassword ? 'flood' : `nobody-${client}-${attempt}`;
    const address = `2001:db8:${client.toString(16)}::${(attempt + 1).toString(16)}`;
    const answer = await callInForm(service.url, form, Ops.Login, { uid, pwd: PASSWORD }, undefined, { 'X-Forwarded-For': address });
    const token = answer.status === 200 ? element(resultXml(answer, Ops.Login), 'token') : null;
    if (token && token.text !== '0' && rightPassword) tally.tokens++;
    else if (token?.text === '0' && token.attrs.reason === 'invalid' && !rightPassword) tally.invalid++;
    else if (token?.text === '0' && token.attrs.reason === 'throttled') {
      tally.throttled++;
      tally.retryAfters.add(token.attrs.retryAfter);
      tally.throttledForms.add(form);
    } else tally.unexpected.push(`${form} ${answer.status}: ${answer.body.slice(0, 300)}`);
  }
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it(`${CLIENTS} clients looping Login: the excess is throttled with retryAfter in every form, logins go on, and a 1 MiB download completes`, { timeout: 240_000 }, async () => {
  const tally: Tally = { tokens: 0, invalid: 0, throttled: 0, retryAfters: new Set(), throttledForms: new Set(), unexpected: [] };
  const stop = { now: false };
  const clients = Array.from({ length: CLIENTS }, (_, client) => loopLogins(client, tally, stop));
  const downloadMs: number[] = [];
  try {
    // The flood is on once the queue refuses in every form.
    await waitFor(() => tally.throttledForms.size === FORMS.length, 'throttled login in every form');
    for (let i = 0; i < DOWNLOADS; i++) {
      const { result } = await ok(service.url, Ops.FileDownload, user, { fid: fileId });
      const started = performance.now();
      const fetched = await fetchSha256(result.url);
      downloadMs.push(performance.now() - started);
      expect(fetched).toEqual({ status: 200, size: FILE_BYTES, sha256: sha256(bytes) });
    }
    // Logins are still served, not only refused: right passwords get tokens, unknown accounts cost their hash.
    await waitFor(() => tally.tokens > 0 && tally.invalid > 0, 'token and invalid answer');
  } finally {
    stop.now = true;
    await Promise.all(clients);
  }
  console.log(`login flood: downloads ${downloadMs.map((ms) => `${Math.round(ms)} ms`).join(', ')}; logins: ${tally.tokens} tokens, ${tally.invalid} invalid, ${tally.throttled} throttled`);

  expect(tally.unexpected).toEqual([]);
  // The queue's refusal: "try again in a second", whole seconds as every retryAfter.
  expect([...tally.retryAfters]).toEqual(['1']);
  for (const ms of downloadMs) expect(ms).toBeLessThan(GENEROUS_DOWNLOAD_MS);
  expect(service.exited).toBe(false);
});
