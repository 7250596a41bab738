import { describe, expect, it, vi } from 'vitest';
import { createApi } from './client';
import { ApiError } from './errors';
import { ShareDownload, ShareList, ShareOpen } from './generated/operations';
import { createSessionStore, memoryStorage } from './session';
import { visitorShareKeys, shareProblem } from './share-service';
import { createTransport } from './transport';

/** A tab where someone is logged in: the share page must not send that session along. */
function loggedIn() {
  const store = createSessionStore({ session: memoryStorage(), local: memoryStorage() });
  store.set({ uid: 1001, token: 'tok-abc', key: 'key-123', expires: '2026-11-22T10:00:00Z', account: 'alice' });
  return store;
}

function recordingFetch(body: string) {
  const calls: { url: string; body: string }[] = [];
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(url), body: String(init?.body ?? '') });
    return new Response(body, { status: 200, headers: { 'Content-Type': 'text/xml; charset=utf-8' } });
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, calls };
}

const xml = (element: string) => `<?xml version="1.0" encoding="utf-8"?>\n${element}`;

describe('the ShareService calls are anonymous', () => {
  it('the catalog marks ShareOpen, ShareList and ShareDownload anonymous', () => {
    expect([ShareOpen, ShareList, ShareDownload].map((op) => [op.service, op.auth])).toEqual([
      ['ShareService', 'none'],
      ['ShareService', 'none'],
      ['ShareService', 'none'],
    ]);
  });

  it('sends only the share parameters, never the session’s uid, token or sign, even when someone is logged in', async () => {
    const open = recordingFetch(xml('<result code="0" msg=""><file id="7" dir="0" name="a.txt" ext="txt" size="3" code="c" downpwd="" /></result>'));
    await createApi(createTransport({ fetch: open.fetch, session: loggedIn() })).shareOpen({ code: 'abc', downpwd: 'x y' });
    expect(open.calls).toEqual([{ url: '/ShareService.asmx/ShareOpen', body: 'code=abc&downpwd=x%20y' }]);

    const list = recordingFetch(xml('<result code="0" msg="" count="0"></result>'));
    await createApi(createTransport({ fetch: list.fetch, session: loggedIn() })).shareList({ code: 'abc', downpwd: '', dir: '12', order: 'size', desc: '1' });
    expect(list.calls).toEqual([{ url: '/ShareService.asmx/ShareList', body: 'code=abc&downpwd=&dir=12&order=size&desc=1' }]);

    const download = recordingFetch(xml('<result code="0" msg="" url="http://h/d/t/a.txt" expires="2026-01-01T00:00:00Z" />'));
    const answer = await createApi(createTransport({ fetch: download.fetch, session: loggedIn() })).shareDownload({ code: 'abc', downpwd: 'pw12', fid: 7 });
    expect(download.calls).toEqual([{ url: '/ShareService.asmx/ShareDownload', body: 'code=abc&downpwd=pw12&fid=7' }]);
    expect(answer.url).toBe('http://h/d/t/a.txt');
  });

  it('a refusal of a ShareService call does not end the tab’s session', async () => {
    const store = loggedIn();
    const { fetch } = recordingFetch(xml('<result code="401" msg="no" />'));
    await expect(createApi(createTransport({ fetch, session: store })).shareOpen({ code: 'abc', downpwd: '' })).rejects.toBeInstanceOf(ApiError);
    expect(store.get()?.token).toBe('tok-abc');
  });
});

describe('shareProblem', () => {
  const refusal = (status: number, code: ConstructorParameters<typeof ApiError>[0], details: Record<string, string | number> = {}) =>
    new ApiError(code, 'message text is never read', details, status);

  it('tells the share page’s states apart by code and reason', () => {
    expect(shareProblem(refusal(403, 'Forbidden', { reason: 'downpwd-required' }))).toEqual({ kind: 'code-required' });
    expect(shareProblem(refusal(403, 'Forbidden', { reason: 'downpwd-wrong' }))).toEqual({ kind: 'code-wrong' });
    expect(shareProblem(refusal(403, 'Forbidden', { reason: 'download-limit' }))).toEqual({ kind: 'download-limit' });
    expect(shareProblem(refusal(429, 'TooManyAttempts', { retryAfter: 120 }))).toEqual({ kind: 'throttled', retryAfter: 120 });
    expect(shareProblem(refusal(429, 'TooManyAttempts'))).toEqual({ kind: 'throttled', retryAfter: 60 });
    expect(shareProblem(refusal(404, 'NotFound'))).toEqual({ kind: 'not-found' });
    expect(shareProblem(refusal(423, 'Locked', { id: 3 }))).toEqual({ kind: 'locked' });
    expect(shareProblem(new ApiError('Network', 'offline'))).toEqual({ kind: 'network' });
  });

  it('anything else is "other", with the error for describeError', () => {
    const forbidden = refusal(403, 'Forbidden', { reason: 'something-new' });
    expect(shareProblem(forbidden)).toEqual({ kind: 'other', error: forbidden });
    const failure = new Error('boom');
    expect(shareProblem(failure)).toEqual({ kind: 'other', error: failure });
  });
});

describe('visitorShareKeys', () => {
  it('every ShareOpen and ShareList of a share lies under the share, so one invalidation reaches them', () => {
    const sort = { order: 'name', desc: false } as const;
    const open = visitorShareKeys.open('abc', 'pw');
    const list = visitorShareKeys.list('abc', 'pw', 12, sort);
    expect(open.slice(0, visitorShareKeys.opens('abc').length)).toEqual(visitorShareKeys.opens('abc'));
    expect(list.slice(0, visitorShareKeys.lists('abc').length)).toEqual(visitorShareKeys.lists('abc'));
    for (const key of [open, list]) expect(key.slice(0, 2)).toEqual(visitorShareKeys.share('abc'));
    expect(visitorShareKeys.open('abd', 'pw').slice(0, 2)).not.toEqual(visitorShareKeys.share('abc'));
  });
});
