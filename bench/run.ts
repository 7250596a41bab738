/**
 * `npm run bench`: measures, on this machine, what users feel (issue 8), and writes
 * bench/results/latest.md and latest.json. bench/README.md explains every figure.
 *
 *   npm run bench                 the full run (about 15–20 minutes on 2 cores)
 *   npm run bench -- --quick      shorter measurements, same data (a few minutes once the
 *                                 populated database is cached)
 *   options:
 *     --only=throughput,big,content,stalls,app,upload,thumbnails,zip,quota   some sections (results go to .tmp/bench-run/ only)
 *     --profile                    run the service under --cpu-prof and summarize the profiles
 *                                  (results go to .tmp/bench-run/ only: profiling slows it)
 *     --content-mib=N              size of the content transfers (default 1024)
 *     --note="…"                   a note printed with the results (e.g. what else ran)
 *     --no-write                   do not write bench/results/
 */
import os from 'node:os';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildServerBundle } from '../server/scripts/build-server';
import { measureApp } from './app';
import { measureAppUpload } from './app-upload';
import { measureBig } from './big';
import { measureContent } from './content';
import { measureStalls } from './stalls';
import { ensureDataset } from './populate';
import { judge, machine, markdown, type Results } from './report';
import { profileFiles, summarize, summaryMarkdown } from './profile';
import { measureThroughput } from './throughput';
import { measureThumbnails } from './thumbnails';
import { measureQuota } from './quota';
import { measureZip } from './zip';
import { BENCH_DIR, HAS_TASKSET, log, MiB, pinSelf, round, RUN_DIR } from './util';

const SECTIONS = ['throughput', 'big', 'content', 'stalls', 'app', 'upload', 'thumbnails', 'zip', 'quota'] as const;
type Section = (typeof SECTIONS)[number];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    full: { type: 'boolean', default: false },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
    'content-mib': { type: 'string' },
    note: { type: 'string', multiple: true },
    'no-write': { type: 'boolean', default: false },
  },
  strict: true,
});

const quick = values.quick === true && values.full !== true;
const only = values.only ? (values.only.split(',').map((s) => s.trim()) as Section[]) : [...SECTIONS];
for (const s of only) if (!SECTIONS.includes(s)) throw new Error(`--only: unknown section "${s}" (one of ${SECTIONS.join(', ')})`);
const contentBytes = values['content-mib'] ? Number(values['content-mib']) * MiB : 1024 * MiB;
if (!Number.isSafeInteger(contentBytes) || contentBytes <= 0) throw new Error('--content-mib must be a whole number of MiB');
const writeResults = !values['no-write'] && !values.profile && only.length === SECTIONS.length;

const settings = quick
  ? { seconds: 5, warmupSeconds: 2, listingCalls: 2, searchRounds: 3, deleteRestoreRounds: 1, floodDownloads: 3, stallRounds: 1, renders: 2, jumpSteps: 300, smoothFrames: 300, uploadRounds: 1, thumbnailsMade: 60, previews: 5, quotaCalls: 200 }
  : { seconds: 15, warmupSeconds: 5, listingCalls: 5, searchRounds: 5, deleteRestoreRounds: 3, floodDownloads: 5, stallRounds: 3, renders: 5, jumpSteps: 1000, smoothFrames: 1200, uploadRounds: 3, thumbnailsMade: 200, previews: 5, quotaCalls: 500 };

async function main(): Promise<void> {
  const started = performance.now();
  const date = new Date().toISOString();
  const pinned = HAS_TASKSET && os.cpus().length >= 2;
  // The clients (load generator, the calls timed here) on CPU 1; the servers are started on CPU 0.
  pinSelf('1');
  const info = machine(pinned);
  log(`${quick ? 'quick' : 'full'} run on ${info.cpuModel} × ${info.cpus}, load average ${info.loadAverage.start.join(' ')}`);

  const dataset = await ensureDataset();
  // As `npm start` runs it: bin/fss.mjs runs the bundle while it is newer than the sources.
  log('building the server (npm run build:server)');
  await buildServerBundle();
  await rm(RUN_DIR, { recursive: true, force: true });
  await mkdir(path.join(RUN_DIR, 'logs'), { recursive: true });
  const dataDir = path.join(RUN_DIR, 'data');
  await cp(dataset.dataDir, dataDir, { recursive: true });
  const profileDir = (section: string) => (values.profile ? path.join(RUN_DIR, 'profiles', section) : undefined);
  const common = { dataDir, runDir: RUN_DIR, manifest: dataset.manifest };

  const errors: Record<string, string> = {};
  const partial: { -readonly [K in Section]?: Results[K] } = {};
  const attempt = async <T>(section: Section, work: () => Promise<T>): Promise<T | undefined> => {
    if (!only.includes(section)) return undefined;
    log(`— ${section}`);
    try {
      return await work();
    } catch (error) {
      errors[section] = error instanceof Error ? (error.stack ?? error.message) : String(error);
      log(`${section} failed: ${errors[section]}`);
      return undefined;
    }
  };
  partial.throughput = await attempt('throughput', () =>
    measureThroughput({ ...common, seconds: settings.seconds, warmupSeconds: settings.warmupSeconds, connections: 32, profileDir: profileDir('throughput') }),
  );
  partial.big = await attempt('big', () =>
    measureBig({ ...common, listingCalls: settings.listingCalls, searchRounds: settings.searchRounds, deleteRestoreRounds: settings.deleteRestoreRounds, profileDir: profileDir('big') }),
  );
  partial.content = await attempt('content', () => measureContent({ ...common, bytes: contentBytes, floodDownloads: settings.floodDownloads, profileDir: profileDir('content') }));
  // Before the app: it changes the bench account (the folder with 100,000 descendants goes for good).
  partial.stalls = await attempt('stalls', () => measureStalls({ ...common, rounds: settings.stallRounds, profileDir: profileDir('stalls') }));
  // The browser gets both CPUs, as on a user's machine; the service stays on CPU 0.
  pinSelf('0-' + (os.cpus().length - 1));
  partial.app = await attempt('app', () => measureApp({ ...common, renders: settings.renders, jumpSteps: settings.jumpSteps, smoothFrames: settings.smoothFrames }));
  // The browser's upload (issue 19), on both CPUs too.
  partial.upload = await attempt('upload', () => measureAppUpload({ ...common, bytes: contentBytes, rounds: settings.uploadRounds }));
  // Thumbnails of 1,000 photos (issue 21): the browser on both CPUs, the service on CPU 0.
  partial.thumbnails = await attempt('thumbnails', () => measureThumbnails({ ...common, makeCount: settings.thumbnailsMade, previewCount: settings.previews, profileDir: profileDir('thumbnails') }));
  // Last, as they add files to the bench account; the client on CPU 1 again, as for content.
  pinSelf('1');
  partial.zip = await attempt('zip', () => measureZip({ ...common, largeEntry: !quick }));
  partial.quota = await attempt('quota', () => measureQuota({ ...common, calls: settings.quotaCalls }));

  const notes = [
    ...(values.note ?? []),
    ...(values.profile ? ['profiled run (--profile): the service ran under --cpu-prof, which slows it'] : []),
    ...(only.length < SECTIONS.length ? [`only: ${only.join(', ')}`] : []),
  ];
  const base = {
    date,
    mode: quick ? ('quick' as const) : ('full' as const),
    machine: { ...info, chromium: partial.app?.chromium ?? partial.upload?.chromium ?? partial.thumbnails?.chromium, loadAverage: { ...info.loadAverage, end: os.loadavg().map((v) => round(v, 2)) } },
    notes,
    seconds: (performance.now() - started) / 1000,
    dataset: { key: dataset.manifest.key, files: dataset.manifest.totals.files, folders: dataset.manifest.totals.folders, sqliteBytes: dataset.manifest.totals.sqliteBytes },
    ...partial,
    errors,
  };
  const results: Results = { ...base, goals: judge(base) };
  const md = markdown(results);
  const outDir = writeResults ? path.join(BENCH_DIR, 'results') : RUN_DIR;
  await mkdir(outDir, { recursive: true });
  const name = writeResults ? 'latest' : 'results';
  await writeFile(path.join(outDir, `${name}.json`), JSON.stringify(results, null, 2) + '\n');
  await writeFile(path.join(outDir, `${name}.md`), md + '\n');
  process.stdout.write('\n' + md + '\n');
  log(`results written to ${path.relative(process.cwd(), path.join(outDir, name))}.{md,json}`);

  if (values.profile) {
    const profiles = profileFiles(path.join(RUN_DIR, 'profiles'));
    const summary = profiles.map((file) => summaryMarkdown(summarize(file))).join('\n');
    await writeFile(path.join(RUN_DIR, 'profile-summary.md'), summary);
    process.stdout.write('\n' + summary + '\n');
    log(`profiles: ${path.relative(process.cwd(), path.join(RUN_DIR, 'profiles'))}; summary in ${path.relative(process.cwd(), path.join(RUN_DIR, 'profile-summary.md'))}`);
  }
  if (Object.keys(errors).length > 0) process.exitCode = 1;
}

await main();
