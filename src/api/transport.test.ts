import { describe, expect, it, vi } from 'vitest';
import { createApi } from './client';
import { ApiError } from './errors';
import { FileSearch, FileShare, GetFiles, Login, Logout, ShareImageUpload } from './generated/operations';
import { canonicalString, computeSign, createTransport } from './transport';
import { createSessionStore, memoryStorage, type Session } from './session';

const KEY = 'key-123';
const testSession: Session = { uid: 1001, token: 'tok-abc', key: KEY, expires: '2026-11-22T10:00:00Z', account: 'alice' };

function loggedIn() {
  const store = createSessionStore({ session: memoryStorage(), local: memoryStorage() });
  store.set(testSession);
  return store;
}

interface Recorded {
  url: string;
  init: RequestInit;
}

/** A fetch that records each request and answers with the given status and body. */
function fakeFetch(status: number, body: string, contentType = 'text/xml; charset=utf-8') {
  const calls: Recorded[] = [];
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(url), init: init ?? {} });
    return new Response(body, { status, headers: { 'Content-Type': contentType } });
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, calls };
}

const xmlDoc = (element: string) => `<?xml version="1.0" encoding="utf-8"?>\n${element}`;
const OK_EMPTY = xmlDoc('<result code="0" msg="" />');

describe('sign (DECISIONS.md §5 test vectors)', () => {
  it('FileSearch: canonical string and sign', async () => {
    const values = { uid: '1001', token: 'tok-abc', order: 'name', desc: '0', keyword: '报告 & 总结' };
    expect(canonicalString('FileSearch', values)).toBe(
      'FileSearch\ndesc=0&keyword=%E6%8A%A5%E5%91%8A%20%26%20%E6%80%BB%E7%BB%93&order=name&token=tok-abc&uid=1001',
    );
    expect(await computeSign(KEY, 'FileSearch', values)).toBe('1ab16a4861ea7c3aa7041068946e973ea7ea4d174dbb1a6503dfcd5c9783a9ef');
  });

  it('FileShare: names sorted by character code (downValue before downpwd), sign excluded', async () => {
    const values = {
      uid: '1001',
      token: 'tok-abc',
      fids: '7,8',
      downpwd: 'ab12',
      downValue: '5',
      description: "it's (ok)!",
      sign: 'ignored',
    };
    expect(canonicalString('FileShare', values)).toBe(
      "FileShare\ndescription=it's%20(ok)!&downValue=5&downpwd=ab12&fids=7%2C8&token=tok-abc&uid=1001",
    );
    expect(await computeSign(KEY, 'FileShare', values)).toBe('a72065332e92e82e0aaf7c644c2cce7611c255438534c4b801babf07ccd6fbec');
  });
});

describe('the transport', () => {
  it('POSTs a signed call form-encoded to /<Service>.asmx/<Operation> with uid, token and sign from the session', async () => {
    const { fetch, calls } = fakeFetch(200, xmlDoc('<result code="0" count="0">\n</result>'));
    const transport = createTransport({ fetch, session: loggedIn() });
    await transport.call(FileSearch, { order: 'name', desc: '0', keyword: '报告 & 总结' });

    expect(calls).toHaveLength(1);
    const [{ url, init }] = calls;
    expect(url).toBe('/UserService.asmx/FileSearch');
    expect(init.method).toBe('POST');
    expect(new Headers(init.headers).get('Content-Type')).toBe('application/x-www-form-urlencoded');
    expect(init.body).toBe(
      'uid=1001&token=tok-abc&order=name&desc=0&keyword=%E6%8A%A5%E5%91%8A%20%26%20%E6%80%BB%E7%BB%93' +
        '&sign=1ab16a4861ea7c3aa7041068946e973ea7ea4d174dbb1a6503dfcd5c9783a9ef',
    );
    const form = new URLSearchParams(String(init.body));
    expect([...form.keys()]).toEqual(FileSearch.params.map((param) => param.name));
  });

  it('signs numbers as the text sent (FileShare vector through the typed client)', async () => {
    const { fetch, calls } = fakeFetch(200, xmlDoc('<result code="0" msg="" />'));
    const api = createApi(createTransport({ fetch, session: loggedIn() }));
    await api.fileShare({ fids: '7,8', downpwd: 'ab12', downValue: 5, description: "it's (ok)!" });
    const form = new URLSearchParams(String(calls[0].init.body));
    expect(calls[0].url).toBe('/FileService.asmx/FileShare');
    expect(form.get('downValue')).toBe('5');
    expect(form.get('sign')).toBe('a72065332e92e82e0aaf7c644c2cce7611c255438534c4b801babf07ccd6fbec');
    expect([...form.keys()]).toEqual(FileShare.params.map((param) => param.name));
  });

  it('sends Login anonymously with the caller uid and pwd, and returns the typed token', async () => {
    const { fetch, calls } = fakeFetch(
      200,
      xmlDoc('<token uid="1001" key="K" expires="2026-11-22T10:00:00Z">TOKEN</token>'),
    );
    const api = createApi(createTransport({ fetch, session: createSessionStore({ session: memoryStorage(), local: memoryStorage() }) }));
    const token = await api.login({ uid: 'alice', pwd: 'p&ss word' });
    expect(calls[0].url).toBe('/OAuthService.asmx/Login');
    expect(calls[0].init.body).toBe('uid=alice&pwd=p%26ss%20word');
    expect(token).toEqual({ token: 'TOKEN', uid: 1001, key: 'K', expires: '2026-11-22T10:00:00Z' });
  });

  it('sends ShareImageUpload with uid and token but no sign, the bytes as one base64 value', async () => {
    const { fetch, calls } = fakeFetch(200, xmlDoc('<string xmlns="http://tempuri.org/">https://x/img/1.png</string>'));
    const api = createApi(createTransport({ fetch, session: loggedIn() }));
    const url = await api.shareImageUpload({ fid: 9, ImagefileName: 'a.png', byteFileStream: new Uint8Array([137, 80, 78, 71]) });
    expect(url).toBe('https://x/img/1.png');
    expect(calls[0].init.body).toBe('uid=1001&token=tok-abc&fid=9&ImagefileName=a.png&byteFileStream=iVBORw%3D%3D');
  });

  it('turns <result code≠0> into an ApiError named from the ResultCode table, with the extra attributes as details', async () => {
    const { fetch } = fakeFetch(200, xmlDoc('<result code="423" msg="locked" id="7" tip="birthday" />'));
    const transport = createTransport({ fetch, session: loggedIn() });
    const error = await transport.call(GetFiles, { dir: '7', order: 'name', desc: '0' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'Locked', message: 'locked', status: 423, details: { id: 7, tip: 'birthday' } });
  });

  it("exposes the refusal's reason when it is one of the service's reasons, and none for an unknown one", async () => {
    const refusal = async (element: string) =>
      (await createTransport({ fetch: fakeFetch(200, xmlDoc(element)).fetch, session: loggedIn() })
        .call(GetFiles, { dir: '7', order: 'name', desc: '0' })
        .catch((e: unknown) => e)) as ApiError;
    expect((await refusal('<result code="409" msg="taken" reason="name-taken" />')).reason).toBe('name-taken');
    expect((await refusal('<result code="409" msg="taken" reason="from-a-newer-service" />')).reason).toBeUndefined();
  });

  it('sends the app language as Accept-Language when given one', async () => {
    const { fetch, calls } = fakeFetch(200, OK_EMPTY);
    await createTransport({ fetch, session: loggedIn(), language: () => 'zh-CN' }).call(Logout, {});
    expect(new Headers(calls[0].init.headers).get('Accept-Language')).toBe('zh-CN');
  });

  it('turns <token>0</token> into LoginRefused, with the reason and retryAfter when throttled', async () => {
    const refused = await createTransport({ fetch: fakeFetch(200, xmlDoc('<token>0</token>')).fetch })
      .call(Login, { uid: 'alice', pwd: 'wrong' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'LoginRefused', details: {} });

    const throttled = await createTransport({
      fetch: fakeFetch(200, xmlDoc('<token reason="throttled" retryAfter="90">0</token>')).fetch,
    })
      .call(Login, { uid: 'alice', pwd: 'wrong' })
      .catch((e: unknown) => e);
    expect(throttled).toMatchObject({ code: 'LoginRefused', details: { reason: 'throttled', retryAfter: 90 } });
    expect((throttled as ApiError).retryAfter).toBe(90);
  });

  it('turns a non-200 plain-text answer into a Protocol error carrying the server text', async () => {
    const { fetch } = fakeFetch(500, 'Missing parameter: dir.\n', 'text/plain; charset=utf-8');
    const error = await createTransport({ fetch, session: loggedIn() })
      .call(GetFiles, { dir: '0', order: 'name', desc: '0' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'Protocol', message: 'Missing parameter: dir.', status: 500 });
  });

  it('turns a failed fetch into a Network error', async () => {
    const fetch = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof globalThis.fetch;
    const error = await createTransport({ fetch }).call(Login, { uid: 'a', pwd: 'b' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'Network' });
  });

  it('ends the session and tells onUnauthorized listeners when the service refuses the token (401)', async () => {
    const store = loggedIn();
    const listener = vi.fn();
    store.onUnauthorized(listener);
    const { fetch } = fakeFetch(200, xmlDoc('<result code="401" msg="token missing, unknown or expired" />'));
    const error = await createTransport({ fetch, session: store }).call(Logout, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'Unauthorized' });
    expect(store.get()).toBeNull();
    expect(store.lastEnd()).toBe('expired');
    expect(listener).toHaveBeenCalledOnce();
  });

  it('refuses a signed call without a session, without a request', async () => {
    const { fetch, calls } = fakeFetch(200, OK_EMPTY);
    const store = createSessionStore({ session: memoryStorage(), local: memoryStorage() });
    const error = await createTransport({ fetch, session: store }).call(Logout, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'Unauthorized' });
    expect(calls).toHaveLength(0);
  });

  it('turns a ShareImageUpload "ERROR <code> <message>" string into an ApiError', async () => {
    const { fetch } = fakeFetch(200, xmlDoc('<string xmlns="http://tempuri.org/">ERROR 413 image over 5 MiB</string>'));
    const error = await createTransport({ fetch, session: loggedIn() })
      .call(ShareImageUpload, { fid: 1, ImagefileName: 'a.png', byteFileStream: new Uint8Array([1]) })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TooLarge', message: 'image over 5 MiB', status: 413 });
  });
});
