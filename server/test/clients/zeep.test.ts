/**
 * A real SOAP client, Python zeep (Debian's python3-zeep, for /usr/bin/python3), used the way its
 * users use it: zeep.Client on our WSDL alone, the SOAP 1.1 or SOAP 1.2 port bound with
 * client.bind(), the sign computed in Python. zeep_client.py beside this file drives it, refusing any
 * network access but 127.0.0.1, and prints what it saw as one JSON object; the tests read that.
 *
 * The FileService and UserService operations called answer a result document whose code says whether
 * the call got past the token and sign checks; what the operations themselves do is tested elsewhere.
 * A correct sign proves zeep sent every parameter as it was signed.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAccount, startTestApp, type TestApp } from '../helpers/app-server';

const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'zeep_client.py');
const INSTALL_HINT = `Python zeep is needed by ${PYTHON} for this test: apt-get install python3-zeep`;
const PASSWORD = 'zeep-password-1';

/** What zeep_client.py saw of one result: the element zeep handed back for `<OpResult>`. */
interface SeenResult {
  readonly python_type: string;
  readonly tag?: string;
  readonly attrs?: Record<string, string>;
  readonly text?: string | null;
  readonly repr?: string;
}

interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly contentType: string | null;
  readonly soapAction: string | null;
  readonly envelope: string | null;
  readonly status: number;
  readonly responseContentType: string | null;
  readonly responseEnvelope: string | null;
}

interface ZeepRun {
  readonly binding: 'soap11' | 'soap12';
  readonly zeep: string;
  readonly wsdlRequests: string[];
  readonly login: SeenResult;
  readonly getFiles: SeenResult;
  readonly folderRename: SeenResult;
  readonly wrongSign: SeenResult;
  readonly logout: SeenResult;
  readonly afterLogout: SeenResult;
  readonly http: SeenRequest[];
}

const BINDINGS = [
  { binding: 'soap11', name: 'SOAP 1.1', envelope: 'http://schemas.xmlsoap.org/soap/envelope/', contentType: 'text/xml' },
  { binding: 'soap12', name: 'SOAP 1.2', envelope: 'http://www.w3.org/2003/05/soap-envelope', contentType: 'application/soap+xml' },
] as const;

/** Codes that mean the call did not get past authentication (DECISIONS.md §3). */
const REFUSED_BY_AUTH = ['401', '403'];

function runPython(args: string[]): Promise<{ code: number; stdout: string; stderr: string; error?: Error }> {
  // Asynchronous on purpose: the service answering zeep runs in this very process.
  return new Promise((resolve) => {
    execFile(PYTHON, args, { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr, error: error ?? undefined });
    });
  });
}

async function requireZeep(): Promise<void> {
  const probe = await runPython(['-c', 'import zeep, requests, lxml']);
  if (probe.code !== 0) {
    throw new Error(`${INSTALL_HINT}\n(${PYTHON} -c "import zeep" failed: ${probe.error?.message ?? ''}\n${probe.stderr})`);
  }
}

async function runZeep(app: TestApp, account: string, binding: 'soap11' | 'soap12'): Promise<ZeepRun> {
  const result = await runPython([SCRIPT, app.url, account, PASSWORD, binding]);
  if (result.code === 3) throw new Error(`${INSTALL_HINT}\n${result.stderr}`);
  if (result.code !== 0) throw new Error(`zeep_client.py ${binding} failed (exit ${result.code}):\n${result.stderr}${result.stdout}`);
  return JSON.parse(result.stdout) as ZeepRun;
}

let app: TestApp;
/** Set when /usr/bin/python3 cannot import zeep: every test then fails with it (none is skipped). */
let zeepMissing: Error | undefined;

beforeAll(async () => {
  zeepMissing = await requireZeep().then(
    () => undefined,
    (error: Error) => error,
  );
  app = await startTestApp();
});
afterAll(() => app?.close());

it(`finds Python zeep for ${PYTHON}`, () => {
  if (zeepMissing) throw zeepMissing;
});

describe.each(BINDINGS)('zeep over $name', ({ binding, name, envelope, contentType }) => {
  let run: ZeepRun | undefined;
  let failure: unknown;
  let accountId: number;

  beforeAll(async () => {
    accountId = await addAccount(app, `zeep-${binding}`, PASSWORD);
    // Kept, not thrown: a failing hook would report these tests as skipped rather than failed.
    failure = zeepMissing;
    if (!failure) run = await runZeep(app, `zeep-${binding}`, binding).catch((error: unknown) => ((failure = error), undefined));
  });

  /** What zeep saw; throws why there is nothing to look at. */
  function seenByZeep(): ZeepRun {
    if (failure || !run) throw failure ?? new Error('zeep_client.py printed nothing');
    return run;
  }

  const show = (value: unknown) => JSON.stringify(value, null, 1);

  it('loads the three WSDLs from the service alone, and talks to nothing else', () => {
    const seen = seenByZeep();
    expect(seen.wsdlRequests).toEqual(['OAuthService', 'FileService', 'UserService'].map((s) => `${app.url}/${s}.asmx?WSDL`));
    for (const request of seen.http) expect(new URL(request.url).origin, show(request)).toBe(app.url);
  });

  it(`sends ${name} requests to the ${name} port and gets ${name} answers`, () => {
    const seen = seenByZeep();
    const posts = seen.http.filter((request) => request.method === 'POST');
    expect(posts.length).toBe(6);
    for (const request of posts) {
      expect(request.envelope, show(request)).toBe(envelope);
      expect(request.contentType, show(request)).toContain(contentType);
      expect(request.status, show(request)).toBe(200);
      expect(request.responseContentType, show(request)).toContain(contentType);
      expect(request.responseEnvelope, show(request)).toBe(envelope);
    }
  });

  it('Login gives the token, uid, signing key and expiry in the element zeep returns', () => {
    const seen = seenByZeep();
    expect(seen.login.tag, show(seen.login)).toBe('token');
    expect(seen.login.attrs?.uid).toBe(String(accountId));
    expect(seen.login.attrs?.key).toMatch(/^\S{32,}$/);
    expect(Date.parse(seen.login.attrs?.expires ?? '')).toBeGreaterThan(Date.now());
    expect(seen.login.text?.length ?? 0).toBeGreaterThanOrEqual(22);
  });

  it('a UserService call (GetFiles) signed in Python is authenticated and answered with a result document', () => {
    const seen = seenByZeep();
    expect(seen.getFiles.tag, show(seen.getFiles)).toBe('result');
    expect(seen.getFiles.attrs?.code, show(seen.getFiles)).toMatch(/^\d+$/);
    expect(REFUSED_BY_AUTH, show(seen.getFiles)).not.toContain(seen.getFiles.attrs?.code);
  });

  it('a FileService call (FolderRename) signed in Python is authenticated and answered with a result document', () => {
    const seen = seenByZeep();
    expect(seen.folderRename.tag, show(seen.folderRename)).toBe('result');
    expect(seen.folderRename.attrs?.code, show(seen.folderRename)).toMatch(/^\d+$/);
    expect(REFUSED_BY_AUTH, show(seen.folderRename)).not.toContain(seen.folderRename.attrs?.code);
  });

  it('a wrong sign sent through the same client is refused with 403', () => {
    const seen = seenByZeep();
    expect(seen.wrongSign.tag, show(seen.wrongSign)).toBe('result');
    expect(seen.wrongSign.attrs?.code, show(seen.wrongSign)).toBe('403');
  });

  it('Logout through zeep answers code 0, and a signed call with that token afterwards gets 401', () => {
    const seen = seenByZeep();
    expect(seen.logout.attrs?.code, show(seen.logout)).toBe('0');
    expect(seen.afterLogout.attrs?.code, show(seen.afterLogout)).toBe('401');
  });
});
