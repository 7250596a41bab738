/**
 * The Host header is whatever the sender of a request writes (docs/protocol.md §16, "Links and the
 * Host header"). Without FSS_PUBLIC_URL the service builds the links of an answer from it, which is
 * harmless only while the links go back to that same sender. So:
 * - share e-mails, whose links leave the request under the service's own From, are sent only with
 *   FSS_PUBLIC_URL, and then carry its links whatever the Host; without it they are refused (503,
 *   reason public-url-unset), nothing changes, and the service said why in its log at start;
 * - no document or answer built from one request's Host is served to another request: every
 *   document the services render from the address they are reached at (the WSDL, the disco, the
 *   help and operation pages of every service in the catalog, the share page and its preview) and
 *   every read whose answer carries links, asked first with a forged Host, then with the real one.
 *
 * Over HTTP against the whole service, with the Host header written by the test.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, operationsOf, services, type OperationSpec, type ServiceName } from '../../src/catalog/operations';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { resultXml, send, type HttpAnswer, type Value } from '../helpers/requests';
import { insertTestFile, sha256Of, storeTestContent } from '../helpers/stored-files';
import { callRequest, sendRaw, signFor, type ParamTexts } from './corpus/wire';

const EVIL_HOST = 'login-files.evil.example';
const PUBLIC_URL = 'https://files.example.com';
const op = (service: ServiceName, name: string): OperationSpec => findOperation(service, name)!;

/** A signed call over HTTP POST with the Host header `host`. */
async function signedWithHost(app: TestApp, operation: OperationSpec, session: Session, params: Record<string, Value>, host: string): Promise<string> {
  const texts: ParamTexts = { uid: String(session.uid), token: session.token };
  for (const [name, value] of Object.entries(params)) texts[name] = String(value);
  const request = callRequest(operation, 'post', { ...texts, sign: signFor(operation, session.key, texts) });
  const answer = await sendRaw(app.url, { ...request, headers: { ...request.headers, Host: host } });
  expect(answer.status).toBe(200);
  return answer.body;
}

const resultOf = (xml: string) => element(xml, 'result')!.attrs;

async function addFile(app: TestApp, accountId: number, name: string): Promise<number> {
  const bytes = `the bytes of ${name}`;
  const { contentId } = await storeTestContent(app.app.services, bytes);
  return insertTestFile(app.app.services, { accountId, name, contentId, sha256: sha256Of(bytes), size: Buffer.byteLength(bytes) });
}

describe('share e-mails without FSS_PUBLIC_URL', () => {
  let app: TestApp;
  let alice: Session;
  let fid: number;
  let folder: number;

  beforeAll(async () => {
    app = await startTestApp();
    const aliceId = await addAccount(app, 'alice', 'alice-password-1');
    alice = await logIn(app, 'post', 'alice', 'alice-password-1');
    fid = await addFile(app, aliceId, 'report.txt');
    folder = Number(element(resultXml(await callSigned(app, 'post', op('FileService', 'FolderAdd'), alice, { dirid: 0, name: 'Docs' }), op('FileService', 'FolderAdd')), 'folder')!.attrs.id);
  }, 60_000);
  afterAll(() => app?.close());

  it('are refused with 503 and reason public-url-unset, whatever the Host, and nothing is shared or queued', async () => {
    for (const host of [EVIL_HOST, new URL(app.url).host]) {
      for (const [operation, params] of [
        [op('FileService', 'FolderEmailShare'), { dirid: folder, to: 'victim@example.com' }],
        [op('FileService', 'FileEmailShare'), { fid, to: 'victim@example.com' }],
      ] as const) {
        expect(resultOf(await signedWithHost(app, operation, alice, params, host))).toMatchObject({ code: '503', reason: 'public-url-unset' });
      }
    }
    const { db } = app.app.services;
    expect(await db.selectFrom('shares').selectAll().execute()).toEqual([]);
    expect(await db.selectFrom('emails').selectAll().execute()).toEqual([]);
  });

  it('the service says why, once, in its log', () => {
    const lines = app.logLines.filter((line) => line.includes('"event":"share e-mails off"'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('FSS_PUBLIC_URL is not set');
  });
});

describe('share e-mails with FSS_PUBLIC_URL', () => {
  let app: TestApp;
  let alice: Session;
  let fid: number;

  beforeAll(async () => {
    // No SMTP server: the messages are written to the outbox, as they would be sent.
    app = await startTestApp({ FSS_PUBLIC_URL: PUBLIC_URL });
    const aliceId = await addAccount(app, 'alice', 'alice-password-1');
    alice = await logIn(app, 'post', 'alice', 'alice-password-1');
    fid = await addFile(app, aliceId, 'report.txt');
  }, 60_000);
  afterAll(() => app?.close());

  it('carry links to FSS_PUBLIC_URL, never to the Host of the call that sent them', async () => {
    expect(resultOf(await signedWithHost(app, op('FileService', 'FileEmailShare'), alice, { fid, to: 'victim@example.com' }, EVIL_HOST)).code).toBe('0');
    const { db } = app.app.services;
    expect((await db.selectFrom('emails').select('base_url').execute()).map((row) => row.base_url)).toEqual([PUBLIC_URL]);
    expect(app.logLines.some((line) => line.includes('"event":"share e-mails off"'))).toBe(false);

    const outbox = path.join(app.config.dataDir, 'outbox');
    let written: string[] = [];
    for (let waited = 0; waited < 10_000 && written.length === 0; waited += 50) {
      written = await readdir(outbox).catch(() => []);
      if (written.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(written).toHaveLength(1);
    const message = await readFile(path.join(outbox, written[0]), 'utf8');
    const { code } = await db.selectFrom('shares').select('code').executeTakeFirstOrThrow();
    expect(message).toContain(`${PUBLIC_URL}/s/${code}`);
    expect(message).not.toContain('evil');
  });
});

describe('documents and answers built from a Host', () => {
  let app: TestApp;
  let webRoot: string;
  let alice: Session;
  let shareCode: string;
  let fid: number;

  beforeAll(async () => {
    webRoot = await mkdtemp(path.join(os.tmpdir(), 'fss-host-web-'));
    await writeFile(path.join(webRoot, 'index.html'), '<!doctype html><html><head><title>Files</title></head><body></body></html>\n');
    app = await startTestApp({ FSS_WEB_ROOT: webRoot });
    const aliceId = await addAccount(app, 'alice', 'alice-password-1');
    alice = await logIn(app, 'post', 'alice', 'alice-password-1');
    fid = await addFile(app, aliceId, 'report.txt');
    const shared = await callSigned(app, 'post', op('FileService', 'FileShare'), alice, { fids: String(fid), downpwd: '', downValue: 0, description: '' });
    shareCode = element(resultXml(shared, op('FileService', 'FileShare')), 'file')!.attrs.code;
    await callSigned(app, 'post', op('FileService', 'FileLink'), alice, { fid });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await rm(webRoot, { recursive: true, force: true });
  });

  /** Every document a service renders from the address it is reached at, for every service of the catalog. */
  const documents = () => [
    ...services.flatMap((service) => [`/${service}.asmx`, `/${service}.asmx?WSDL`, `/${service}.asmx?disco`, `/${service}.asmx?op=${operationsOf(service)[0].name}`]),
    `/s/${shareCode}`,
  ];

  const getWithHost = (target: string, host: string): Promise<HttpAnswer> => send(app.url, 'GET', target, { Host: host });

  it('a document asked for with a forged Host is not what a later request with the real Host gets', async () => {
    const realHost = new URL(app.url).host;
    const namingTheHost: string[] = [];
    for (const target of documents()) {
      const forged = await getWithHost(target, EVIL_HOST);
      expect(forged.status, target).toBe(200);
      // A document that names its address names the forged Host to the request that sent it…
      if (forged.body.includes(EVIL_HOST)) namingTheHost.push(target);
      // …and never to another request, nor to a shared cache.
      const real = await getWithHost(target, realHost);
      expect(real.status, target).toBe(200);
      expect(real.body, target).not.toContain(EVIL_HOST);
      expect(String(real.headers['cache-control']), target).toMatch(/private|no-store|no-cache/);
    }
    // The probe reached documents that are built from the Host: every WSDL and disco, and the share page.
    for (const service of services) expect(namingTheHost).toEqual(expect.arrayContaining([`/${service}.asmx?WSDL`, `/${service}.asmx?disco`]));
    expect(namingTheHost).toContain(`/s/${shareCode}`);
  });

  it('an answer whose links come from the Host is not what a later call with the real Host gets', async () => {
    const realHost = new URL(app.url).host;
    const reads: Array<[OperationSpec, Record<string, Value>]> = [
      [op('UserService', 'GetShareFiles'), { order: 'name', desc: '0' }],
      [op('UserService', 'GetLinkFiles'), { order: 'name', desc: '0' }],
      [op('FileService', 'GetFileEmailShareInfo'), { fid }],
      [op('FileService', 'FileDownload'), { fid }],
    ];
    for (const [operation, params] of reads) {
      expect(await signedWithHost(app, operation, alice, params, EVIL_HOST), operation.name).toContain(EVIL_HOST);
      const real = await signedWithHost(app, operation, alice, params, realHost);
      expect(real, operation.name).not.toContain(EVIL_HOST);
      expect(real, operation.name).toContain(realHost);
    }
    const ShareOpen = op('ShareService', 'ShareOpen');
    const open = (host: string) => sendRaw(app.url, { ...callRequest(ShareOpen, 'get', { code: shareCode, downpwd: '' }), headers: { Host: host } });
    expect((await open(EVIL_HOST)).body).toContain(EVIL_HOST);
    expect((await open(realHost)).body).not.toContain(EVIL_HOST);
  });
});
