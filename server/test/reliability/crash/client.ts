/**
 * A small client of the service for the reliability suite: signed calls in the HTTP POST form (the
 * way a client signs them, operations/accounts/signing.ts), tus uploads whose body can be sent slowly so
 * that a kill lands in the middle of it, and downloads hashed as they stream.
 *
 * A call that gets no answer (the server died, the connection broke) rejects with CallFailed: to
 * the ledger that is "not acknowledged", never a refusal.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { findOperation, type OperationSpec, type ServiceName } from '../../../src/catalog/operations';
import { signRequest } from '../../../src/operations/accounts/signing';
import { element } from '../../helpers/app-server';
import { callInForm, resultXml, send, type Value } from '../../helpers/requests';

const op = (service: ServiceName, name: string): OperationSpec => findOperation(service, name)!;
export const Ops = {
  Login: op('OAuthService', 'Login'),
  APILogin: op('OAuthService', 'APILogin'),
  FolderAdd: op('FileService', 'FolderAdd'),
  FileAdd: op('FileService', 'FileAdd'),
  FileRename: op('FileService', 'FileRename'),
  FolderRename: op('FileService', 'FolderRename'),
  FileDownload: op('FileService', 'FileDownload'),
  FolderAndFileDelete: op('FileService', 'FolderAndFileDelete'),
  FolderAndFileRestore: op('FileService', 'FolderAndFileRestore'),
  Move: op('FileService', 'Move'),
  FolderEncrypt: op('FileService', 'FolderEncrypt'),
  Unlock: op('FileService', 'Unlock'),
  FileShare: op('FileService', 'FileShare'),
  FileEmailShare: op('FileService', 'FileEmailShare'),
  GetFiles: op('UserService', 'GetFiles'),
  FileSearch: op('UserService', 'FileSearch'),
  GetRecycleFiles: op('UserService', 'GetRecycleFiles'),
  GetShareFiles: op('UserService', 'GetShareFiles'),
} as const;

/** The request got no answer: the server died or the connection broke. */
export class CallFailed extends Error {}

export interface Session {
  readonly uid: number;
  readonly token: string;
  readonly key: string;
}

export interface Answer {
  readonly status: number;
  readonly result: Record<string, string>;
  readonly folders: Array<Record<string, string>>;
  readonly files: Array<Record<string, string>>;
}

export async function login(url: string, account: string, password: string): Promise<Session> {
  const answer = await callInForm(url, 'post', Ops.Login, { uid: account, pwd: password });
  const token = element(resultXml(answer, Ops.Login), 'token');
  if (!token || token.text === '0') throw new Error(`login of ${account} failed: ${answer.status} ${answer.body}`);
  return { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key };
}

/** A session from an API key (`fss apikey create`): no password hash to check, so many log in at once cheaply. */
export async function apiLogin(url: string, sid: string): Promise<Session> {
  const answer = await callInForm(url, 'post', Ops.APILogin, { sid });
  const token = element(resultXml(answer, Ops.APILogin), 'token');
  if (!token || token.text === '0') throw new Error(`APILogin failed: ${answer.status} ${answer.body}`);
  return { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key };
}

/** The attributes of every empty element `name` in the answer (items are empty elements). */
function all(xml: string, name: string): Array<Record<string, string>> {
  return [...xml.matchAll(new RegExp(`<${name}((?:\\s+[\\w:]+="[^"]*")*)\\s*/>`, 'g'))].map((m) => element(`<${name}${m[1]}/>`, name)!.attrs);
}

/** A signed call; its <result> attributes and items, whatever the code. */
export async function call(url: string, operation: OperationSpec, session: Session, params: Record<string, Value>): Promise<Answer> {
  const values: Record<string, Value> = { uid: session.uid, token: session.token, ...params };
  const text: Record<string, string> = {};
  for (const p of operation.params) if (p.name !== 'sign') text[p.name] = values[p.name] === undefined || values[p.name] === null ? '' : String(values[p.name]);
  values.sign = signRequest(session.key, operation.name, text);
  let answer;
  try {
    answer = await callInForm(url, 'post', operation, values);
  } catch (error) {
    throw new CallFailed(`${operation.name}: ${(error as Error).message}`);
  }
  const xml = resultXml(answer, operation);
  const result = /<result((?:\s+[\w:]+="[^"]*")*)\s*\/?>/.exec(xml);
  if (!result) throw new Error(`${operation.name}: no <result> in ${answer.status} ${answer.body.slice(0, 500)}`);
  return { status: answer.status, result: element(`<result${result[1]}/>`, 'result')!.attrs, folders: all(xml, 'folder'), files: all(xml, 'file') };
}

/** A signed call that must answer code 0. */
export async function ok(url: string, operation: OperationSpec, session: Session, params: Record<string, Value>): Promise<Answer> {
  const answer = await call(url, operation, session, params);
  if (answer.result.code !== '0') throw new Error(`${operation.name}(${JSON.stringify(params)}) answered ${JSON.stringify(answer.result)}`);
  return answer;
}

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const tusHeaders = (session: Session) => ({ 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${session.token}` });

/** Creates a tus upload of `length` bytes; answers its path (/upload/<id>). */
export async function createUpload(url: string, session: Session, length: number): Promise<string> {
  let created;
  try {
    created = await send(url, 'POST', '/upload/', { ...tusHeaders(session), 'Upload-Length': String(length) });
  } catch (error) {
    throw new CallFailed(`upload creation: ${(error as Error).message}`);
  }
  if (created.status !== 201) throw new Error(`upload creation answered ${created.status} ${created.body}`);
  return new URL(String(created.headers.location), url).pathname;
}

/** The offset an upload has reached (a resume HEAD), and its SHA-256 once complete. */
export async function uploadOffset(url: string, session: Session, location: string): Promise<{ status: number; offset: number; sha256?: string }> {
  const head = await send(url, 'HEAD', location, tusHeaders(session));
  const hash = head.headers['upload-sha256'];
  return { status: head.status, offset: Number(head.headers['upload-offset'] ?? -1), ...(hash ? { sha256: String(hash) } : {}) };
}

/**
 * One PATCH of `bytes` from `offset`, written in chunks of `chunk` bytes with `pauseMs` between
 * them, so that the body is still arriving when the server dies. Answers the Upload-SHA256 of the
 * last byte's answer; CallFailed when the connection broke.
 */
export function patchSlowly(url: string, session: Session, location: string, bytes: Buffer, offset: number, chunk: number, pauseMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let failed = false;
    const req = http.request(new URL(location, url), {
      method: 'PATCH',
      headers: {
        ...tusHeaders(session),
        'Upload-Offset': String(offset),
        'Content-Type': 'application/offset+octet-stream',
        'Content-Length': String(bytes.length - offset),
      },
    });
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => {
        if (res.statusCode === 204 && res.headers['upload-sha256']) resolve(String(res.headers['upload-sha256']));
        else reject(new Error(`PATCH answered ${res.statusCode} (offset ${res.headers['upload-offset']})`));
      });
      res.once('error', (error) => reject(new CallFailed(`PATCH: ${error.message}`)));
    });
    req.once('error', (error) => {
      failed = true;
      reject(new CallFailed(`PATCH: ${error.message}`));
    });
    void (async () => {
      for (let at = offset; at < bytes.length && !failed && !req.destroyed; at += chunk) {
        req.write(bytes.subarray(at, Math.min(bytes.length, at + chunk)));
        if (pauseMs > 0) await sleep(pauseMs);
      }
      if (!failed && !req.destroyed) req.end();
    })();
  });
}

/**
 * A PATCH of all of `bytes` from offset 0, written 64 KiB every 20 ms; `interrupt` is called once 2 MiB are written
 * (more than the sockets' buffers hold, so the server holds the upload's lock and bytes). Answers the response.
 */
export function patchInterrupted(url: string, session: Session, location: string, bytes: Buffer, interrupt: () => void): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(location, url), {
      method: 'PATCH',
      headers: { ...tusHeaders(session), 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(bytes.length) },
    });
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve(res));
    });
    // Writing on after the answer closed the connection: expected; a missing answer is not.
    req.on('error', (error) => setTimeout(() => reject(error), 1_000));
    void (async () => {
      for (let at = 0; at < bytes.length && !req.destroyed; at += 64 * 1024) {
        req.write(bytes.subarray(at, at + 64 * 1024));
        if (at < 2 * 1024 * 1024 && at + 64 * 1024 >= 2 * 1024 * 1024) interrupt();
        await sleep(20);
      }
    })();
  });
}

/** A whole upload: create, one slow PATCH; answers the location and the SHA-256 the server computed. */
export async function upload(url: string, session: Session, bytes: Buffer, chunk = 16 * 1024, pauseMs = 0): Promise<{ location: string; sha256: string }> {
  const location = await createUpload(url, session, bytes.length);
  return { location, sha256: await patchSlowly(url, session, location, bytes, 0, chunk, pauseMs) };
}

/** GETs a URL and hashes the body as it streams. */
export function fetchSha256(url: string): Promise<{ status: number; size: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const hash = createHash('sha256');
        let size = 0;
        res.on('data', (c: Buffer) => {
          hash.update(c);
          size += c.length;
        });
        res.once('end', () => resolve({ status: res.statusCode ?? 0, size, sha256: hash.digest('hex') }));
        res.once('error', reject);
      })
      .once('error', reject);
  });
}

/**
 * What a file's FileDownload URL serves, asked of the service the call went to: the URL's host is
 * FSS_PUBLIC_URL's when it is set, the address of whatever stands in front of the service.
 */
export async function download(url: string, session: Session, fileId: number): Promise<{ status: number; size: number; sha256: string }> {
  const answer = await ok(url, Ops.FileDownload, session, { fid: fileId });
  const { pathname, search } = new URL(answer.result.url);
  return fetchSha256(new URL(pathname + search, url).href);
}

/** Deterministic bytes of a given length from a label. */
export function bytesOf(label: string, length: number): Buffer {
  const out = Buffer.alloc(length);
  let block = createHash('sha256').update(label).digest();
  for (let at = 0; at < length; at += block.length) {
    block.copy(out, at, 0, Math.min(block.length, length - at));
    block = createHash('sha256').update(block).digest();
  }
  return out;
}
