import { describe, expect, it, vi } from 'vitest';
import { createApi } from './client';
import { ApiError } from './errors';
import { GetFiles } from './generated/operations';
import type { Listing } from './results';
import { createSessionStore, memoryStorage, type Session } from './session';
import { createTransport } from './transport';

const testSession: Session = { uid: 1001, token: 'tok-abc', key: 'key-123', expires: '2026-11-22T10:00:00Z', account: 'alice' };

function loggedIn() {
  const store = createSessionStore({ session: memoryStorage(), local: memoryStorage() });
  store.set(testSession);
  return store;
}

/** A fetch whose answer body arrives in the given pieces, one per read, then ends or breaks. */
function streamingFetch(pieces: readonly string[], ending: 'close' | 'break' = 'close') {
  const utf8 = new TextEncoder();
  return (async () => {
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (next < pieces.length) controller.enqueue(utf8.encode(pieces[next++]));
        else if (ending === 'close') controller.close();
        else controller.error(new TypeError('network error'));
      },
    });
    return new Response(body, { status: 200, headers: { 'Content-Type': 'text/xml; charset=utf-8' } });
  }) as unknown as typeof globalThis.fetch;
}

const file = (id: number) =>
  `<file id="${id}" dir="7" name="f${id}.txt" ext="txt" size="1" hash="" time="2026-11-21T08:01:12Z" shared="0" linked="0" encrypted="0" />`;

const HEAD = '<?xml version="1.0" encoding="utf-8"?>\n<result code="0" msg="" count="3">\n  ';

describe('streamed listings (api/listing-stream.ts)', () => {
  it('resolves to the whole typed listing, whatever the pieces the body arrives in', async () => {
    const text = `${HEAD}${file(1)}\n  ${file(2)}\n  ${file(3)}\n</result>`;
    const pieces = text.match(/[\s\S]{1,7}/g) ?? [];
    const api = createApi(createTransport({ fetch: streamingFetch(pieces), session: loggedIn() }));
    const listing = await api.getFiles({ dir: '7', order: 'name', desc: '0' });
    expect(listing.count).toBe(3);
    expect(listing.files.map((item) => item.name)).toEqual(['f1.txt', 'f2.txt', 'f3.txt']);
    expect(listing.partial).toBeUndefined();
  });

  it('hands out the first items before the answer has ended, marked partial with the announced count', async () => {
    const progress: Listing[] = [];
    const api = createApi(createTransport({ fetch: streamingFetch([HEAD + file(1), `\n  ${file(2)}`, `\n  ${file(3)}\n</result>`]), session: loggedIn() }));
    const listing = await api.getFiles({ dir: '7', order: 'name', desc: '0' }, { onProgress: (partial) => progress.push(partial) });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toMatchObject({ partial: true, count: 3 });
    expect(progress[0].files.map((item) => item.id)).toEqual([1]);
    expect(listing.files).toHaveLength(3);
  });

  it('turns a refusal into an ApiError with its details, and a 401 ends the session', async () => {
    const locked = createTransport({ fetch: streamingFetch(['<?xml version="1.0"?>\n<result code="423" msg="locked" id="7" tip="birthday" />']), session: loggedIn() });
    await expect(locked.listing(GetFiles, { dir: '7', order: 'name', desc: '0' })).rejects.toMatchObject({
      code: 'Locked',
      message: 'locked',
      status: 423,
      details: { id: 7, tip: 'birthday' },
    });
    const sessions = loggedIn();
    const unauthorized = vi.spyOn(sessions, 'unauthorized');
    const expired = createTransport({ fetch: streamingFetch(['<result code="401" msg="token expired" />']), session: sessions });
    await expect(expired.listing(GetFiles, { dir: '7', order: 'name', desc: '0' })).rejects.toMatchObject({ code: 'Unauthorized' });
    expect(unauthorized).toHaveBeenCalledWith('tok-abc');
  });

  it('says the connection broke when the answer stops half way, and that it is not understood when it ends early', async () => {
    const broken = createTransport({ fetch: streamingFetch([HEAD + file(1)], 'break'), session: loggedIn() });
    await expect(broken.listing(GetFiles, { dir: '7', order: 'name', desc: '0' })).rejects.toMatchObject({ code: 'Network' });
    const cut = createTransport({ fetch: streamingFetch([HEAD + file(1)]), session: loggedIn() });
    const error = await cut.listing(GetFiles, { dir: '7', order: 'name', desc: '0' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'Protocol' });
  });

  it('stops reading when the call is aborted', async () => {
    const controller = new AbortController();
    const transport = createTransport({ fetch: streamingFetch([HEAD + file(1), `\n  ${file(2)}`, `\n  ${file(3)}\n</result>`]), session: loggedIn() });
    const reading = transport.listing(GetFiles, { dir: '7', order: 'name', desc: '0' }, { signal: controller.signal, onProgress: () => controller.abort() });
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
  });
});
