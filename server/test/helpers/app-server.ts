/**
 * The whole service on a fresh data folder (real SQLite file, or a fresh PostgreSQL database with
 * FSS_TEST_DATABASE=postgres), on a free loopback port. Content on the local disk, or under a
 * prefix of its own on the test S3 server with FSS_TEST_CONTENT=s3 (helpers/content.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildApp, type App } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import { createAccount, createApiKey } from '../../src/operations/accounts/accounts';
import { signRequest } from '../../src/operations/accounts/signing';
import { closeConnectionsGently } from '../../src/protocol/http-common';
import { findOperation, type OperationSpec } from '../../src/catalog/operations';
import { testContentEnv } from './content';
import { createTestDatabase, testEngine } from './postgres';
import { callInForm, resultXml, type Form, type HttpAnswer, type Value } from './requests';

export interface TestApp {
  readonly url: string;
  readonly app: App;
  readonly config: Config;
  readonly logLines: string[];
  close(): Promise<void>;
}

export async function startTestApp(env: NodeJS.ProcessEnv = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fss-test-'));
  // On PostgreSQL, a database of its own, dropped by close(): the app may outlive one test (beforeAll).
  const database = testEngine() === 'postgres' && env.FSS_DATABASE_URL === undefined ? await createTestDatabase() : undefined;
  const logLines: string[] = [];
  const config: Config = {
    ...loadConfig({ FSS_DATA_DIR: dataDir, ...(database ? { FSS_DATABASE_URL: database.url } : {}), ...(await testContentEnv()), ...env }),
    log: (line) => logLines.push(line),
  };
  const app = await buildApp(config);
  const server = http.createServer(app.handle);
  closeConnectionsGently(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    config,
    logLines,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await app.close();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function addAccount(app: TestApp, name: string, password: string): Promise<number> {
  const account = await createAccount(app.app.services, { name, password });
  return account.id;
}

export async function addApiKey(app: TestApp, name: string): Promise<string> {
  const created = await createApiKey(app.app.services, name, 'test');
  return created.key;
}

export interface Session {
  readonly uid: number;
  readonly token: string;
  readonly key: string;
}

/** Reads the attributes and text of the first element named `name` in an answer (text only when it holds no elements). */
export function element(xml: string, name: string): { attrs: Record<string, string>; text: string } | null {
  const match = new RegExp(`<${name}((?:\\s+[\\w:]+="[^"]*")*)\\s*(/?)>`).exec(xml);
  if (!match) return null;
  const attrs: Record<string, string> = {};
  for (const a of match[1].matchAll(/([\w:]+)="([^"]*)"/g)) {
    attrs[a[1]] = a[2].replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  }
  let text = '';
  if (match[2] !== '/') {
    const rest = xml.slice(match.index + match[0].length);
    const end = rest.indexOf(`</${name}>`);
    if (end >= 0 && !rest.slice(0, end).includes('<')) text = rest.slice(0, end);
  }
  return { attrs, text };
}

/** Calls a signed operation the way a client does: uid, token, the parameters, and the sign over them. */
export function callSigned(
  app: TestApp,
  form: Form,
  op: OperationSpec,
  session: Session,
  params: Record<string, Value>,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const values: Record<string, Value> = { uid: session.uid, token: session.token, ...params };
  const text: Record<string, string> = {};
  for (const p of op.params) if (p.name !== 'sign') text[p.name] = values[p.name] === undefined || values[p.name] === null ? '' : String(values[p.name]);
  values.sign = signRequest(session.key, op.name, text);
  return callInForm(app.url, form, op, values, undefined, headers);
}

const Login = findOperation('OAuthService', 'Login')!;

/** A new account `name` (password `<name>-password-1`), logged in over `form`: most tests' preamble. */
export async function newSession(app: TestApp, name: string, form: Form = 'post'): Promise<Session> {
  await addAccount(app, name, `${name}-password-1`);
  return logIn(app, form, name, `${name}-password-1`);
}

/** A signed call that must answer 200: its result document and the attributes of its `<result>`. */
export async function signedResult(app: TestApp, form: Form, op: OperationSpec, session: Session, params: Record<string, Value>) {
  const answer = await callSigned(app, form, op, session, params);
  if (answer.status !== 200) throw new Error(`${op.name} answered ${answer.status}: ${answer.body}`);
  const xml = resultXml(answer, op);
  return { xml, result: element(xml, 'result')?.attrs ?? {} };
}

/** Logs in over one of the four forms; throws with the answer when the login is refused. */
export async function logIn(app: TestApp, form: Form, uid: string, pwd: string): Promise<Session> {
  const answer = await callInForm(app.url, form, Login, { uid, pwd });
  const token = element(resultXml(answer, Login), 'token');
  if (!token || token.text === '0') throw new Error(`login refused: ${answer.body}`);
  return { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key };
}
