/**
 * A call whose cost grows with what one account can create must not stall the other accounts
 * (docs/reliability.md). One account holds the worst cases the limits allow: the deepest nesting
 * (256 folders of 255-character names) and a folder of 50,000 files. Its heavy calls run while
 * another account's calls (and the health check) go on, against the whole service over HTTP
 * (real SQLite file).
 *
 * What is held to: the depth limit, over the wire; answers of the other account that are right
 * and that come back while a heavy call is still running, not after it; and, with a bound far
 * above anything measured (timing goals are bench/README.md's "Stalls"), the event loop's longest
 * wait while one client loops over every heavy call.
 */
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, type OperationSpec, type ServiceName } from '../../src/catalog/operations';
import { defaultLimits } from '../../src/config';
import { signRequest } from '../../src/operations/accounts/signing';
import { callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { testAccount } from '../helpers/listing-fixtures';
import { resultXml, type HttpAnswer } from '../helpers/requests';

const op = (service: ServiceName, name: string): OperationSpec => findOperation(service, name)!;
const FolderAdd = op('FileService', 'FolderAdd');
const Move = op('FileService', 'Move');
const Delete = op('FileService', 'FolderAndFileDelete');
const Restore = op('FileService', 'FolderAndFileRestore');
const GetFiles = op('UserService', 'GetFiles');
const GetFilesWhitPath = op('UserService', 'GetFilesWhitPath');
const FileSearch = op('UserService', 'FileSearch');
const FolderShare = op('FileService', 'FolderShare');

const WIDE = 50_000;
const DEPTH = defaultLimits.maxFolderDepth;
const longName = (level: number) => `${level} `.padEnd(defaultLimits.maxNameLength, 'n');

let app: TestApp;
let heavy: Session;
let other: Session;
/** The heavy account's deepest folder chain, root-most first, and its wide folder. */
let chain: number[];
let wide: number;
/** The other account's folder of three files: what its probes list. */
let mine: number;

async function call(session: Session, operation: OperationSpec, params: Record<string, string | number>): Promise<{ code: string; xml: string }> {
  const answer = await callSigned(app, 'post', operation, session, params);
  expect(answer.status).toBe(200);
  const xml = resultXml(answer, operation);
  return { code: element(xml, 'result')!.attrs.code, xml };
}

/** The other account's listing, checked: exactly its three files. */
async function probeListing(): Promise<void> {
  const { code, xml } = await call(other, GetFiles, { dir: mine, order: 'name', desc: '0' });
  expect(code).toBe('0');
  expect([...xml.matchAll(/<file [^>]*name="([^"]*)"/g)].map((m) => m[1])).toEqual(['a.txt', 'b.txt', 'c.txt']);
}

/** The health check: no database. */
function probeHealth(): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(`${app.url}/OAuthService.asmx`, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });
}

/** A signed POST whose answer is read as it streams: resolves `started` at its first byte. */
function streamed(session: Session, operation: OperationSpec, params: Record<string, string | number>): { started: Promise<void>; done: Promise<HttpAnswer> } {
  const values: Record<string, string> = { uid: String(session.uid), token: session.token, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])) };
  const text: Record<string, string> = {};
  for (const p of operation.params) if (p.name !== 'sign') text[p.name] = values[p.name] ?? '';
  values.sign = signRequest(session.key, operation.name, text);
  const body = operation.params.map((p) => `${p.name}=${encodeURIComponent(values[p.name] ?? '')}`).join('&');
  let onStart!: () => void;
  const started = new Promise<void>((resolve) => (onStart = resolve));
  const done = new Promise<HttpAnswer>((resolve, reject) => {
    const req = http.request(`${app.url}/${operation.service}.asmx/${operation.name}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        if (chunks.length === 0) onStart();
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
  return { started, done };
}

beforeAll(async () => {
  app = await startTestApp();
  const heavyRows = await testAccount(app.app.services, 'heavy');
  const otherRows = await testAccount(app.app.services, 'other');
  heavy = await logIn(app, 'post', 'heavy', 'heavy-password-1');
  other = await logIn(app, 'post', 'other', 'other-password-1');

  // The deepest nesting allowed, through FolderAdd as a client would make it.
  chain = [];
  for (let level = 1; level <= DEPTH; level++) {
    const { code, xml } = await call(heavy, FolderAdd, { dirid: chain.at(-1) ?? 0, name: longName(level) });
    expect(code).toBe('0');
    chain.push(Number(element(xml, 'folder')!.attrs.id));
  }
  // 50,000 files in one folder, written as rows (FileAdd would take minutes).
  wide = await heavyRows.folder('Wide');
  await heavyRows.files(Array.from({ length: WIDE }, (_, i) => `wide ${String(i).padStart(5, '0')}.txt`), { parent: wide });
  mine = await otherRows.folder('Mine');
  for (const name of ['a.txt', 'b.txt', 'c.txt']) await otherRows.file(name, { parent: mine });
}, 120_000);
afterAll(() => app?.close());

describe('the worst cases one account can create', () => {
  it('folders nest at most 256 deep: one more level is refused with 413, over the wire', async () => {
    expect((await call(heavy, FolderAdd, { dirid: chain.at(-1)!, name: 'one more' })).code).toBe('413');
    const { code, xml } = await call(heavy, GetFilesWhitPath, { dir: chain.at(-1)!, order: 'name', desc: '0' });
    expect(code).toBe('0');
    expect([...xml.matchAll(/<dir /g)]).toHaveLength(DEPTH + 1);
  });

  it("another account's listing is answered while a listing of 50,000 items is still being written", async () => {
    const big = streamed(heavy, GetFiles, { dir: wide, order: 'name', desc: '0' });
    let bigDone = false;
    const finished = big.done.then((answer) => {
      bigDone = true;
      return answer;
    });
    await big.started;
    await probeListing();
    expect(bigDone).toBe(false);
    const answer = await finished;
    expect(answer.body.match(/<file /g)).toHaveLength(WIDE);
  });

  it('the health check is answered while 50,000 items go to the bin, and while they come back', async () => {
    for (const [operation, params] of [
      [Delete, { dirids: wide, fids: '', is_real: 0 }],
      [Restore, { dirids: wide, fids: '' }],
    ] as const) {
      let running = true;
      const heavyCall = call(heavy, operation, params).finally(() => (running = false));
      // Probes sent once the call is under way (it takes hundreds of milliseconds): answered
      // before it ends only if it gives the event loop back as it goes.
      await new Promise((resolve) => setTimeout(resolve, 20));
      let answeredMeanwhile = 0;
      while (running) {
        expect(await probeHealth()).toBe(200);
        if (running) answeredMeanwhile++;
      }
      expect((await heavyCall).code).toBe('0');
      expect(answeredMeanwhile).toBeGreaterThan(0);
    }
    expect((await call(heavy, GetFiles, { dir: 0, order: 'name', desc: '0' })).xml).toContain('name="Wide"');
  });

  it("a client looping over the heavy calls leaves every answer to another account right", { timeout: 180_000 }, async () => {
    const side = Number(element((await call(heavy, FolderAdd, { dirid: 0, name: 'Side' })).xml, 'folder')!.attrs.id);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let looping = true;
    let probes = 0;
    const prober = (async () => {
      while (looping) {
        await probeListing();
        probes++;
      }
    })();
    try {
      for (let round = 0; round < 2; round++) {
        const heavyCalls: Array<[OperationSpec, Record<string, string | number>]> = [
          [GetFilesWhitPath, { dir: chain.at(-1)!, order: 'name', desc: '0' }],
          [GetFiles, { dir: wide, order: 'time', desc: '1' }],
          [FileSearch, { keyword: 'wide', order: 'size', desc: '0' }],
          [Delete, { dirids: wide, fids: '', is_real: 0 }],
          [Restore, { dirids: wide, fids: '' }],
          // Its steps give the event loop back inside its one transaction: 256 folders, shared again in round 2.
          [FolderShare, { dirids: chain.join(','), downpwd: '', downValue: 0, description: '' }],
          [Move, { dirids: chain[1], fids: '', todir: side }],
          [Move, { dirids: chain[1], fids: '', todir: chain[0] }],
        ];
        for (const [operation, params] of heavyCalls) expect((await call(heavy, operation, params)).code).toBe('0');
      }
    } finally {
      looping = false;
      await prober;
      delay.disable();
    }
    expect(probes).toBeGreaterThan(0);
    // Far above anything the bench measures: only a call that holds the event loop for whole
    // seconds (as GetFilesWhitPath of a folder 4,000 deep did) fails it.
    expect(delay.max / 1e6).toBeLessThan(2_000);
  });
});
