/**
 * Section 2: call throughput. Signed GetFiles of the 100-item folder in each of the four forms and
 * of the 1,000-item folder in SOAP 1.1, each against three servers in turn, in the same run:
 * - service: `fss serve` on the populated database (token, sign and listing checked and read as in
 *   production);
 * - limit: bench/limit-server.ts, answering the bytes the service answered with the least work;
 * - peer: bench/peer-server.ts, the `soap` package serving the operation from the service's WSDL.
 * All three are pinned to CPU 0, the load generator (autocannon, 32 connections) to CPU 1.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { countItems, FORM_NAMES, login, operation, resultCode, send, signedRequest, type Form, type RawRequest } from './calls';
import { runLoad, type LoadFigures } from './load';
import { limitKey, type LimitAnswer } from './limit-server';
import { PASSWORD, BENCH_ACCOUNT, type Manifest } from './populate';
import { startChild, startService, tsNodeArgs, type ChildServer } from './service';
import { log, round } from './util';

export interface ThroughputOptions {
  readonly dataDir: string;
  readonly runDir: string;
  readonly manifest: Manifest;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  readonly profileDir?: string;
}

export type Target = 'service' | 'limit' | 'peer';

export interface Measured {
  readonly figures: LoadFigures | null;
  /** Why there is no figure, or what is wrong with it. */
  readonly note?: string;
  /** The answers had the expected size and status (no refusals slipped in). */
  readonly valid: boolean;
}

export interface ThroughputCase {
  readonly id: string;
  readonly label: string;
  readonly form: Form;
  readonly items: number;
  /** Size of the service's answer body, bytes. */
  readonly answerBytes: number;
  readonly service: Measured;
  readonly limit: Measured;
  readonly peer: Measured;
  /** The peer figure the goal compares with (the peer's own in SOAP; its SOAP 1.1 figure for HTTP GET/POST). */
  readonly peerCompared: { readonly rps: number; readonly from: string } | null;
  readonly ratioToLimit: number;
  readonly ratioToPeer: number;
}

export interface ThroughputResult {
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly cases: ThroughputCase[];
}

interface Plan {
  readonly id: string;
  readonly form: Form;
  readonly items: number;
  readonly dir: number;
}

/** Checks load figures: every answer 2xx, no errors, and each the size of the expected answer (a refusal is far shorter). */
function check(figures: LoadFigures, answerBytes: number, slack: number): Measured {
  const problems: string[] = [];
  if (figures.requests === 0) problems.push('no answer');
  if (figures.non2xx > 0) problems.push(`${figures.non2xx} non-2xx answers`);
  if (figures.errors > 0) problems.push(`${figures.errors} errors`);
  if (figures.timeouts > 0) problems.push(`${figures.timeouts} timeouts`);
  if (figures.requests > 0 && (figures.bytesPerResponse < answerBytes || figures.bytesPerResponse > answerBytes * slack + 1_000)) {
    problems.push(`answers of ${Math.round(figures.bytesPerResponse)} bytes on average, expected about ${answerBytes}`);
  }
  return { figures, valid: problems.length === 0, note: problems.length ? problems.join('; ') : undefined };
}

export async function measureThroughput(options: ThroughputOptions): Promise<ThroughputResult> {
  const { manifest } = options;
  const plans: Plan[] = [
    ...(['soap11', 'soap12', 'get', 'post'] as const).map((form) => ({ id: `${form}-100`, form, items: 100, dir: manifest.bench.list100 })),
    { id: 'soap11-1000', form: 'soap11', items: 1000, dir: manifest.bench.list1000 },
  ];

  const service = await startService({ dataDir: options.dataDir, logFile: path.join(options.runDir, 'logs', 'throughput-service.log'), profileDir: options.profileDir });
  let limit: ChildServer | null = null;
  let peer: ChildServer | null = null;
  try {
    const session = await login(service.url, BENCH_ACCOUNT, PASSWORD);
    const GetFiles = operation('UserService', 'GetFiles');
    const requests = new Map<string, RawRequest>();
    const answers: LimitAnswer[] = [];
    const answerBytes = new Map<string, number>();
    for (const plan of plans) {
      const request = signedRequest(plan.form, GetFiles, session, { dir: String(plan.dir), order: 'name', desc: '0' });
      const answer = await send(service.url, request);
      const body = answer.body.toString('utf8');
      if (answer.status !== 200 || resultCode(body) !== 0 || countItems(body) !== plan.items) {
        throw new Error(`GetFiles ${plan.id}: ${answer.status}, ${countItems(body)} items: ${body.slice(0, 300)}`);
      }
      requests.set(plan.id, request);
      answerBytes.set(plan.id, answer.body.length);
      answers.push({ key: limitKey(plan.form, 'GetFiles', String(plan.dir)), contentType: String(answer.headers['content-type']), body: answer.body.toString('base64') });
    }
    const answersFile = path.join(options.runDir, 'limit-answers.json');
    await writeFile(answersFile, JSON.stringify(answers));
    const wsdlFile = path.join(options.runDir, 'UserService.wsdl');
    await writeFile(wsdlFile, (await send(service.url, { method: 'GET', path: '/UserService.asmx?WSDL', headers: {} })).body);

    limit = await startChild({ name: 'limit', cpus: '0', nodeArgs: tsNodeArgs('limit-server.ts', answersFile), logFile: path.join(options.runDir, 'logs', 'limit.log') });
    const peerLog = path.join(options.runDir, 'logs', 'peer.log');
    peer = await startChild({ name: 'peer', cpus: '0', nodeArgs: tsNodeArgs('peer-server.ts', options.dataDir, wsdlFile), logFile: peerLog });
    const peer12 = /soap12 on (\S+)/.exec(await readFile(peerLog, 'utf8'))?.[1];
    if (!peer12) throw new Error('the peer did not say where its SOAP 1.2 listener is');

    // Each server answers each call correctly before it is measured.
    for (const plan of plans) {
      const request = requests.get(plan.id)!;
      const fromLimit = await send(limit.url, request);
      if (fromLimit.body.length !== answerBytes.get(plan.id)) throw new Error(`the limit answered ${plan.id} with ${fromLimit.body.length} bytes`);
      if (plan.form === 'soap11' || plan.form === 'soap12') {
        const fromPeer = await send(plan.form === 'soap11' ? peer.url : peer12, request);
        const body = fromPeer.body.toString('utf8');
        if (fromPeer.status !== 200 || !/code="0"/.test(body) || countItems(body) !== plan.items) {
          throw new Error(`the peer answered ${plan.id}: ${fromPeer.status} ${body.slice(0, 300)}`);
        }
        answerBytes.set(`peer-${plan.id}`, fromPeer.body.length);
      }
    }

    const load = { connections: options.connections, seconds: options.seconds, warmupSeconds: options.warmupSeconds };
    const cases: ThroughputCase[] = [];
    for (const plan of plans) {
      const request = requests.get(plan.id)!;
      const bytes = answerBytes.get(plan.id)!;
      const label = `${FORM_NAMES[plan.form]}, ${plan.items.toLocaleString('en-US')} items`;
      log(`throughput: ${label}: limit`);
      const limitFigures = check(await runLoad(limit.url, request, load), bytes, 1.0);
      log(`throughput: ${label}: service`);
      const serviceFigures = check(await runLoad(service.url, request, load), bytes, 1.0);
      let peerFigures: Measured;
      if (plan.form === 'soap11' || plan.form === 'soap12') {
        log(`throughput: ${label}: peer`);
        peerFigures = check(await runLoad(plan.form === 'soap11' ? peer.url : peer12, request, load), answerBytes.get(`peer-${plan.id}`)!, 1.01);
      } else {
        peerFigures = { figures: null, valid: false, note: 'the soap package serves no HTTP GET or POST' };
      }
      cases.push({
        id: plan.id,
        label,
        form: plan.form,
        items: plan.items,
        answerBytes: bytes,
        service: serviceFigures,
        limit: limitFigures,
        peer: peerFigures,
        peerCompared: null,
        ratioToLimit: NaN,
        ratioToPeer: NaN,
      });
      log(
        `  limit ${round(limitFigures.figures?.rps ?? NaN, 0)} req/s, service ${round(serviceFigures.figures?.rps ?? NaN, 0)} req/s ` +
          `(p99 ${serviceFigures.figures?.latencyMs.p99} ms), peer ${round(peerFigures.figures?.rps ?? NaN, 0)} req/s`,
      );
    }
    // HTTP GET and POST have no peer figure of their own: they are compared with the peer's SOAP 1.1 figure of the same folder.
    const peerSoap11 = cases.find((c) => c.id === 'soap11-100')?.peer.figures?.rps;
    const finished = cases.map((c) => {
      const serviceRps = c.service.figures?.rps ?? NaN;
      const peerCompared =
        c.peer.figures !== null
          ? { rps: c.peer.figures.rps, from: FORM_NAMES[c.form] }
          : peerSoap11 !== undefined
            ? { rps: peerSoap11, from: `${FORM_NAMES.soap11} (no ${FORM_NAMES[c.form]} in soap)` }
            : null;
      return {
        ...c,
        peerCompared,
        ratioToLimit: serviceRps / (c.limit.figures?.rps ?? NaN),
        ratioToPeer: peerCompared ? serviceRps / peerCompared.rps : NaN,
      };
    });
    return { connections: options.connections, seconds: options.seconds, warmupSeconds: options.warmupSeconds, cases: finished };
  } finally {
    await Promise.all([service.stop(), limit?.stop(), peer?.stop()]);
  }
}
