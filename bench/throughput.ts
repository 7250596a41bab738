/**
 * Section 2: call throughput. Signed GetFiles in each of the four forms, against three servers in
 * turn, in the same run:
 * - service: `fss serve` on the populated database (token, sign and listing checked and read as in
 *   production);
 * - limit: bench/limit-server.ts, answering the bytes the service answered with the least work;
 * - peer: bench/peer-server.ts, the `soap` package serving the operation from the service's WSDL.
 * Each server is pinned to CPU 0, the load generator (wrk, bench/load.ts) to CPU 1.
 *
 * Two workloads per form:
 * - repeated: one signed call of the 100-item folder, sent again and again (a client polling a folder);
 * - varied: 2,000 distinct request texts: 200 sessions of the account, 10 folders of 100 items,
 *   every sort key and direction, so that no cache of request texts or of one answer serves the run.
 * And the 1,000-item folder, repeated, in SOAP 1.1.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { apiLogin, countItems, FORM_NAMES, operation, resultCode, send, signedRequest, type Form, type RawRequest, type Session } from './calls';
import { GENERATOR, runLoad, type LoadFigures } from './load';
import { limitKey, type LimitAnswer } from './limit-server';
import { BENCH_ACCOUNT, type Manifest } from './populate';
import { startChild, startService, tsNodeArgs, type ChildServer } from './service';
import { FSS_BIN, log, ROOT, round, run, seededRandom } from './util';

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
export type Workload = 'repeated' | 'varied';

/** A figure is valid when the server under test used at least this share of its CPU (else the generator or something else limited it). */
export const SATURATED_CPU = 0.9;

export interface Measured {
  readonly figures: LoadFigures | null;
  /** Why there is no figure, or what is wrong with it. */
  readonly note?: string;
  /** Every answer had the expected size and status, and the server used ≥ 90 % of its CPU. */
  readonly valid: boolean;
}

export interface ThroughputCase {
  readonly id: string;
  readonly label: string;
  readonly form: Form;
  readonly items: number;
  readonly workload: Workload;
  /** Distinct request texts sent. */
  readonly distinctRequests: number;
  /** Size of the service's answer bodies, bytes (smallest and largest of the workload). */
  readonly answerBytes: { readonly min: number; readonly max: number };
  readonly service: Measured;
  readonly limit: Measured;
  readonly peer: Measured;
  /** The peer figure the goal compares with (the peer's own in SOAP; its SOAP 1.1 figure for HTTP GET/POST). */
  readonly peerCompared: { readonly rps: number; readonly from: string } | null;
  readonly ratioToLimit: number;
  readonly ratioToPeer: number;
}

export interface ThroughputResult {
  readonly generator: string;
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly cases: ThroughputCase[];
  /** The service's peak RSS over the varied workloads, bytes. */
  readonly variedPeakRssBytes: number;
}

const ORDERS = ['name', 'time', 'size', 'share', 'link'] as const;
const SESSIONS = 200;
const VARIED_REQUESTS = 2_000;

interface Call {
  readonly session: number;
  readonly dir: number;
  readonly order: (typeof ORDERS)[number];
  readonly desc: '0' | '1';
}

interface Plan {
  readonly id: string;
  readonly form: Form;
  readonly items: number;
  readonly workload: Workload;
  readonly calls: readonly Call[];
}

/**
 * The varied workload: session s sends ten of the hundred (folder, order, direction) listings, each
 * session a different ten, so that all 2,000 texts differ; in a shuffled order, so that consecutive
 * requests are of different sessions and listings, as many users' would be.
 */
function variedCalls(folders: readonly number[]): Call[] {
  const listings = folders.flatMap((dir) => ORDERS.flatMap((order) => (['0', '1'] as const).map((desc) => ({ dir, order, desc }))));
  const calls: Call[] = [];
  for (let session = 0; session < SESSIONS; session++) {
    for (let j = 0; j < VARIED_REQUESTS / SESSIONS; j++) calls.push({ session, ...listings[(session * 10 + j) % listings.length] });
  }
  const random = seededRandom(8);
  for (let i = calls.length - 1; i > 0; i--) {
    const k = Math.floor(random() * (i + 1));
    [calls[i], calls[k]] = [calls[k], calls[i]];
  }
  return calls;
}

/** Checks load figures: every answer 2xx, no errors, each of an expected size, the server saturated. */
function check(figures: LoadFigures, bytes: { min: number; max: number }, slack: number): Measured {
  const problems: string[] = [];
  if (figures.requests === 0) problems.push('no answer');
  if (figures.non2xx > 0) problems.push(`${figures.non2xx} non-2xx answers`);
  if (figures.errors > 0) problems.push(`${figures.errors} errors`);
  if (figures.timeouts > 0) problems.push(`${figures.timeouts} timeouts`);
  if (figures.requests > 0 && (figures.bytesPerResponse < bytes.min || figures.bytesPerResponse > bytes.max * slack + 1_000)) {
    problems.push(`answers of ${Math.round(figures.bytesPerResponse)} bytes on average, expected ${bytes.min}–${bytes.max}`);
  }
  if (figures.cpu.server < SATURATED_CPU) problems.push(`the server used ${Math.round(figures.cpu.server * 100)} % of its CPU (< ${SATURATED_CPU * 100} %): not saturated`);
  return { figures, valid: problems.length === 0, note: problems.length ? problems.join('; ') : undefined };
}

/** Sessions of the bench account without a password hash each: an API key, then APILogin. */
async function sessions(dataDir: string, url: string, count: number): Promise<Session[]> {
  const key = (await run(process.execPath, [FSS_BIN, 'apikey', 'create', BENCH_ACCOUNT, '--label', 'bench'], { cwd: ROOT, env: { ...process.env, FSS_DATA_DIR: dataDir } }))
    .split('\n')
    .find((line) => /^\S{20,}$/.test(line.trim()));
  if (!key) throw new Error('fss apikey create printed no key');
  const out: Session[] = [];
  for (let i = 0; i < count; i++) out.push(await apiLogin(url, key.trim()));
  return out;
}

export async function measureThroughput(options: ThroughputOptions): Promise<ThroughputResult> {
  const { manifest } = options;
  const repeated: Call = { session: 0, dir: manifest.bench.list100, order: 'name', desc: '0' };
  const varied = variedCalls(manifest.bench.lists100);
  const plans: Plan[] = (['soap11', 'soap12', 'get', 'post'] as const).flatMap((form): Plan[] => [
    { id: `${form}-100`, form, items: 100, workload: 'repeated', calls: [repeated] },
    { id: `${form}-100-varied`, form, items: 100, workload: 'varied', calls: varied },
  ]);
  plans.push({ id: 'soap11-1000', form: 'soap11', items: 1000, workload: 'repeated', calls: [{ ...repeated, dir: manifest.bench.list1000 }] });

  const service = await startService({ dataDir: options.dataDir, logFile: path.join(options.runDir, 'logs', 'throughput-service.log'), profileDir: options.profileDir });
  let limit: ChildServer | null = null;
  let peer: ChildServer | null = null;
  try {
    const tokens = await sessions(options.dataDir, service.url, SESSIONS);
    const GetFiles = operation('UserService', 'GetFiles');
    const requestOf = (form: Form, call: Call) => signedRequest(form, GetFiles, tokens[call.session], { dir: String(call.dir), order: call.order, desc: call.desc });

    // Every listing of every plan, answered once by the service: checked, and given to the limit.
    const answers = new Map<string, LimitAnswer & { readonly bytes: number }>();
    const requests = new Map<string, RawRequest[]>();
    for (const plan of plans) {
      const list: RawRequest[] = [];
      for (const call of plan.calls) {
        const request = requestOf(plan.form, call);
        list.push(request);
        const key = limitKey(plan.form, 'GetFiles', String(call.dir), call.order, call.desc);
        if (answers.has(key)) continue;
        const answer = await send(service.url, request);
        const body = answer.body.toString('utf8');
        if (answer.status !== 200 || resultCode(body) !== 0 || countItems(body) !== plan.items) {
          throw new Error(`GetFiles ${plan.id} (${key}): ${answer.status}, ${countItems(body)} items: ${body.slice(0, 300)}`);
        }
        answers.set(key, { key, contentType: String(answer.headers['content-type']), body: answer.body.toString('base64'), bytes: answer.body.length });
      }
      requests.set(plan.id, list);
    }
    const bytesOf = (plan: Plan) => {
      const sizes = plan.calls.map((call) => answers.get(limitKey(plan.form, 'GetFiles', String(call.dir), call.order, call.desc))!.bytes);
      return { min: Math.min(...sizes), max: Math.max(...sizes) };
    };
    const answersFile = path.join(options.runDir, 'limit-answers.json');
    await writeFile(answersFile, JSON.stringify([...answers.values()].map(({ key, contentType, body }) => ({ key, contentType, body }))));
    const wsdlFile = path.join(options.runDir, 'UserService.wsdl');
    await writeFile(wsdlFile, (await send(service.url, { method: 'GET', path: '/UserService.asmx?WSDL', headers: {} })).body);

    limit = await startChild({ name: 'limit', cpus: '0', nodeArgs: tsNodeArgs('limit-server.ts', answersFile), logFile: path.join(options.runDir, 'logs', 'limit.log') });
    const peerLog = path.join(options.runDir, 'logs', 'peer.log');
    peer = await startChild({ name: 'peer', cpus: '0', nodeArgs: tsNodeArgs('peer-server.ts', options.dataDir, wsdlFile), logFile: peerLog });
    const peer12 = /soap12 on (\S+)/.exec(await readFile(peerLog, 'utf8'))?.[1];
    if (!peer12) throw new Error('the peer did not say where its SOAP 1.2 listener is');
    const peerUrl = (form: Form) => (form === 'soap11' ? peer!.url : peer12);

    // The limit and the peer answer each repeated call correctly before they are measured.
    const peerBytes = new Map<string, number>();
    for (const plan of plans) {
      const request = requests.get(plan.id)![0];
      const fromLimit = await send(limit.url, request);
      if (fromLimit.body.length !== bytesOf(plan).min && plan.workload === 'repeated') throw new Error(`the limit answered ${plan.id} with ${fromLimit.body.length} bytes`);
      if (plan.workload === 'repeated' && (plan.form === 'soap11' || plan.form === 'soap12')) {
        const fromPeer = await send(peerUrl(plan.form), request);
        const body = fromPeer.body.toString('utf8');
        if (fromPeer.status !== 200 || !/code="0"/.test(body) || countItems(body) !== plan.items) {
          throw new Error(`the peer answered ${plan.id}: ${fromPeer.status} ${body.slice(0, 300)}`);
        }
        peerBytes.set(plan.id, fromPeer.body.length);
      }
    }

    const load = { connections: options.connections, seconds: options.seconds, warmupSeconds: options.warmupSeconds };
    const cases: ThroughputCase[] = [];
    let variedPeak = 0;
    for (const plan of plans) {
      const list = requests.get(plan.id)!;
      const bytes = bytesOf(plan);
      const label = `${FORM_NAMES[plan.form]}, ${plan.items.toLocaleString('en-US')} items, ${plan.workload}`;
      log(`throughput: ${label}: limit`);
      const limitFigures = check(await runLoad(limit.url, limit.pid, list, load), bytes, 1.0);
      log(`throughput: ${label}: service`);
      if (plan.workload === 'varied') service.resetPeak();
      const serviceFigures = check(await runLoad(service.url, service.pid, list, load), bytes, 1.0);
      if (plan.workload === 'varied') variedPeak = Math.max(variedPeak, service.peak());
      let peerFigures: Measured;
      if (plan.workload === 'repeated' && (plan.form === 'soap11' || plan.form === 'soap12')) {
        log(`throughput: ${label}: peer`);
        const size = peerBytes.get(plan.id)!;
        peerFigures = check(await runLoad(peerUrl(plan.form), peer.pid, list, load), { min: size, max: size }, 1.01);
      } else {
        peerFigures = { figures: null, valid: false, note: plan.workload === 'varied' ? 'measured on the repeated call' : 'the soap package serves no HTTP GET or POST' };
      }
      cases.push({
        id: plan.id,
        label,
        form: plan.form,
        items: plan.items,
        workload: plan.workload,
        distinctRequests: serviceFigures.figures?.distinctRequests ?? list.length,
        answerBytes: bytes,
        service: serviceFigures,
        limit: limitFigures,
        peer: peerFigures,
        peerCompared: null,
        ratioToLimit: NaN,
        ratioToPeer: NaN,
      });
      const cpu = (m: Measured) => (m.figures ? `${Math.round(m.figures.cpu.server * 100)} % CPU, wrk ${Math.round(m.figures.cpu.generator * 100)} %` : '');
      log(
        `  limit ${round(limitFigures.figures?.rps ?? NaN, 0)} req/s (${cpu(limitFigures)}), service ${round(serviceFigures.figures?.rps ?? NaN, 0)} req/s ` +
          `(${cpu(serviceFigures)}; ${round(serviceFigures.figures?.serverCpuMicrosPerCall ?? NaN, 1)} µs CPU/call; p99 ${serviceFigures.figures?.latencyMs.p99} ms), ` +
          `peer ${round(peerFigures.figures?.rps ?? NaN, 0)} req/s`,
      );
    }
    // HTTP GET and POST have no peer figure of their own: they are compared with the peer's SOAP 1.1
    // figure; the varied workloads with the peer's repeated figure of their form.
    const peerOf = (id: string) => cases.find((c) => c.id === id)?.peer.figures?.rps;
    const finished = cases.map((c) => {
      const serviceRps = c.service.figures?.rps ?? NaN;
      const own = c.peer.figures?.rps ?? peerOf(`${c.form}-100`);
      const peerCompared =
        own !== undefined
          ? { rps: own, from: FORM_NAMES[c.form] + (c.peer.figures ? '' : ', repeated') }
          : peerOf('soap11-100') !== undefined
            ? { rps: peerOf('soap11-100')!, from: `${FORM_NAMES.soap11} (no ${FORM_NAMES[c.form]} in soap)` }
            : null;
      return { ...c, peerCompared, ratioToLimit: serviceRps / (c.limit.figures?.rps ?? NaN), ratioToPeer: peerCompared ? serviceRps / peerCompared.rps : NaN };
    });
    return {
      generator: GENERATOR,
      connections: options.connections,
      seconds: options.seconds,
      warmupSeconds: options.warmupSeconds,
      cases: finished,
      variedPeakRssBytes: variedPeak,
    };
  } finally {
    await Promise.all([service.stop(), limit?.stop(), peer?.stop()]);
  }
}
