/**
 * Login, APILogin, Logout and the checks every FileService/UserService call passes before it runs,
 * against the whole service (real SQLite file), in each of the four call forms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/operations/accounts/signing';
import { addAccount, addApiKey, callSigned, element, startTestApp, type Session, type TestApp, logIn } from '../helpers/app-server';
import { callInForm, FORMS, ops, resultXml, type Form } from '../helpers/requests';

const { Login, APILogin, Logout, GetFiles, ShareImageUpload } = ops;

let app: TestApp;
let aliceId: number;
let bobId: number;

beforeAll(async () => {
  app = await startTestApp();
  aliceId = await addAccount(app, 'alice', 'alice-password-1');
  bobId = await addAccount(app, 'bob', 'bob-password-1');
});
afterAll(() => app.close());

const login = (form: Form, uid: string, pwd: string): Promise<Session> => logIn(app, form, uid, pwd);

const listing = { dir: '0', order: 'name', desc: '0' };

describe.each(FORMS)('over %s', (form) => {
  it('Login by account name returns a token, its uid, signing key and expiry', async () => {
    const answer = await callInForm(app.url, form, Login, { uid: 'alice', pwd: 'alice-password-1' });
    expect(answer.status).toBe(200);
    const token = element(resultXml(answer, Login), 'token')!;
    expect(token.attrs.uid).toBe(String(aliceId));
    expect(token.attrs.key).toMatch(/^\S{32,}$/);
    expect(Date.parse(token.attrs.expires)).toBeGreaterThan(Date.now());
    expect(token.attrs.expires).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(token.text.length).toBeGreaterThanOrEqual(22);
    if (form.startsWith('soap')) expect(resultXml(answer, Login)).toMatch(/^<token [^>]*xmlns="">/);
  });

  it('Login by numeric uid works too', async () => {
    const session = await login(form, String(aliceId), 'alice-password-1');
    expect(session.uid).toBe(aliceId);
  });

  it('a wrong password is answered with the token 0', async () => {
    const answer = await callInForm(app.url, form, Login, { uid: 'bob', pwd: 'not-his-password' });
    expect(element(resultXml(answer, Login), 'token')?.text).toBe('0');
  });

  it('an unknown account is answered with the token 0', async () => {
    const answer = await callInForm(app.url, form, Login, { uid: 'nobody', pwd: 'whatever-password' });
    expect(element(resultXml(answer, Login), 'token')?.text).toBe('0');
  });

  it('APILogin with an API key returns the same token document', async () => {
    const key = await addApiKey(app, 'alice');
    const answer = await callInForm(app.url, form, APILogin, { sid: key });
    const token = element(resultXml(answer, APILogin), 'token')!;
    expect(token.attrs.uid).toBe(String(aliceId));
    expect(token.text).not.toBe('0');
  });

  it('APILogin with an unknown key is answered with the token 0', async () => {
    const answer = await callInForm(app.url, form, APILogin, { sid: 'fss_not-a-key' });
    expect(element(resultXml(answer, APILogin), 'token')?.text).toBe('0');
  });

  it('a signed call with a live token and the right sign reaches its operation: GetFiles lists the root', async () => {
    const session = await login(form, 'alice', 'alice-password-1');
    const answer = await callSigned(app, form, GetFiles, session, listing);
    expect(element(resultXml(answer, GetFiles), 'result')?.attrs).toMatchObject({ code: '0', count: '0' });
  });

  it('a wrong sign is refused with 403', async () => {
    const session = await login(form, 'alice', 'alice-password-1');
    const answer = await callInForm(app.url, form, GetFiles, { uid: session.uid, token: session.token, ...listing, sign: 'ab'.repeat(32) });
    expect(element(resultXml(answer, GetFiles), 'result')?.attrs.code).toBe('403');
  });

  it('a missing sign is refused with 403', async () => {
    const session = await login(form, 'alice', 'alice-password-1');
    const answer = await callInForm(app.url, form, GetFiles, { uid: session.uid, token: session.token, ...listing, sign: '' });
    expect(element(resultXml(answer, GetFiles), 'result')?.attrs.code).toBe('403');
  });

  it('a valid sign with one parameter altered is refused with 403', async () => {
    const session = await login(form, 'alice', 'alice-password-1');
    const text = { uid: String(session.uid), token: session.token, ...listing };
    const sign = signRequest(session.key, 'GetFiles', text);
    const answer = await callInForm(app.url, form, GetFiles, { ...text, uid: session.uid, dir: '12', sign });
    expect(element(resultXml(answer, GetFiles), 'result')?.attrs.code).toBe('403');
  });

  it("another account's uid with this token is refused with 401", async () => {
    const session = await login(form, 'alice', 'alice-password-1');
    const answer = await callSigned(app, form, GetFiles, { ...session, uid: bobId }, listing);
    expect(element(resultXml(answer, GetFiles), 'result')?.attrs.code).toBe('401');
  });

  it('an unknown token is refused with 401', async () => {
    const session = await login(form, 'alice', 'alice-password-1');
    const answer = await callSigned(app, form, GetFiles, { ...session, token: 'x'.repeat(43) }, listing);
    expect(element(resultXml(answer, GetFiles), 'result')?.attrs.code).toBe('401');
  });

  it('Logout revokes the token: the next call is refused with 401', async () => {
    const session = await login(form, 'alice', 'alice-password-1');
    const out = await callSigned(app, form, Logout, session, {});
    expect(element(resultXml(out, Logout), 'result')?.attrs.code).toBe('0');
    const after = await callSigned(app, form, GetFiles, session, listing);
    expect(element(resultXml(after, GetFiles), 'result')?.attrs.code).toBe('401');
  });

  it('ShareImageUpload takes the token alone and answers a string: ERROR 401 for a bad token', async () => {
    const answer = await callInForm(app.url, form, ShareImageUpload, {
      uid: aliceId,
      token: 'nope',
      fid: 1,
      ImagefileName: 'a.png',
      byteFileStream: Uint8Array.from([137, 80, 78, 71]),
    });
    expect(resultXml(answer, ShareImageUpload)).toMatch(/ERROR 401 /);
  });
});

describe('token lifetime', () => {
  it('a token idle for longer than the idle time is refused with 401', async () => {
    const session = await login('post', 'alice', 'alice-password-1');
    const services = app.app.services as { now: () => Date };
    const realNow = services.now;
    services.now = () => new Date(Date.now() + (app.config.tokenIdleSeconds + 60) * 1000);
    try {
      const answer = await callSigned(app, 'post', GetFiles, session, listing);
      expect(element(resultXml(answer, GetFiles), 'result')?.attrs.code).toBe('401');
    } finally {
      services.now = realNow;
    }
  });
});

describe('throttling', () => {
  it('repeated wrong passwords block the account from this address, even with the right password, and say when to retry', async () => {
    await addAccount(app, 'carol', 'carol-password-1');
    for (let i = 0; i < 5; i++) await callInForm(app.url, 'post', Login, { uid: 'carol', pwd: `wrong-${i}` });
    const answer = await callInForm(app.url, 'post', Login, { uid: 'carol', pwd: 'carol-password-1' });
    const token = element(resultXml(answer, Login), 'token')!;
    expect(token.text).toBe('0');
    expect(token.attrs.reason).toBe('throttled');
    expect(Number(token.attrs.retryAfter)).toBeGreaterThan(0);
  });
});

describe('logs', () => {
  it('never contain a password, token, key or sign', async () => {
    const session = await login('get', 'alice', 'alice-password-1');
    await callSigned(app, 'get', GetFiles, session, listing);
    const log = app.logLines.join('\n');
    for (const secret of ['alice-password-1', session.token, session.key]) expect(log).not.toContain(secret);
    expect(log).not.toMatch(/sign=|token=|pwd=/);
  });
});
