/**
 * Guessing is throttled (docs/protocol.md §5.5, §14, §15): Login, APILogin, the share page's codes
 * (ShareOpen, what the public share page calls, and the link preview of /s/{code}) and the
 * password of encrypted items (Unlock, Decrypt). For each counter: the attempts up to its limit are
 * answered as wrong, the next ones are refused, even with the right secret, and the refusal says
 * when to retry; then the block ends, and a further run doubles it.
 *
 * All of it over HTTP against the whole service (real SQLite file). The service trusts the loopback
 * peer as its proxy (FSS_TRUSTED_PROXIES), so that each attempt can come from the client address
 * its X-Forwarded-For names: the test plays guessers spread over many addresses without any
 * traffic leaving the machine. Time moves by replacing the service's clock (services.now).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, type OperationSpec, type ServiceName } from '../../src/catalog/operations';
import { signRequest } from '../../src/operations/accounts/signing';
import { addAccount, addApiKey, element, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { resultXml, send, type HttpAnswer } from '../helpers/requests';
import { insertTestFile, sha256Of, storeTestContent } from '../helpers/stored-files';

const op = (service: ServiceName, name: string): OperationSpec => findOperation(service, name)!;
const Login = op('OAuthService', 'Login');
const APILogin = op('OAuthService', 'APILogin');
const FileShare = op('FileService', 'FileShare');
const FileEncrypt = op('FileService', 'FileEncrypt');
const FolderAdd = op('FileService', 'FolderAdd');
const FolderEncrypt = op('FileService', 'FolderEncrypt');
const Unlock = op('FileService', 'Unlock');
const Decrypt = op('FileService', 'Decrypt');
const ShareOpen = op('ShareService', 'ShareOpen');

/** Guessing many times costs one scrypt per login or item password: minutes on a busy machine. */
const SLOW = 180_000;

let app: TestApp;
/** Client addresses handed out so far: every attempt that needs a fresh address gets one nobody used. */
let addresses = 0;
/** A fresh client address (2001:db8::/32 is the documentation range: the addresses are only header text). */
const newAddress = (): string => `2001:db8::${(++addresses).toString(16)}`;

/** A built app of its own (just its index.html): the share page's link preview is rendered into it. */
let webRoot: string;

beforeAll(async () => {
  webRoot = await mkdtemp(path.join(os.tmpdir(), 'fss-web-'));
  await writeFile(path.join(webRoot, 'index.html'), '<!doctype html><html lang="en"><head><title>Files</title></head><body><div id="root"></div></body></html>\n');
  app = await startTestApp({ FSS_TRUSTED_PROXIES: '127.0.0.1', FSS_WEB_ROOT: webRoot });
});
afterAll(async () => {
  await app.close();
  await rm(webRoot, { recursive: true, force: true });
});

const services = () => app.app.services as { now: () => Date };
const realNow = () => new Date();
afterEach(() => {
  services().now = realNow;
});

/** Moves the service's clock `seconds` further ahead (it starts at the real time in each test). */
function advanceClock(seconds: number): void {
  const offset = (services().now().getTime() - Date.now()) + seconds * 1000;
  services().now = () => new Date(Date.now() + offset);
}

interface Answer {
  readonly attrs: Record<string, string>;
  readonly text: string;
  readonly xml: string;
}

/** An HTTP POST call from `address` (as the trusted proxy says): the root element (`result`, `token`) of its answer. */
async function call(operation: OperationSpec, values: Record<string, string | number>, address: string, root = 'result'): Promise<Answer> {
  const body = Object.entries(values)
    .map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`)
    .join('&');
  const answer: HttpAnswer = await send(
    app.url,
    'POST',
    `/${operation.service}.asmx/${operation.name}`,
    { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': address },
    body,
  );
  expect(answer.status).toBe(200);
  const xml = resultXml(answer, operation);
  return { ...element(xml, root)!, xml };
}

const login = (uid: string, pwd: string, address: string) => call(Login, { uid, pwd }, address, 'token');
const apiLogin = (sid: string, address: string) => call(APILogin, { sid }, address, 'token');

/** A signed call of `session` from one fixed address (item passwords are not counted per address). */
function signed(operation: OperationSpec, session: Session, params: Record<string, string | number>) {
  const values: Record<string, string | number> = { uid: session.uid, token: session.token, ...params };
  const text = Object.fromEntries(operation.params.filter((p) => p.name !== 'sign').map((p) => [p.name, String(values[p.name] ?? '')]));
  return call(operation, { ...values, sign: signRequest(session.key, operation.name, text) }, '192.0.2.1');
}

async function openSession(name: string): Promise<Session> {
  await addAccount(app, name, `${name}-password-1`);
  const token = await login(name, `${name}-password-1`, newAddress());
  expect(token.text).not.toBe('0');
  return { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key };
}

async function storedFile(accountId: number, name: string): Promise<number> {
  const bytes = Buffer.from(`the bytes of ${name}`);
  const { contentId } = await storeTestContent(app.app.services, bytes);
  return insertTestFile(app.app.services, { accountId, name, contentId, sha256: sha256Of(bytes), size: bytes.length });
}

const expectInvalid = (token: Answer) => expect({ text: token.text, ...token.attrs }).toEqual({ text: '0', reason: 'invalid' });
function expectThrottled(token: Answer, retryAfter: number) {
  expect(token.text).toBe('0');
  expect(token.attrs.reason).toBe('throttled');
  // Whole seconds until the block ends; the block began a moment (this test's own calls) ago.
  expect(Number(token.attrs.retryAfter)).toBeGreaterThan(retryAfter - 10);
  expect(Number(token.attrs.retryAfter)).toBeLessThanOrEqual(retryAfter);
}
function expectTooMany(result: Answer, retryAfter: number) {
  expect(result.attrs.code).toBe('429');
  expect(Number(result.attrs.retryAfter)).toBeGreaterThan(retryAfter - 10);
  expect(Number(result.attrs.retryAfter)).toBeLessThanOrEqual(retryAfter);
}

describe('Login', () => {
  it('5 wrong passwords for one account from one address block that pair for 60 s, the right password too; other addresses still log in', { timeout: SLOW }, async () => {
    await addAccount(app, 'pair', 'pair-password-1');
    const guesser = newAddress();
    for (let i = 0; i < 5; i++) expectInvalid(await login('pair', `guess-${i}`, guesser));
    expectThrottled(await login('pair', 'pair-password-1', guesser), 60);
    expectThrottled(await login('pair', 'guess-6', guesser), 60);
    expect((await login('pair', 'pair-password-1', newAddress())).text).not.toBe('0');
  });

  it('the block ends after its time, and the next wrong password of the same run doubles it', { timeout: SLOW }, async () => {
    await addAccount(app, 'doubling', 'doubling-password-1');
    const guesser = newAddress();
    for (let i = 0; i < 5; i++) await login('doubling', `guess-${i}`, guesser);
    expectThrottled(await login('doubling', 'doubling-password-1', guesser), 60);
    advanceClock(61);
    expectInvalid(await login('doubling', 'guess-5', guesser));
    expectThrottled(await login('doubling', 'doubling-password-1', guesser), 120);
    advanceClock(121);
    expectInvalid(await login('doubling', 'guess-6', guesser));
    expectThrottled(await login('doubling', 'doubling-password-1', guesser), 240);
    advanceClock(241);
    expect((await login('doubling', 'doubling-password-1', guesser)).text).not.toBe('0');
  });

  it('20 wrong passwords for one account spread over 20 addresses block the account from every address', { timeout: SLOW }, async () => {
    await addAccount(app, 'spread', 'spread-password-1');
    for (let i = 0; i < 20; i++) expectInvalid(await login('spread', `guess-${i}`, newAddress()));
    expectThrottled(await login('spread', 'spread-password-1', newAddress()), 60);
    // The account's id names the same account: it is blocked too.
    const id = String((await app.app.services.db.selectFrom('accounts').select('id').where('name', '=', 'spread').executeTakeFirstOrThrow()).id);
    expectThrottled(await login(id, 'spread-password-1', newAddress()), 60);
  });

  it('50 wrong passwords from one address spread over 50 accounts block that address for every account', { timeout: SLOW }, async () => {
    await addAccount(app, 'victim', 'victim-password-1');
    const guesser = newAddress();
    for (let i = 0; i < 50; i++) expectInvalid(await login(`nobody-${i}`, 'guess', guesser));
    expectThrottled(await login('victim', 'victim-password-1', guesser), 60);
    expect((await login('victim', 'victim-password-1', newAddress())).text).not.toBe('0');
  });

  it('100 right passwords from one address in 15 minutes block that address for 60 s; other addresses still log in, and APILogin from it too', { timeout: SLOW }, async () => {
    await addAccount(app, 'busy', 'busy-password-1');
    const key = await addApiKey(app, 'busy');
    const flooder = newAddress();
    for (let i = 0; i < 100; i++) expect((await login('busy', 'busy-password-1', flooder)).text).not.toBe('0');
    expectThrottled(await login('busy', 'busy-password-1', flooder), 60);
    expectThrottled(await login('someone-else', 'guess', flooder), 60);
    expect((await login('busy', 'busy-password-1', newAddress())).text).not.toBe('0');
    // APILogin costs no password hash: successful logins do not throttle it.
    expect((await apiLogin(key, flooder)).text).not.toBe('0');
    advanceClock(61);
    expect((await login('busy', 'busy-password-1', flooder)).text).not.toBe('0');
  });

  it('an unknown account is throttled exactly like a known one', { timeout: SLOW }, async () => {
    const guesser = newAddress();
    for (let i = 0; i < 5; i++) expectInvalid(await login('no-such-account', `guess-${i}`, guesser));
    expectThrottled(await login('no-such-account', 'guess-5', guesser), 60);
  });
});

describe('APILogin', () => {
  it('50 wrong API keys from one address block that address, the right key too; other addresses still log in', { timeout: SLOW }, async () => {
    await addAccount(app, 'robot', 'robot-password-1');
    const key = await addApiKey(app, 'robot');
    const guesser = newAddress();
    for (let i = 0; i < 50; i++) expectInvalid(await apiLogin(`fss_guess${i}`, guesser));
    expectThrottled(await apiLogin(key, guesser), 60);
    expect((await apiLogin(key, newAddress())).text).not.toBe('0');
  });

  it('wrong API keys and wrong passwords count together against the address', { timeout: SLOW }, async () => {
    await addAccount(app, 'mixed', 'mixed-password-1');
    const guesser = newAddress();
    for (let i = 0; i < 46; i++) expectInvalid(await apiLogin(`fss_guess${i}`, guesser));
    for (let i = 0; i < 4; i++) expectInvalid(await login(`someone-${i}`, 'guess', guesser));
    expectThrottled(await login('mixed', 'mixed-password-1', guesser), 60);
  });
});

describe('the share page: share codes and extraction codes (ShareOpen)', () => {
  let owner: Session;
  let shares = 0;
  beforeAll(async () => {
    owner = await openSession('sharer');
  });

  async function share(downpwd: string): Promise<string> {
    const fid = await storedFile(owner.uid, `shared-${++shares}.txt`);
    const shared = await signed(FileShare, owner, { fids: String(fid), downpwd, downValue: 0, description: '' });
    return element(shared.xml, 'file')!.attrs.code;
  }

  const open = (code: string, downpwd: string, address: string) => call(ShareOpen, { code, downpwd }, address);

  it('30 unknown share codes from one address block it, for a real code too, and its link previews tell nothing', async () => {
    const code = await share('');
    const scanner = newAddress();
    for (let i = 0; i < 30; i++) expect((await open(`unknownCode${String(i).padStart(11, '0')}`, '', scanner)).attrs.code).toBe('404');
    expectTooMany(await open(code, '', scanner), 60);
    const preview = await send(app.url, 'GET', `/s/${code}`, { 'X-Forwarded-For': scanner });
    expect(preview.body).toContain('Open the link to see what is shared.');
    expect((await open(code, '', newAddress())).attrs.code).toBe('0');
  });

  it('5 wrong extraction codes of one share from one address block that pair, the right code too; other addresses still open it', async () => {
    const code = await share('sesame');
    const guesser = newAddress();
    for (let i = 0; i < 5; i++) expect((await open(code, `guess-${i}`, guesser)).attrs).toMatchObject({ code: '403', reason: 'downpwd-wrong' });
    expectTooMany(await open(code, 'sesame', guesser), 60);
    expect((await open(code, 'sesame', newAddress())).attrs.code).toBe('0');
  });

  it('20 wrong extraction codes of one share spread over 20 addresses block the share from every address', async () => {
    const code = await share('sesame');
    for (let i = 0; i < 20; i++) expect((await open(code, `guess-${i}`, newAddress())).attrs.reason).toBe('downpwd-wrong');
    expectTooMany(await open(code, 'sesame', newAddress()), 60);
    // Other shares are not touched by it.
    expect((await open(await share('sesame'), 'sesame', newAddress())).attrs.code).toBe('0');
  });

  it('30 wrong extraction codes from one address spread over many shares block that address', async () => {
    const codes = await Promise.all(Array.from({ length: 8 }, () => share('sesame')));
    const guesser = newAddress();
    for (let i = 0; i < 30; i++) expect((await open(codes[i % 8], `guess-${i}`, guesser)).attrs.reason).toBe('downpwd-wrong');
    expectTooMany(await open(await share(''), '', guesser), 60);
  });

  it('an empty extraction code is a question, not a guess: it is never counted', async () => {
    const code = await share('sesame');
    const visitor = newAddress();
    for (let i = 0; i < 10; i++) expect((await open(code, '', visitor)).attrs.reason).toBe('downpwd-required');
    expect((await open(code, 'sesame', visitor)).attrs.code).toBe('0');
  });

  it('the block ends after its time, and the next wrong code of the same run doubles it', async () => {
    const code = await share('sesame');
    const guesser = newAddress();
    for (let i = 0; i < 5; i++) await open(code, `guess-${i}`, guesser);
    expectTooMany(await open(code, 'sesame', guesser), 60);
    advanceClock(61);
    expect((await open(code, 'guess-5', guesser)).attrs.reason).toBe('downpwd-wrong');
    expectTooMany(await open(code, 'sesame', guesser), 120);
    advanceClock(121);
    expect((await open(code, 'sesame', guesser)).attrs.code).toBe('0');
  });
});

describe('passwords of encrypted items (Unlock, Decrypt)', () => {
  it('5 wrong passwords of an encrypted folder block it for 60 s, the right password too; other items still unlock', { timeout: SLOW }, async () => {
    const owner = await openSession('folders');
    const folder = Number(element((await signed(FolderAdd, owner, { dirid: 0, name: 'vault' })).xml, 'folder')!.attrs.id);
    expect((await signed(FolderEncrypt, owner, { dirid: folder, password: 'open sesame', password_tip: 'cave' })).attrs.code).toBe('0');
    const other = await storedFile(owner.uid, 'other.txt');
    expect((await signed(FileEncrypt, owner, { fid: other, password: 'other secret', password_tip: '' })).attrs.code).toBe('0');

    for (let i = 0; i < 5; i++) expect((await signed(Unlock, owner, { dirid: folder, fid: 0, password: `guess ${i}` })).attrs.code).toBe('403');
    expectTooMany(await signed(Unlock, owner, { dirid: folder, fid: 0, password: 'open sesame' }), 60);
    // Decrypt checks the same password: it is refused by the same block.
    expectTooMany(await signed(Decrypt, owner, { dirid: folder, fid: 0, password: 'open sesame' }), 60);
    expect((await signed(Unlock, owner, { dirid: 0, fid: other, password: 'other secret' })).attrs.code).toBe('0');

    advanceClock(61);
    expect((await signed(Unlock, owner, { dirid: folder, fid: 0, password: 'guess 5' })).attrs.code).toBe('403');
    expectTooMany(await signed(Unlock, owner, { dirid: folder, fid: 0, password: 'open sesame' }), 120);
    advanceClock(121);
    expect((await signed(Unlock, owner, { dirid: folder, fid: 0, password: 'open sesame' })).attrs.code).toBe('0');
  });

  it('20 wrong passwords spread over the items of one account block every item of it', { timeout: SLOW }, async () => {
    const owner = await openSession('many-items');
    const files: number[] = [];
    for (let i = 0; i < 6; i++) {
      const fid = await storedFile(owner.uid, `secret-${i}.txt`);
      expect((await signed(FileEncrypt, owner, { fid, password: `password ${i}`, password_tip: '' })).attrs.code).toBe('0');
      files.push(fid);
    }
    for (let i = 0; i < 20; i++) expect((await signed(Unlock, owner, { dirid: 0, fid: files[i % 5], password: `guess ${i}` })).attrs.code).toBe('403');
    expectTooMany(await signed(Unlock, owner, { dirid: 0, fid: files[5], password: 'password 5' }), 60);
  });
});
