/**
 * Calls to the real service from the tests' Node side, to set up what a test needs quickly (a
 * 10,000-item folder, files to search for) without clicking: the web app's own typed client
 * (src/api) with a session of its own, and tus uploads.
 */
import { createHash } from 'node:crypto';
import type { Page } from '@playwright/test';
import { createApi, type Api } from '../src/api/client';
import { extensionOf } from '../src/api/generated/name-rule';
import { operations, type OperationName } from '../src/api/generated/operations';
import { createSessionStore, memoryStorage, type Session } from '../src/api/session';
import { createTransport } from '../src/api/transport';

export interface ApiSession extends Session {
  readonly base: string;
  /** The typed client, calling as this session. */
  readonly api: Api;
}

export async function apiLogin(base: string, account: string, password: string): Promise<ApiSession> {
  const sessions = createSessionStore({ session: memoryStorage(), local: memoryStorage() });
  const api = createApi(createTransport({ baseUrl: base, session: sessions }));
  const issued = await api.login({ uid: account, pwd: password });
  const session: Session = { uid: issued.uid, token: issued.token, key: issued.key, expires: issued.expires, account };
  sessions.set(session);
  return { ...session, base, api };
}

type Operations = typeof operations;
type ResultOf<N extends OperationName> = Awaited<ReturnType<Api[Operations[N]['method']]>>;

/**
 * An operation through the typed client, its parameters given loosely (numbers or their text) and
 * typed here by the catalog; answers the typed result, or throws the service's refusal.
 */
export async function call<N extends OperationName>(session: ApiSession, operation: N, params: Readonly<Record<string, string | number>> = {}): Promise<ResultOf<N>> {
  const descriptor = operations[operation];
  const typed: Record<string, string | number> = {};
  for (const { name, type } of descriptor.params) {
    if (name in params) typed[name] = type === 'long' || type === 'int' ? Number(params[name]) : String(params[name]);
  }
  const method = session.api[descriptor.method] as (params: object) => Promise<ResultOf<N>>;
  return method(typed);
}

/** FolderAdd; answers the new folder's id. */
export async function addFolder(session: ApiSession, dir: number, name: string): Promise<number> {
  return (await call(session, 'FolderAdd', { dirid: dir, name })).id;
}

/** Many folders at once, a few calls in flight at a time; stops early when `signal` aborts. */
export async function addFolders(
  session: ApiSession,
  dir: number,
  names: readonly string[],
  { concurrency = 12, signal }: { concurrency?: number; signal?: AbortSignal } = {},
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < names.length && !signal?.aborted) {
      const name = names[next++];
      await addFolder(session, dir, name);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** A file with the given content: tus upload (creation with upload), then FileAdd. Answers its id. */
export async function addFile(session: ApiSession, dir: number, name: string, content: string | Buffer): Promise<number> {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const hash = createHash('sha256').update(bytes).digest('hex');
  const created = await fetch(`${session.base}/upload/`, {
    method: 'POST',
    headers: {
      'Tus-Resumable': '1.0.0',
      Authorization: `Bearer ${session.token}`,
      'Upload-Length': String(bytes.length),
      'Upload-Metadata': `filename ${Buffer.from(name).toString('base64')}`,
      'Content-Type': 'application/offset+octet-stream',
    },
    body: new Uint8Array(bytes),
  });
  if (created.status !== 201) throw new Error(`tus POST answered ${created.status}: ${await created.text()}`);
  const offset = Number(created.headers.get('upload-offset') ?? '0');
  if (offset < bytes.length) {
    const location = created.headers.get('location');
    if (!location) throw new Error('tus POST answered no Location');
    const patched = await fetch(new URL(location, session.base), {
      method: 'PATCH',
      headers: {
        'Tus-Resumable': '1.0.0',
        Authorization: `Bearer ${session.token}`,
        'Upload-Offset': String(offset),
        'Content-Type': 'application/offset+octet-stream',
      },
      body: new Uint8Array(bytes.subarray(offset)),
    });
    if (patched.status !== 204) throw new Error(`tus PATCH answered ${patched.status}: ${await patched.text()}`);
  }
  const file = await session.api.fileAdd({ name, ext: extensionOf(name), size: bytes.length, dirid: dir, hash });
  return file.id;
}

/** Opens the app already logged in as `session` (the session store's sessionStorage entry). */
export async function useSessionIn(page: Page, session: ApiSession): Promise<void> {
  const stored = JSON.stringify({ uid: session.uid, token: session.token, key: session.key, expires: session.expires, account: session.account });
  await page.addInitScript((value) => {
    if (!sessionStorage.getItem('fss.session')) sessionStorage.setItem('fss.session', value);
  }, stored);
}

export interface ShareSettings {
  readonly downpwd?: string;
  readonly downValue?: number;
  readonly description?: string;
}

/** FileShare or FolderShare of one item; answers the share's code and page URL. */
export async function shareItem(session: ApiSession, item: { readonly file: number } | { readonly folder: number }, settings: ShareSettings = {}) {
  const share = { downpwd: settings.downpwd ?? '', downValue: settings.downValue ?? 0, description: settings.description ?? '' };
  const shared = 'file' in item ? await call(session, 'FileShare', { fids: item.file, ...share }) : await call(session, 'FolderShare', { dirids: item.folder, ...share });
  const { code, url } = [...shared.folders, ...shared.files][0] ?? {};
  if (!code || !url) throw new Error(`no share in ${JSON.stringify(shared)}`);
  return { code, url };
}

/** Unshare: the share's links stop at once. */
export async function unshareItem(session: ApiSession, item: { readonly file: number } | { readonly folder: number }): Promise<void> {
  await call(session, 'Unshare', 'file' in item ? { dirids: '', fids: item.file } : { dirids: item.folder, fids: '' });
}

/** ShareImageUpload (token, no sign): the cover image of a file's share (shared first); answers its URL. */
export async function uploadShareImage(session: ApiSession, fid: number, image: Buffer): Promise<string> {
  const text = await session.api.shareImageUpload({ fid, ImagefileName: 'cover.png', byteFileStream: new Uint8Array(image) });
  if (text.startsWith('ERROR')) throw new Error(`ShareImageUpload failed: ${text}`);
  return text;
}
