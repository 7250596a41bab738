/**
 * The hostile-input corpus (corpus/inputs.ts) against every operation of the catalog in each of the
 * four call forms: every request is answered within a time bound as DECISIONS.md §3 decides for its
 * form, the service answers an ordinary call after each one, nothing of either account changes, and
 * nothing outside the request is ever fetched or read.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, operations } from '../../src/catalog/operations';
import { addAccount, callSigned, element, logIn, type Session } from '../helpers/app-server';
import { FORMS, resultXml, type Form } from '../helpers/requests';
import { mismatch } from './corpus/answers';
import { CATEGORIES, hostileCases, type Category, type HostileCase } from './corpus/inputs';
import { callRequest, sendRaw, signFor, type Answer } from './corpus/wire';
import { buildWorld, worldState, type World } from './corpus/world';

let world: World;
/** An account of its own for the names test, outside the state the corpus compares. */
let carol: Session;
let canary: http.Server;
let canaryUrl = '';
/** Requests the canary server received: an XML reader that resolves anything would show up here. */
const canaryHits: string[] = [];
const tried = new Map<Category, number>();
let startedAt = 0;

const GetFiles = findOperation('UserService', 'GetFiles')!;

beforeAll(async () => {
  startedAt = Date.now();
  canary = http.createServer((req, res) => {
    canaryHits.push(`${req.method} ${req.url}`);
    res.end('<!ENTITY send SYSTEM "file:///etc/passwd">');
  });
  await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
  canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
  world = await buildWorld();
  // Logged in before the corpus: its thousands of refused logins throttle this address (§5.5).
  await addAccount(world.app, 'carol', 'carol-password-1');
  carol = await logIn(world.app, 'post', 'carol', 'carol-password-1');
}, 120_000);

afterAll(async () => {
  const total = [...tried.values()].reduce((a, b) => a + b, 0);
  const perCategory = CATEGORIES.map((c) => `${c} ${tried.get(c) ?? 0}`).join(', ');
  console.log(
    `hostile input: ${total} inputs tried over ${operations.length} operations x ${FORMS.length} forms in ${((Date.now() - startedAt) / 1000).toFixed(0)} s (${perCategory})`,
  );
  await new Promise<void>((resolve) => canary.close(() => resolve()));
  await world?.app.close();
});

/** An ordinary call, after every hostile one: the root listing of the caller, answered in full. */
async function expectStillServing(after: string): Promise<string | null> {
  const texts = { uid: String(world.alice.uid), token: world.alice.token, dir: '0', order: 'name', desc: '0' };
  const answer = await sendRaw(world.app.url, callRequest(GetFiles, 'post', { ...texts, sign: signFor(GetFiles, world.alice.key, texts) }));
  return answer.status === 200 && /<result code="0" msg="" count="\d+">/.test(answer.body) ? null : `the service stopped answering after ${after}: ${answer.status}`;
}

async function attempt(hostile: HostileCase, op: (typeof operations)[number], form: Form): Promise<string[]> {
  const where = `${op.name} ${form} ${hostile.category} ${hostile.label}`;
  let answer: Answer;
  try {
    answer = await sendRaw(world.app.url, hostile.request);
  } catch (error) {
    return [`${where}: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  const wrong = mismatch(answer, hostile.expected, op, form);
  if (wrong) problems.push(`${where}: ${wrong} — ${answer.body.slice(0, 300)}`);
  const down = await expectStillServing(where);
  if (down) problems.push(down);
  return problems;
}

/** Runs the cases a few at a time (the service takes concurrent calls); each worker checks the service after each of its cases. */
async function runAll(cases: ReadonlyArray<{ hostile: HostileCase; op: (typeof operations)[number] }>, form: Form): Promise<string[]> {
  const problems: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const { hostile, op } = cases[next++];
      problems.push(...(await attempt(hostile, op, form)));
      tried.set(hostile.category, (tried.get(hostile.category) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return problems;
}

describe.each(FORMS)('hostile input over %s', (form) => {
  for (const category of CATEGORIES) {
    it(`${category}: every operation answers as DECISIONS.md §3 says, keeps serving, and changes nothing`, async () => {
      const before = await worldState(world);
      const cases = operations.flatMap((op) => hostileCases(category, world, op, form, canaryUrl).map((hostile) => ({ hostile, op })));
      const problems = await runAll(cases, form);
      expect(problems.slice(0, 20)).toEqual([]);
      expect(await worldState(world)).toEqual(before);
    }, 120_000);
  }
});

describe('what the corpus must never cause', () => {
  it('no XML reader fetched the external entities, parameter entities or DTDs the corpus names', () => {
    expect(canaryHits).toEqual([]);
  });

  it('every operation of the catalog met every category in every form it can be sent in', () => {
    for (const category of CATEGORIES) expect(tried.get(category) ?? 0, category).toBeGreaterThan(0);
  });
});

describe('LIKE wildcards and its escape character are plain characters', () => {
  const FileSearch = findOperation('UserService', 'FileSearch')!;
  for (const keyword of ['%', '_', '%txt', 'n_tes', '\\', 'notes\\', '!', '[a-z]']) {
    it(`FileSearch for "${keyword}" finds no file (no name holds it)`, async () => {
      const answer = await callSigned(world.app, 'get', FileSearch, world.alice, { order: 'name', desc: '0', keyword });
      expect(element(resultXml(answer, FileSearch), 'result')?.attrs).toMatchObject({ code: '0', count: '0' });
    });
  }
});

describe('names Windows reserves, and trailing dots, are ordinary names (docs/protocol.md §10.1)', () => {
  const FolderAdd = findOperation('FileService', 'FolderAdd')!;
  const reserved = ['CON', 'nul', 'COM1', 'LPT1.txt', 'PRN.', 'name.', '...', '.hidden'];

  it('each is created, then listed exactly as given, in an account of its own', async () => {
    for (const name of reserved) {
      const answer = await callSigned(world.app, 'post', FolderAdd, carol, { dirid: 0, name });
      expect(element(resultXml(answer, FolderAdd), 'folder')?.attrs.name, name).toBe(name);
    }
    const listing = await callSigned(world.app, 'get', GetFiles, carol, { dir: '0', order: 'name', desc: '0' });
    const listed = [...resultXml(listing, GetFiles).matchAll(/<folder [^>]*name="([^"]*)"/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...reserved].sort());
  });
});

