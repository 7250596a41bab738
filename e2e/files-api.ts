/**
 * Calls to the real service from the tests' Node side, to set up what a test needs quickly (a
 * 10,000-item folder, files to search for) without clicking: Login, then signed HTTP POST calls
 * with the sign computed as docs/protocol.md §6 says (node:crypto HMAC-SHA256), and tus uploads.
 */
import { createHash, createHmac } from 'node:crypto';
import type { Page } from '@playwright/test';

export interface ApiSession {
  readonly base: string;
  readonly uid: number;
  readonly token: string;
  readonly key: string;
  readonly expires: string;
  readonly account: string;
}

const attribute = (xml: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(xml)?.[1];

export async function apiLogin(base: string, account: string, password: string): Promise<ApiSession> {
  const response = await fetch(`${base}/OAuthService.asmx/Login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ uid: account, pwd: password }),
  });
  const xml = await response.text();
  const token = />([^<]*)<\/token>/.exec(xml)?.[1];
  const uid = attribute(xml, 'uid');
  const key = attribute(xml, 'key');
  if (!token || token === '0' || !uid || !key) throw new Error(`Login failed: ${xml}`);
  return { base, uid: Number(uid), token, key, expires: attribute(xml, 'expires') ?? '', account };
}

const SERVICE_OF: Readonly<Record<string, string>> = {
  FolderAdd: 'FileService',
  FileAdd: 'FileService',
  FolderAndFileDelete: 'FileService',
  GetFiles: 'UserService',
};

/** A signed call by HTTP POST; answers the XML, or throws with the service's refusal. */
export async function call(session: ApiSession, operation: string, params: Readonly<Record<string, string | number>>): Promise<string> {
  const values: Record<string, string> = { uid: String(session.uid), token: session.token };
  for (const [name, value] of Object.entries(params)) values[name] = String(value);
  const canonical = `${operation}\n${Object.keys(values)
    .sort()
    .map((name) => `${name}=${encodeURIComponent(values[name])}`)
    .join('&')}`;
  const sign = createHmac('sha256', session.key).update(canonical, 'utf8').digest('hex');
  const response = await fetch(`${session.base}/${SERVICE_OF[operation] ?? 'FileService'}.asmx/${operation}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...values, sign }),
  });
  const xml = await response.text();
  if (!response.ok || attribute(xml, 'code') !== '0') throw new Error(`${operation} failed: ${response.status} ${xml}`);
  return xml;
}

/** FolderAdd; answers the new folder's id. */
export async function addFolder(session: ApiSession, dir: number, name: string): Promise<number> {
  const xml = await call(session, 'FolderAdd', { dirid: dir, name });
  return Number(attribute(xml, 'id'));
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
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && dot < name.length - 1 ? name.slice(dot + 1).toLowerCase() : '';
  const xml = await call(session, 'FileAdd', { name, ext, size: bytes.length, dirid: dir, hash });
  return Number(attribute(xml, 'id'));
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
  const ids: Record<string, number> = 'file' in item ? { fids: item.file } : { dirids: item.folder };
  const xml = await call(session, 'file' in item ? 'FileShare' : 'FolderShare', {
    ...ids,
    downpwd: settings.downpwd ?? '',
    downValue: settings.downValue ?? 0,
    description: settings.description ?? '',
  });
  // The item's attributes, not the result's (<result code="0">).
  const element = /<(?:file|folder)\s[^>]*>/.exec(xml)?.[0] ?? '';
  const code = attribute(element, 'code');
  const url = attribute(element, 'url');
  if (!code || !url) throw new Error(`no share in ${xml}`);
  return { code, url };
}

/** Unshare: the share's links stop at once. */
export async function unshareItem(session: ApiSession, item: { readonly file: number } | { readonly folder: number }): Promise<void> {
  await call(session, 'Unshare', 'file' in item ? { dirids: '', fids: item.file } : { dirids: item.folder, fids: '' });
}

/** ShareImageUpload (token, no sign): the cover image of a file's share (shared first); answers its URL. */
export async function uploadShareImage(session: ApiSession, fid: number, image: Buffer): Promise<string> {
  const response = await fetch(`${session.base}/FileService.asmx/ShareImageUpload`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ uid: String(session.uid), token: session.token, fid: String(fid), ImagefileName: 'cover.png', byteFileStream: image.toString('base64') }),
  });
  const text = />([^<]*)<\/string>/.exec(await response.text())?.[1];
  if (!response.ok || !text || text.startsWith('ERROR')) throw new Error(`ShareImageUpload failed: ${response.status} ${text}`);
  return text.replace(/&amp;/g, '&');
}
