/**
 * Nothing secret reaches a log line (docs/security.md "Logs"). The service runs as an operator
 * runs it (`fss serve` in a child process, its stdout and stderr captured whole) with a known server
 * secret and an SMTP server that needs a password, through a full journey in the call forms that
 * put secrets where a careless log would pick them up (HTTP GET query strings, bearer headers,
 * capability paths): failed and successful logins, an API-key login, signed calls, an upload, a
 * share with an extraction code and a cover image, the share page, a direct link, download URLs,
 * an encrypted folder unlocked with its password, an e-mail share (one recipient refused), logout.
 *
 * Every secret the journey sees or sends is collected: passwords (right and wrong), tokens, signing
 * keys, signs, the API key, extraction codes, share, link and image codes, download URL grants
 * and their signatures, item passwords, the server secret, the SMTP password. The test then checks
 * that none of them, nor its base64, base64url, hex or URL-encoded form, occurs in any line the
 * service wrote; that every line is a JSON log line (or the "listening on" line); and that the
 * access log names paths without their query strings, and capability paths as their route only.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, type OperationSpec, type ServiceName } from '../../src/catalog/operations';
import { signRequest } from '../../src/operations/accounts/signing';
import { element } from '../helpers/app-server';
import { SMTP_PASSWORD, smtpUrl, startSmtpServer, type TestSmtpServer } from '../helpers/mail';
import { resultXml, send, soapEnvelope, type HttpAnswer } from '../helpers/requests';
import { killAllServices, runFss, startService, type ServiceProcess } from '../helpers/service-process';
import { sha256Of } from '../helpers/stored-files';

const op = (service: ServiceName, name: string): OperationSpec => findOperation(service, name)!;

const PASSWORD = 'Correct-Horse-7731';
const WRONG_PASSWORDS = ['Wrong-Guess-0001', 'Wrong-Guess-0002', 'Wrong Guess/+=3'];
const EXTRACTION_CODE = 'Xq7k-9Lp';
const WRONG_EXTRACTION_CODE = 'Zz9-wrong';
const ITEM_PASSWORD = 'vault pass/+&=42';
const WRONG_ITEM_PASSWORD = 'vault guess 0099';
const SERVER_SECRET = randomBytes(32);
const FAKE_API_KEY = `fss_${randomBytes(32).toString('base64url')}`;

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** Every secret value the journey saw or sent, with what it is (for the failure message). */
const secrets = new Map<string, string>();
const remember = (what: string, value: string) => {
  if (value) secrets.set(value, what);
};

let dataDir: string;
let webRoot: string;
let smtp: TestSmtpServer;
let service: ServiceProcess;

interface Session {
  readonly uid: number;
  readonly token: string;
  readonly key: string;
}

/** Requests the journey sent: each must have its line in the access log. */
let requestsSent = 0;
function request(...args: Parameters<typeof send>): Promise<HttpAnswer> {
  requestsSent++;
  return send(...args);
}

const query = (values: Record<string, string>) =>
  Object.entries(values)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');

/** An HTTP GET call: every parameter, secrets included, in the query string. */
function getCall(operation: OperationSpec, values: Record<string, string>): Promise<HttpAnswer> {
  return request(service.url, 'GET', `/${operation.service}.asmx/${operation.name}?${query(values)}`, {});
}

/** A signed call over HTTP GET (uid, token and sign in the query string); remembers the sign. */
async function signedGet(operation: OperationSpec, session: Session, params: Record<string, string | number>): Promise<string> {
  const values: Record<string, string> = { uid: String(session.uid), token: session.token };
  for (const [name, value] of Object.entries(params)) values[name] = String(value);
  const text = Object.fromEntries(operation.params.filter((p) => p.name !== 'sign').map((p) => [p.name, values[p.name] ?? '']));
  const sign = signRequest(session.key, operation.name, text);
  remember(`the sign of ${operation.name}`, sign);
  const answer = await getCall(operation, { ...values, sign });
  expect(answer.status).toBe(200);
  return resultXml(answer, operation);
}

const resultOf = (xml: string) => element(xml, 'result')!.attrs;

/** A token answer: remembers the token and its key; null when refused. */
function sessionOf(answer: HttpAnswer, operation: OperationSpec, what: string): Session | null {
  const token = element(resultXml(answer, operation), 'token')!;
  if (token.text === '0') return null;
  remember(`the token of ${what}`, token.text);
  remember(`the signing key of ${what}`, token.attrs.key);
  return { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key };
}

/** The paths of the capability URLs the journey was given, with what each is. */
const capabilityPaths: Array<{ what: string; path: string }> = [];

/** The capability parts of a URL the service answered: its path segments after /d/, /l/, /s/ (a cover image: its tag). */
function rememberUrl(what: string, url: string): string {
  const { pathname } = new URL(url);
  const [, route, code, ...rest] = pathname.split('/');
  if (route === 's' && code === 'image') remember(`${what}: the image tag`, rest[1]);
  else remember(`${what}: the code in /${route}/`, code);
  if (route === 'd') for (const part of code.split('.')) remember(`${what}: a part of the grant`, part);
  capabilityPaths.push({ what, path: pathname });
  return pathname;
}

/**
 * Other spellings of a capability path that the service reads as that path: the route in capitals
 * or percent-encoded, slashes doubled or encoded, backslashes, dot segments (request-target.ts:
 * the URL parser, then routePath). Each must reach the same route, and be logged as it.
 */
function spellingsOf(pathname: string): string[] {
  const [, route, ...rest] = pathname.split('/');
  const tail = rest.join('/');
  const encoded = `%${route.charCodeAt(0).toString(16).toUpperCase()}`;
  return [
    `/${route.toUpperCase()}/${tail}`,
    `//${route}/${tail}`,
    `/${route}//${tail}`,
    `///${route.toUpperCase()}///${tail}`,
    `/${encoded}/${tail}`,
    `/${encoded.toLowerCase()}%2f${tail}`,
    `/${route}%2F${tail}`,
    `/\\${route}\\${tail.split('/').join('\\')}`,
    `/x/../${route.toUpperCase()}/${tail}`,
    `/${route}/./${tail}`,
  ];
}

/** GET with the target sent exactly as given (no client-side reading of dots, slashes or case): its status and type. */
function getRaw(target: string): Promise<string> {
  requestsSent++;
  const { hostname, port } = new URL(service.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: target, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve(`${res.statusCode} ${res.headers['content-type']}`));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Requests of capability paths in other spellings: what each path answered, and what each spelling did. */
const spellingsSent: Array<{ what: string; target: string; status: string; expected: string }> = [];

async function spellCapabilityPaths(): Promise<void> {
  for (const { what, path: pathname } of capabilityPaths) {
    const expected = await getRaw(pathname);
    for (const target of spellingsOf(pathname)) spellingsSent.push({ what, target, status: await getRaw(target), expected });
  }
}

const Login = op('OAuthService', 'Login');
const APILogin = op('OAuthService', 'APILogin');
const Logout = op('OAuthService', 'Logout');
const GetFiles = op('UserService', 'GetFiles');
const FileAdd = op('FileService', 'FileAdd');
const FolderAdd = op('FileService', 'FolderAdd');
const FileShare = op('FileService', 'FileShare');
const ShareImageUpload = op('FileService', 'ShareImageUpload');
const FileLink = op('FileService', 'FileLink');
const FileDownload = op('FileService', 'FileDownload');
const FolderEncrypt = op('FileService', 'FolderEncrypt');
const Unlock = op('FileService', 'Unlock');
const FileEmailShare = op('FileService', 'FileEmailShare');
const ShareOpen = op('ShareService', 'ShareOpen');
const ShareDownload = op('ShareService', 'ShareDownload');

async function journey(): Promise<void> {
  // Failed logins, in three forms: the password in a query string, a form body, a SOAP envelope.
  expect(sessionOf(await getCall(Login, { uid: 'alice', pwd: WRONG_PASSWORDS[0] }), Login, 'a wrong login')).toBeNull();
  expect(sessionOf(await request(service.url, 'POST', '/OAuthService.asmx/Login', { 'Content-Type': 'application/x-www-form-urlencoded' }, query({ uid: 'alice', pwd: WRONG_PASSWORDS[1] })), Login, '')).toBeNull();
  const soap = await request(
    service.url,
    'POST',
    '/OAuthService.asmx',
    { 'Content-Type': 'application/soap+xml; charset=utf-8' },
    soapEnvelope('1.2', `<Login xmlns="http://tempuri.org/"><uid>nobody</uid><pwd>${WRONG_PASSWORDS[2]}</pwd></Login>`),
  );
  expect(sessionOf(soap, Login, '')).toBeNull();
  expect(sessionOf(await getCall(APILogin, { sid: FAKE_API_KEY }), APILogin, '')).toBeNull();

  // Two sessions by password, one by API key.
  const alice = sessionOf(await getCall(Login, { uid: 'alice', pwd: PASSWORD }), Login, "alice's first session")!;
  const second = sessionOf(
    await request(service.url, 'POST', '/OAuthService.asmx', { 'Content-Type': 'application/soap+xml; charset=utf-8' }, soapEnvelope('1.2', `<Login xmlns="http://tempuri.org/"><uid>alice</uid><pwd>${PASSWORD}</pwd></Login>`)),
    Login,
    "alice's second session",
  )!;
  const robot = sessionOf(await getCall(APILogin, { sid: apiKey }), APILogin, 'the API-key session')!;
  expect(resultOf(await signedGet(GetFiles, robot, { dir: '0', order: 'name', desc: '0' })).code).toBe('0');
  // A call with a sign made with the wrong key, and one with a token that is not alice's.
  const forged = { ...alice, key: 'f'.repeat(64) };
  expect(resultOf(await signedGet(GetFiles, forged, { dir: '0', order: 'name', desc: '0' })).code).toBe('403');
  expect(resultOf(await signedGet(GetFiles, { ...alice, token: robot.token.split('').reverse().join('') }, { dir: '0', order: 'name', desc: '0' })).code).toBe('401');

  // An upload (tus, the token as a bearer), then FileAdd.
  const bytes = Buffer.from('the quarterly report, confidential');
  const tus = { 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${alice.token}` };
  const created = await request(service.url, 'POST', '/upload/', { ...tus, 'Upload-Length': String(bytes.length), 'Upload-Metadata': `filename ${Buffer.from('report.txt').toString('base64')}` });
  expect(created.status).toBe(201);
  const uploadPath = new URL(String(created.headers.location)).pathname;
  expect((await request(service.url, 'PATCH', uploadPath, { ...tus, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }, bytes)).status).toBe(204);
  const added = await signedGet(FileAdd, alice, { name: 'report.txt', ext: 'txt', size: bytes.length, dirid: 0, hash: sha256Of(bytes) });
  const fid = Number(element(added, 'file')!.attrs.id);

  // A share with an extraction code and a cover image; the share page and the ShareService.
  remember('the extraction code', EXTRACTION_CODE);
  remember('a wrong extraction code', WRONG_EXTRACTION_CODE);
  const shared = element(await signedGet(FileShare, alice, { fids: String(fid), downpwd: EXTRACTION_CODE, downValue: 0, description: 'Q3' }), 'file')!.attrs;
  const sharePath = rememberUrl('the share page', shared.url);
  const imageAnswer = await request(
    service.url,
    'POST',
    '/FileService.asmx/ShareImageUpload',
    { 'Content-Type': 'application/x-www-form-urlencoded' },
    `${query({ uid: String(alice.uid), token: alice.token, fid: String(fid), ImagefileName: 'cover.png' })}&${[...PNG].map((byte) => `byteFileStream=${byte}`).join('&')}`,
  );
  const imagePath = rememberUrl('the cover image', element(resultXml(imageAnswer, ShareImageUpload), 'string')!.text);
  expect((await request(service.url, 'GET', imagePath, {})).status).toBe(200);
  expect((await request(service.url, 'GET', `${sharePath}?pwd=${encodeURIComponent(EXTRACTION_CODE)}`, {})).status).toBe(200);
  expect(resultOf(resultXml(await getCall(ShareOpen, { code: shared.code, downpwd: WRONG_EXTRACTION_CODE }), ShareOpen)).code).toBe('403');
  expect(resultOf(resultXml(await getCall(ShareOpen, { code: shared.code, downpwd: EXTRACTION_CODE }), ShareOpen)).code).toBe('0');
  const shareDownload = resultOf(resultXml(await getCall(ShareDownload, { code: shared.code, downpwd: EXTRACTION_CODE, fid: String(fid) }), ShareDownload));
  expect((await request(service.url, 'GET', rememberUrl('a share download URL', shareDownload.url), {})).status).toBe(200);

  // A direct link, and a download URL read whole, by range, and by HEAD.
  const link = rememberUrl('the direct link', resultOf(await signedGet(FileLink, alice, { fid })).url);
  expect((await request(service.url, 'GET', link, {})).status).toBe(200);
  const download = rememberUrl('a download URL', resultOf(await signedGet(FileDownload, alice, { fid })).url);
  expect((await request(service.url, 'GET', download, { Range: 'bytes=0-3' })).status).toBe(206);
  expect((await request(service.url, 'HEAD', download, {})).status).toBe(200);

  // An encrypted folder: a wrong password, the right one, and a download URL that carries its key.
  remember('the item password', ITEM_PASSWORD);
  remember('a wrong item password', WRONG_ITEM_PASSWORD);
  const folder = Number(element(await signedGet(FolderAdd, alice, { dirid: 0, name: 'Vault' }), 'folder')!.attrs.id);
  const inVault = Number(element(await signedGet(FileAdd, alice, { name: 'vaulted.txt', ext: 'txt', size: bytes.length, dirid: folder, hash: sha256Of(bytes) }), 'file')!.attrs.id);
  expect(resultOf(await signedGet(FolderEncrypt, alice, { dirid: folder, password: ITEM_PASSWORD, password_tip: 'the usual' })).code).toBe('0');
  expect(resultOf(await signedGet(Unlock, second, { dirid: folder, fid: 0, password: WRONG_ITEM_PASSWORD })).code).toBe('403');
  expect(resultOf(await signedGet(Unlock, second, { dirid: folder, fid: 0, password: ITEM_PASSWORD })).code).toBe('0');
  const plaintext = await request(service.url, 'GET', rememberUrl('an encrypted file download URL', resultOf(await signedGet(FileDownload, second, { fid: inVault })).url), {});
  expect(plaintext.body).toBe(bytes.toString());

  // An e-mail share: one recipient takes it, the other is refused by the SMTP server.
  expect(resultOf(await signedGet(FileEmailShare, alice, { fid, to: 'friend@example.com;nobody@example.com' })).code).toBe('0');
  const settled = () => smtp.received.length === 1 && /"event":"mail (not sent|delivery failed)/.test(service.output());
  for (let waited = 0; waited < 30_000 && !settled(); waited += 100) await sleep(100);
  expect(smtp.received.map((mail) => mail.rcptTo)).toEqual([['friend@example.com']]);
  expect(smtp.received[0].raw).toContain(EXTRACTION_CODE);

  // Every capability path again, in every spelling the service reads as it.
  await spellCapabilityPaths();

  expect(await signedGet(Logout, second, {})).toBeDefined();
}

let apiKey = '';

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'fss-log-scan-'));
  webRoot = await mkdtemp(path.join(os.tmpdir(), 'fss-log-scan-web-'));
  await writeFile(path.join(webRoot, 'index.html'), '<!doctype html><html><head><title>Files</title></head><body></body></html>\n');
  smtp = await startSmtpServer(0, { rejectRecipients: ['nobody@example.com'] });

  remember('the password', PASSWORD);
  WRONG_PASSWORDS.forEach((password) => remember('a wrong password', password));
  remember('the server secret (base64)', SERVER_SECRET.toString('base64'));
  remember('the SMTP password', SMTP_PASSWORD);
  remember('a wrong API key', FAKE_API_KEY);

  expect((await runFss(dataDir, ['user', 'add', 'alice', '--password', PASSWORD])).code).toBe(0);
  const created = await runFss(dataDir, ['apikey', 'create', 'alice', '--label', 'backup']);
  expect(created.code).toBe(0);
  apiKey = created.stdout.trim();
  remember('the API key', apiKey);

  service = await startService(dataDir, {
    FSS_SECRET: SERVER_SECRET.toString('base64'),
    FSS_SMTP_URL: smtpUrl(smtp.port),
    FSS_MAIL_FROM: 'Files <files@example.com>',
    FSS_PUBLIC_URL: 'https://files.example.com',
    FSS_WEB_ROOT: webRoot,
  });
  await journey();
  // A clean stop: whatever the service logs on its way out is scanned too.
  await service.stop();
}, 120_000);

afterAll(async () => {
  await killAllServices();
  await smtp?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(webRoot, { recursive: true, force: true });
});

/** A secret and the forms in which a careless log line could carry it. */
function formsOf(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url'), Buffer.from(secret).toString('hex')]);
  // A secret that is itself an encoding (tokens, keys, signs, grants): its bytes in the other encodings too.
  const decoded: Buffer[] = [];
  if (/^[0-9a-f]+$/i.test(secret) && secret.length % 2 === 0) decoded.push(Buffer.from(secret, 'hex'));
  if (/^[A-Za-z0-9_-]+$/.test(secret)) decoded.push(Buffer.from(secret, 'base64url'));
  if (/^[A-Za-z0-9+/]+=*$/.test(secret)) decoded.push(Buffer.from(secret, 'base64'));
  for (const bytes of decoded) {
    if (bytes.length < 8) continue;
    forms.add(bytes.toString('hex'));
    forms.add(bytes.toString('base64'));
    forms.add(bytes.toString('base64url'));
  }
  // A form too short to be told from ordinary text cannot be searched for.
  return [...forms].filter((form) => form.length >= 8);
}

describe('the log of a full journey', () => {
  const lines = () => service.output().split('\n').filter((line) => line.trim() !== '');

  it('was captured whole', () => {
    // service-process.ts keeps the newest 200,000 characters: the journey's log must fit.
    expect(service.output().length).toBeLessThan(200_000);
    expect(lines().some((line) => line.startsWith('listening on '))).toBe(true);
    expect(requestsSent).toBeGreaterThan(30);
    expect(lines().filter((line) => line.includes('"event":"request"'))).toHaveLength(requestsSent);
  });

  it('collected the secrets it must look for', () => {
    const kinds = new Set([...secrets.values()].map((what) => what.replace(/^(the token|the signing key|the sign) of .*/, '$1')));
    for (const kind of ['the password', 'the API key', 'the token', 'the signing key', 'the sign', 'the extraction code', 'the item password', 'the server secret (base64)', 'the SMTP password']) {
      expect(kinds).toContain(kind);
    }
    expect([...secrets.values()].filter((what) => what.includes('part of the grant')).length).toBeGreaterThanOrEqual(6);
  });

  it('holds no secret in any form in any line', () => {
    const found: string[] = [];
    for (const [secret, what] of secrets) {
      for (const form of formsOf(secret)) {
        const line = lines().find((candidate) => candidate.includes(form));
        if (line) found.push(`${what} (as ${form}) in: ${line}`);
      }
    }
    // The server secret's other encodings: hex and base64url of its 32 bytes.
    for (const form of [SERVER_SECRET.toString('hex'), SERVER_SECRET.toString('base64url')]) {
      const line = lines().find((candidate) => candidate.includes(form));
      if (line) found.push(`the server secret (as ${form}) in: ${line}`);
    }
    expect(found).toEqual([]);
  });

  it('is JSON lines with a time, a level and an event, besides the lines of the command itself', () => {
    for (const line of lines()) {
      if (/^listening on http:\/\/127\.0\.0\.1:\d+$|^fss: SIGTERM, shutting down$/.test(line)) continue;
      const entry = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(entry).slice(0, 3)).toEqual(['time', 'level', 'event']);
    }
  });

  it('names request paths without their query strings, and capability paths as their route only', () => {
    const requests = lines()
      .filter((line) => line.includes('"event":"request"'))
      .map((line) => JSON.parse(line) as { path: string; method: string });
    const paths = new Set(requests.map((request) => request.path));
    for (const requestPath of paths) {
      expect(requestPath).not.toContain('?');
      expect(requestPath).not.toMatch(/token|sign=|pwd|sid=|password/i);
      if (/^\/(s|l|d)\//.test(requestPath)) expect(['/s/…', '/l/…', '/d/…']).toContain(requestPath);
    }
    // The journey's GET calls with secrets in the query string are there, as their paths.
    expect(paths).toContain('/OAuthService.asmx/Login');
    expect(paths).toContain('/FileService.asmx/Unlock');
    expect(paths).toContain('/ShareService.asmx/ShareOpen');
    for (const route of ['/s/…', '/l/…', '/d/…']) expect(paths).toContain(route);
  });

  it('names a capability path in every spelling the service reads as it by its route only', () => {
    // The journey gave a share page, a cover image, share and account download URLs and a direct link.
    expect(new Set(capabilityPaths.map(({ path: p }) => p.split('/')[1]))).toEqual(new Set(['s', 'd', 'l']));
    expect(capabilityPaths.some(({ path: p }) => p.startsWith('/s/image/'))).toBe(true);
    // Each spelling reached the route its path names (the same answer), so each is a spelling that counts.
    expect(spellingsSent.filter(({ status, expected }) => status !== expected)).toEqual([]);
    const routes = lines()
      .filter((line) => line.includes('"event":"request"'))
      .map((line) => (JSON.parse(line) as { path: string }).path)
      .filter((p) => ['/s/…', '/l/…', '/d/…'].includes(p));
    expect(routes.length).toBeGreaterThanOrEqual(capabilityPaths.length + spellingsSent.length);
  });

  it('names the SMTP server without its password, and e-mail recipients without the message', () => {
    const mail = lines().filter((line) => /"event":"mail /.test(line));
    expect(mail.some((line) => line.includes(`"to":"smtp://127.0.0.1:${smtp.port}"`))).toBe(true);
    expect(mail.some((line) => line.includes('"event":"mail sent"') && line.includes('friend@example.com'))).toBe(true);
    expect(mail.some((line) => line.includes('nobody@example.com'))).toBe(true);
    for (const line of mail) expect(line).not.toMatch(/mailer|Q3|report\.txt/);
  });
});
