/**
 * Section 3: big folders, on the populated database.
 * - GetFiles of the 100,000-item folder (SOAP 1.1 and HTTP POST, the web app's form): time to the
 *   last byte at the client, and the growth of the service's resident memory during the call (its
 *   peak, VmHWM, reset before each call, less its RSS before the call).
 * - FileSearch over the 1,000,000 files of the search account (HTTP POST, as the web app calls
 *   it): one call after another on one connection, every keyword of the manifest `rounds` times
 *   in a shuffled order; p50 and p99 of the time to the last byte, overall and by kind of keyword.
 * - FolderAndFileDelete (to the bin) and FolderAndFileRestore of the folder with 100,000
 *   descendants: time of each call.
 * - Copy of that folder (issue 22's goal), with FSS_MAX_COPY_ITEMS raised to let it: time of the
 *   call; the copy then goes to the bin.
 */
import path from 'node:path';
import { callOk, countItems, login, operation, resultOf, send, signedRequest, attribute, type Form } from './calls';
import { PASSWORD, BENCH_ACCOUNT, SEARCH_ACCOUNT, type KeywordKind, type Manifest } from './populate';
import { startService, type ChildServer } from './service';
import { log, median, percentile, round, seededRandom } from './util';

export interface BigOptions {
  readonly dataDir: string;
  readonly runDir: string;
  readonly manifest: Manifest;
  /** GetFiles calls of the big folder, per form (after one warm-up call). */
  readonly listingCalls: number;
  /** Times each search keyword is searched. */
  readonly searchRounds: number;
  readonly deleteRestoreRounds: number;
  readonly profileDir?: string;
}

export interface ListingFigures {
  readonly form: Form;
  readonly items: number;
  readonly answerBytes: number;
  /** Time to last byte of each measured call (the warm-up call first, then the measured ones). */
  readonly warmupMs: number;
  readonly ms: number[];
  readonly medianMs: number;
  readonly worstMs: number;
  /** Largest growth of resident memory during a call (warm-up included), bytes. */
  readonly memoryGrowthBytes: number;
  readonly rssBeforeBytes: number;
}

export interface SearchFigures {
  readonly files: number;
  readonly folders: number;
  readonly calls: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly byKind: Record<string, { keywords: string[]; calls: number; p50Ms: number; p99Ms: number; maxMs: number; hits: number[] }>;
}

export interface DeleteRestoreFigures {
  readonly descendants: number;
  readonly deleteMs: number[];
  readonly restoreMs: number[];
  readonly copyMs: number;
}

export interface BigResult {
  readonly listing: ListingFigures[];
  readonly search: SearchFigures;
  readonly deleteRestore: DeleteRestoreFigures;
  readonly serviceRssBytes: { readonly start: number; readonly end: number };
}

/** Calls once, sampling the service's memory; answers the time to the last byte and the growth. */
async function timedCall(service: ChildServer, request: ReturnType<typeof signedRequest>, expectItems: number) {
  const before = service.rss();
  const peakReset = service.resetPeak();
  let sampled = before;
  const sampler = setInterval(() => (sampled = Math.max(sampled, service.rss())), 5);
  try {
    const answer = await send(service.url, request);
    const body = answer.body.toString('utf8');
    const items = countItems(body);
    if (answer.status !== 200 || items !== expectItems) throw new Error(`GetFiles of the big folder: ${answer.status}, ${items} items: ${body.slice(0, 300)}`);
    const peak = Math.max(sampled, peakReset ? service.peak() : 0, service.rss());
    return { ms: answer.ms, growth: peak - before, before, bytes: answer.body.length };
  } finally {
    clearInterval(sampler);
  }
}

export async function measureBig(options: BigOptions): Promise<BigResult> {
  const { manifest } = options;
  const service = await startService({
    dataDir: options.dataDir,
    logFile: path.join(options.runDir, 'logs', 'big-service.log'),
    profileDir: options.profileDir,
    env: { FSS_MAX_COPY_ITEMS: String(manifest.bench.treeDescendants + 1_000) },
  });
  const rssStart = service.rss();
  try {
    const bench = await login(service.url, BENCH_ACCOUNT, PASSWORD);
    const GetFiles = operation('UserService', 'GetFiles');

    // ---- GetFiles of 100,000 items
    const listing: ListingFigures[] = [];
    for (const form of ['soap11', 'post'] as const) {
      const request = signedRequest(form, GetFiles, bench, { dir: String(manifest.bench.list100k), order: 'name', desc: '0' });
      const warm = await timedCall(service, request, 100_000);
      const runs = [];
      for (let i = 0; i < options.listingCalls; i++) runs.push(await timedCall(service, request, 100_000));
      const ms = runs.map((r) => r.ms);
      const figures: ListingFigures = {
        form,
        items: 100_000,
        answerBytes: warm.bytes,
        warmupMs: warm.ms,
        ms,
        medianMs: median(ms),
        worstMs: Math.max(...ms),
        memoryGrowthBytes: Math.max(warm.growth, ...runs.map((r) => r.growth)),
        rssBeforeBytes: warm.before,
      };
      listing.push(figures);
      log(`big folders: GetFiles of 100,000 items (${form}): median ${round(figures.medianMs, 0)} ms, worst ${round(figures.worstMs, 0)} ms, memory +${round(figures.memoryGrowthBytes / 2 ** 20)} MiB`);
    }

    // ---- FileSearch over 1,000,000 files
    const searcher = await login(service.url, SEARCH_ACCOUNT, PASSWORD);
    const FileSearch = operation('UserService', 'FileSearch');
    const calls: Array<{ keyword: string; kind: KeywordKind }> = [];
    for (let round = 0; round < options.searchRounds; round++) calls.push(...manifest.search.keywords);
    const rand = seededRandom(7);
    for (let i = calls.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [calls[i], calls[j]] = [calls[j], calls[i]];
    }
    // One untimed call per keyword first: the figures are of a running service, not of its first seconds.
    const hits = new Map<string, number>();
    for (const k of manifest.search.keywords) {
      const answer = await callOk(service.url, signedRequest('post', FileSearch, searcher, { order: 'name', desc: '0', keyword: k.keyword }));
      hits.set(k.keyword, Number(attribute(resultOf(answer.body.toString('utf8')), 'count')));
    }
    const timings: Array<{ kind: KeywordKind; keyword: string; ms: number }> = [];
    for (const call of calls) {
      const answer = await callOk(service.url, signedRequest('post', FileSearch, searcher, { order: 'name', desc: '0', keyword: call.keyword }));
      timings.push({ kind: call.kind, keyword: call.keyword, ms: answer.ms });
    }
    const summarize = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] };
    };
    const byKind: SearchFigures['byKind'] = {};
    for (const kind of [...new Set(manifest.search.keywords.map((k) => k.kind))]) {
      const keywords = manifest.search.keywords.filter((k) => k.kind === kind).map((k) => k.keyword);
      const of = timings.filter((t) => t.kind === kind).map((t) => t.ms);
      byKind[kind] = { keywords, calls: of.length, ...summarize(of), hits: keywords.map((k) => hits.get(k) ?? NaN) };
    }
    const search: SearchFigures = { files: manifest.search.files, folders: manifest.search.folders, calls: timings.length, ...summarize(timings.map((t) => t.ms)), byKind };
    log(`big folders: FileSearch over 1,000,000 files: p50 ${round(search.p50Ms)} ms, p99 ${round(search.p99Ms)} ms (${search.calls} calls)`);

    // ---- delete and restore of 100,000 descendants
    const Delete = operation('FileService', 'FolderAndFileDelete');
    const Restore = operation('FileService', 'FolderAndFileRestore');
    const deleteMs: number[] = [];
    const restoreMs: number[] = [];
    const tree = String(manifest.bench.tree100k);
    for (let i = 0; i < options.deleteRestoreRounds; i++) {
      deleteMs.push((await callOk(service.url, signedRequest('post', Delete, bench, { dirids: tree, fids: '', is_real: '0' }))).ms);
      const restored = await callOk(service.url, signedRequest('post', Restore, bench, { dirids: tree, fids: '' }));
      restoreMs.push(restored.ms);
      const back = resultOf(restored.body.toString('utf8'));
      if (!back.includes(`id="${tree}"`) || !back.includes('name="Tree"')) throw new Error(`the restore did not bring the tree back as it was: ${back.slice(0, 300)}`);
    }
    const check = await callOk(service.url, signedRequest('post', GetFiles, bench, { dir: String(manifest.bench.tree100k), order: 'name', desc: '0' }));
    if (countItems(check.body.toString('utf8')) !== 100) throw new Error('the restored tree does not hold its 100 folders');

    // ---- copy of 100,000 descendants, into a new folder that then goes to the bin
    const made = await callOk(service.url, signedRequest('post', operation('FileService', 'FolderAdd'), bench, { dirid: '0', name: `Copy ${Date.now()}` }));
    const into = attribute(resultOf(made.body.toString('utf8')).split('<folder ')[1] ?? '', 'id');
    if (!into) throw new Error('FolderAdd gave no folder to copy into');
    const copyMs = (await callOk(service.url, signedRequest('post', operation('FileService', 'Copy'), bench, { dirids: tree, fids: '', todir: into }))).ms;
    await callOk(service.url, signedRequest('post', Delete, bench, { dirids: into, fids: '', is_real: '0' }));
    log(`big folders: delete ${deleteMs.map((m) => round(m, 0)).join(', ')} ms; restore ${restoreMs.map((m) => round(m, 0)).join(', ')} ms; copy ${round(copyMs, 0)} ms`);

    return {
      listing,
      search,
      deleteRestore: { descendants: manifest.bench.treeDescendants, deleteMs, restoreMs, copyMs },
      serviceRssBytes: { start: rssStart, end: service.rss() },
    };
  } finally {
    await service.stop();
  }
}
