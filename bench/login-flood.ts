/**
 * Part of section 4: a 1 MiB download while 32 clients loop Login (issue 18). Every Login costs a
 * password hash on libuv's thread pool, which file reads share; the service runs at most
 * FSS_PASSWORD_HASH_SLOTS of them at once (docs/security.md, "Password hashes and the thread pool").
 *
 * The clients (in this process, on CPU 1) send Login after Login, in the four forms, half with the
 * bench account's password and half with unknown accounts, each from an address of its own
 * (X-Forwarded-For: the content section's service trusts the loopback as its proxy) and each
 * unknown account new, so that no throttle counter of docs/protocol.md §5.5 blocks them: what the
 * flood meets is the hash queue alone. The download is timed to its last byte, every byte checked.
 */
import http from 'node:http';
import { buildRequest, FORMS, operation, resultOf, attribute, type RawRequest } from './calls';
import { median } from './util';

export const FLOOD_CLIENTS = 32;

export interface LoginFloodResult {
  readonly clients: number;
  readonly fileBytes: number;
  /** The download with nothing else going on, ms (median of `quietMs`). */
  readonly quietMs: readonly number[];
  /** The same download while the clients loop Login, ms. */
  readonly floodMs: readonly number[];
  readonly quietMedianMs: number;
  readonly floodMedianMs: number;
  readonly floodWorstMs: number;
  /** How the flood's Logins were answered while it ran. */
  readonly logins: { readonly tokens: number; readonly invalid: number; readonly throttled: number; readonly seconds: number };
}

const Login = operation('OAuthService', 'Login');

/** One connection per client, so that the clients do not queue behind each other in this process. */
const floodAgent = new http.Agent({ keepAlive: true, maxSockets: FLOOD_CLIENTS });

function post(baseUrl: string, request: RawRequest, address: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(request.path, baseUrl), { method: request.method, headers: { ...request.headers, 'X-Forwarded-For': address }, agent: floodAgent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(request.body);
  });
}

/**
 * Times `download` (which checks the bytes and answers its seconds) `times` times quietly, then
 * `times` times while FLOOD_CLIENTS clients loop Login as `account` / `password` and as unknown accounts.
 */
export async function measureLoginFlood(options: {
  readonly url: string;
  readonly account: string;
  readonly password: string;
  readonly fileBytes: number;
  readonly times: number;
  readonly download: () => Promise<number>;
}): Promise<LoginFloodResult> {
  const quietMs: number[] = [];
  for (let i = 0; i < options.times; i++) quietMs.push((await options.download()) * 1000);

  const logins = { tokens: 0, invalid: 0, throttled: 0 };
  let stop = false;
  let problem: Error | undefined;
  const loop = async (client: number) => {
    const form = FORMS[client % FORMS.length];
    const right = client % 2 === 0;
    for (let attempt = 0; !stop; attempt++) {
      const uid = right ? options.account : `nobody-${client}-${attempt}`;
      const body = await post(options.url, buildRequest(form, Login, { uid, pwd: options.password }), `2001:db8:${client.toString(16)}::${(attempt + 1).toString(16)}`);
      const xml = resultOf(body);
      const text = />([^<]*)<\/token>/.exec(xml)?.[1];
      const reason = attribute(xml, 'reason');
      if (text && text !== '0') logins.tokens++;
      else if (reason === 'invalid') logins.invalid++;
      else if (reason === 'throttled') logins.throttled++;
      else throw new Error(`Login answered ${body.slice(0, 300)}`);
    }
  };
  const started = performance.now();
  const clients = Array.from({ length: FLOOD_CLIENTS }, (_, client) => loop(client).catch((error: Error) => void (problem ??= error)));
  const floodMs: number[] = [];
  try {
    // Every client has had its first answer, or the queue refuses already: the flood is on.
    while (logins.tokens + logins.invalid + logins.throttled < FLOOD_CLIENTS && !problem) await new Promise((resolve) => setTimeout(resolve, 20));
    for (let i = 0; i < options.times && !problem; i++) floodMs.push((await options.download()) * 1000);
  } finally {
    stop = true;
    await Promise.all(clients);
  }
  if (problem) throw problem;
  return {
    clients: FLOOD_CLIENTS,
    fileBytes: options.fileBytes,
    quietMs,
    floodMs,
    quietMedianMs: median(quietMs),
    floodMedianMs: median(floodMs),
    floodWorstMs: Math.max(...floodMs),
    logins: { ...logins, seconds: (performance.now() - started) / 1000 },
  };
}
