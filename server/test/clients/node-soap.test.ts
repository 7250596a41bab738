/**
 * A real SOAP client, the `soap` npm package, used the way its users use it: a client made from our
 * WSDL alone (`/X.asmx?WSDL`), calls through the SOAP 1.1 port and the SOAP 1.2 port, results read
 * from what the package hands back. Nothing here builds an envelope by hand.
 *
 * The FileService and UserService operations called here answer a result document whose code says
 * whether the call got past the token and sign checks; what the operations themselves do is tested
 * elsewhere. A correct sign proves the client sent every parameter as it was signed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClientAsync, type Client, type IOptions } from 'soap';
import { signRequest } from '../../src/operations/accounts/signing';
import { addAccount, element, startTestApp, type Session, type TestApp } from '../helpers/app-server';

type Service = 'OAuthService' | 'FileService' | 'UserService';

interface Binding {
  readonly name: string;
  /** The port of the WSDL's service element that the calls go through: `${service}${portSuffix}`. */
  readonly portSuffix: 'Soap' | 'Soap12';
  readonly options: IOptions;
  readonly envelope: string;
  readonly contentType: string;
}

const BINDINGS: readonly Binding[] = [
  {
    name: 'SOAP 1.1',
    portSuffix: 'Soap',
    options: {},
    envelope: 'http://schemas.xmlsoap.org/soap/envelope/',
    contentType: 'text/xml',
  },
  {
    name: 'SOAP 1.2',
    portSuffix: 'Soap12',
    options: { forceSoap12Headers: true },
    envelope: 'http://www.w3.org/2003/05/soap-envelope',
    contentType: 'application/soap+xml',
  },
];

const PASSWORD = 'node-soap-password-1';
const listing = { dir: '0', order: 'name', desc: '0' };

/** Codes that mean the call did not get past authentication (DECISIONS.md §3). */
const REFUSED_BY_AUTH = ['401', '403'];

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

interface Answer {
  /** What the package returned as the call's result object. */
  readonly result: unknown;
  readonly rawRequest: string;
  readonly rawResponse: string;
}

interface Item {
  readonly attrs: Record<string, string>;
  readonly text: string;
}

/**
 * The element `name` inside `<OpResult>`, however the package chose to give the `s:any` mixed
 * content: as an object (`{ attributes, $value }`, today), a list of them, or a string of XML.
 */
function resultItem(result: unknown, operation: string, name: string): Item | null {
  const wrapper = (result as Record<string, unknown> | null)?.[`${operation}Result`];
  return findItem(wrapper, name);
}

function findItem(value: unknown, name: string): Item | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value.includes('<') ? element(value, name) : null;
  if (Array.isArray(value)) {
    for (const entry of value) {
      const found = findItem(entry, name);
      if (found) return found;
    }
    return null;
  }
  if (typeof value !== 'object') return null;
  const record = value as Record<string, unknown>;
  if (name in record) return asItem(Array.isArray(record[name]) ? (record[name] as unknown[])[0] : record[name]);
  for (const key of ['$value', '$xml']) {
    const found = key in record ? findItem(record[key], name) : null;
    if (found) return found;
  }
  return null;
}

function asItem(value: unknown): Item {
  if (typeof value === 'string' || typeof value === 'number') return { attrs: {}, text: String(value) };
  const record = (value ?? {}) as { attributes?: Record<string, unknown>; $value?: unknown };
  const attrs: Record<string, string> = {};
  for (const [key, attr] of Object.entries(record.attributes ?? {})) attrs[key] = String(attr);
  return { attrs, text: record.$value === undefined || record.$value === null ? '' : String(record.$value) };
}

function describeResult(answer: Answer): string {
  return `result ${JSON.stringify(answer.result)}\nrequest ${answer.rawRequest}\nresponse ${answer.rawResponse}`;
}

describe.each(BINDINGS)('node soap over $name', (binding) => {
  const clients = {} as Record<Service, Client>;
  let session: Session;
  let accountId: number;

  /** Calls `operation` through the binding's port of `service`, as `client.Service.Port.Operation(args, cb)`. */
  function call(service: Service, operation: string, args: Record<string, unknown>): Promise<Answer> {
    const port = clients[service][service]?.[`${service}${binding.portSuffix}`];
    if (typeof port?.[operation] !== 'function') throw new Error(`the client has no ${service}.${service}${binding.portSuffix}.${operation}`);
    return new Promise((resolve, reject) => {
      port[operation](args, (err: unknown, result: unknown, rawResponse: string, _header: unknown, rawRequest: string) => {
        if (err) reject(err);
        else resolve({ result, rawRequest, rawResponse });
      });
    });
  }

  /** Calls a signed operation with uid, token, the parameters and the sign over their text (DECISIONS.md §5). */
  function callSigned(service: Service, operation: string, as: Session, params: Record<string, string | number>): Promise<Answer> {
    const args = { uid: as.uid, token: as.token, ...params };
    const text = Object.fromEntries(Object.entries(args).map(([name, value]) => [name, String(value)]));
    return call(service, operation, { ...args, sign: signRequest(as.key, operation, text) });
  }

  async function login(): Promise<{ answer: Answer; session: Session }> {
    const answer = await call('OAuthService', 'Login', { uid: `ns-${binding.portSuffix}`, pwd: PASSWORD });
    const token = resultItem(answer.result, 'Login', 'token');
    if (!token || token.text === '0' || !token.attrs.key) throw new Error(`Login through node soap failed:\n${describeResult(answer)}`);
    return { answer, session: { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key } };
  }

  beforeAll(async () => {
    accountId = await addAccount(app, `ns-${binding.portSuffix}`, PASSWORD);
    for (const service of ['OAuthService', 'FileService', 'UserService'] as const) {
      // disableCache: the package caches a WSDL by URL and the options of the latest client then
      // apply to every client made from it (forceSoap12Headers would switch the SOAP 1.1 client too).
      clients[service] = await createClientAsync(`${app.url}/${service}.asmx?WSDL`, { ...binding.options, disableCache: true });
    }
    ({ session } = await login());
  });

  it('makes a client of each service from its WSDL, with the SOAP 1.1 and SOAP 1.2 ports', () => {
    for (const service of ['OAuthService', 'FileService', 'UserService'] as const) {
      const ports = Object.keys(clients[service].describe()[service]);
      expect(ports).toEqual(expect.arrayContaining([`${service}Soap`, `${service}Soap12`]));
    }
    expect(Object.keys(clients.OAuthService.describe().OAuthService[`OAuthService${binding.portSuffix}`])).toEqual(
      expect.arrayContaining(['Login', 'APILogin', 'Logout']),
    );
  });

  it(`sends a ${binding.name} request and reads the ${binding.name} answer`, async () => {
    const { answer } = await login();
    expect(answer.rawRequest).toContain(`="${binding.envelope}"`);
    expect(String(clients.OAuthService.lastRequestHeaders?.['Content-Type'])).toContain(binding.contentType);
    expect(String(clients.OAuthService.lastResponseHeaders?.['content-type'])).toContain(binding.contentType);
    expect(answer.rawResponse).toContain(`<soap:Envelope xmlns:soap="${binding.envelope}"`);
  });

  it('Login gives the token, uid, signing key and expiry through the result the client parsed', async () => {
    const { answer } = await login();
    const token = resultItem(answer.result, 'Login', 'token');
    expect(token, describeResult(answer)).not.toBeNull();
    expect(token!.attrs.uid).toBe(String(accountId));
    expect(token!.attrs.key).toMatch(/^\S{32,}$/);
    expect(Date.parse(token!.attrs.expires)).toBeGreaterThan(Date.now());
    expect(token!.text.length).toBeGreaterThanOrEqual(22);
  });

  it('a wrong password gives the token 0 through the client', async () => {
    const answer = await call('OAuthService', 'Login', { uid: `ns-${binding.portSuffix}`, pwd: 'not-the-password' });
    expect(resultItem(answer.result, 'Login', 'token')?.text, describeResult(answer)).toBe('0');
  });

  it('a signed UserService call (GetFiles) made by node soap is authenticated and answered with a result document', async () => {
    const answer = await callSigned('UserService', 'GetFiles', session, listing);
    const result = resultItem(answer.result, 'GetFiles', 'result');
    expect(result, describeResult(answer)).not.toBeNull();
    expect(result!.attrs.code, describeResult(answer)).toMatch(/^\d+$/);
    expect(REFUSED_BY_AUTH, describeResult(answer)).not.toContain(result!.attrs.code);
  });

  it('a signed FileService call (FolderRename) made by node soap is authenticated and answered with a result document', async () => {
    const answer = await callSigned('FileService', 'FolderRename', session, { dirid: 1, newname: 'x' });
    const result = resultItem(answer.result, 'FolderRename', 'result');
    expect(result, describeResult(answer)).not.toBeNull();
    expect(result!.attrs.code, describeResult(answer)).toMatch(/^\d+$/);
    expect(REFUSED_BY_AUTH, describeResult(answer)).not.toContain(result!.attrs.code);
  });

  it('a wrong sign sent through the same client is refused with 403', async () => {
    const wrongSign = signRequest('not-the-key', 'GetFiles', { uid: String(session.uid), token: session.token, ...listing });
    const answer = await call('UserService', 'GetFiles', { uid: session.uid, token: session.token, ...listing, sign: wrongSign });
    expect(resultItem(answer.result, 'GetFiles', 'result')?.attrs.code, describeResult(answer)).toBe('403');
  });

  it('Logout through the client answers code 0, and a signed call with that token afterwards gets 401', async () => {
    const { session: own } = await login();
    const out = await callSigned('OAuthService', 'Logout', own, {});
    expect(resultItem(out.result, 'Logout', 'result')?.attrs.code, describeResult(out)).toBe('0');
    const after = await callSigned('UserService', 'GetFiles', own, listing);
    expect(resultItem(after.result, 'GetFiles', 'result')?.attrs.code, describeResult(after)).toBe('401');
  });
});
