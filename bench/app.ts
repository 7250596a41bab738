/**
 * Section 5: the web app in headless chromium (Debian's /usr/bin/chromium, as the e2e tests use),
 * built by `vite build` into the run folder and served by `fss serve` on the populated database.
 * - Initial JavaScript: every script the browser fetches to show a folder page (the entry and
 *   whatever it loads before the list is shown), gzip-compressed (zlib level 6, what a server's
 *   on-the-fly gzip usually uses), summed.
 * - First render of the 100,000-item folder: a fresh browser context (nothing cached), already
 *   logged in (the session in sessionStorage, as after Login), opens /folder/<id>; the time from
 *   navigation start to the frame after the first row of the list is in the page. The GetFiles
 *   request's Resource Timing splits it: until its last byte (the service and the transfer), and
 *   after (parsing the XML and rendering, in the page); the app reads a listing as it arrives, so
 *   the first row may be on screen before the last byte.
 * - Scrolling it from top to bottom: the list's scrollTop set once per animation frame, (a) in
 *   `jumpSteps` equal jumps from the top to the very end (dragging the scroll bar: every frame
 *   shows new rows), then (b) 100 px per frame for `smoothFrames` frames (a wheel or a flick).
 *   Long tasks (the Long Tasks API: any task over 50 ms on the page's main thread) are counted
 *   during both; the goal is none. Frame intervals are kept too.
 */
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { login, type Session } from './calls';
import { PASSWORD, BENCH_ACCOUNT, type Manifest } from './populate';
import { startService } from './service';
import { log, median, percentile, ROOT, round, run } from './util';

export interface AppOptions {
  readonly dataDir: string;
  readonly runDir: string;
  readonly manifest: Manifest;
  readonly renders: number;
  readonly jumpSteps: number;
  readonly smoothFrames: number;
}

export interface ScrollFigures {
  readonly frames: number;
  readonly longTasks: number;
  /** Longest task over 50 ms, ms; 0 when there was none. */
  readonly longestTaskMs: number;
  readonly longAnimationFrames: number;
  readonly frameP50Ms: number;
  readonly frameP99Ms: number;
  readonly frameMaxMs: number;
  readonly seconds: number;
}

export interface AppResult {
  readonly chromium: string;
  readonly initialJs: { readonly files: Array<{ readonly url: string; readonly bytes: number; readonly gzipBytes: number }>; readonly bytes: number; readonly gzipBytes: number };
  readonly firstRender: {
    readonly ms: number[];
    readonly medianMs: number;
    readonly worstMs: number;
    readonly domMs: number[];
    /** Where the time went, per render: the GetFiles request (from navigation start: sent, first byte, last byte; Resource Timing), then the page. */
    readonly listing: Array<{ readonly sentMs: number; readonly firstByteMs: number; readonly lastByteMs: number; readonly afterLastByteMs: number }>;
  };
  readonly scroll: { readonly jump: ScrollFigures; readonly smooth: ScrollFigures };
}

/** Debian's Chromium with the e2e tests' flags (playwright.config.ts). */
export const LAUNCH = {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
};

/** Marks, in the page, when the first row of a list appears (DOM) and the frame after it. */
const WATCH_FIRST_ROW = `
  window.__bench = { domMs: null, frameMs: null };
  const observer = new MutationObserver(() => {
    if (window.__bench.domMs !== null || !document.querySelector('[role="option"]')) return;
    window.__bench.domMs = performance.now();
    observer.disconnect();
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { window.__bench.frameMs = performance.now(); };
      channel.port2.postMessage(0);
    });
  });
  observer.observe(document, { childList: true, subtree: true });
`;

export async function loggedInContext(browser: Browser, baseURL: string, session: Session): Promise<BrowserContext> {
  // bypassCSP: the app's policy forbids eval, which the measuring scripts below are sent as.
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 800 }, bypassCSP: true });
  const stored = JSON.stringify({ uid: session.uid, token: session.token, key: session.key, expires: session.expires ?? '', account: BENCH_ACCOUNT });
  await context.addInitScript(`if (!sessionStorage.getItem('fss.session')) sessionStorage.setItem('fss.session', ${JSON.stringify(stored)});`);
  return context;
}

interface PageScroll {
  readonly frames: number;
  readonly longTasks: number;
  readonly longestTaskMs: number;
  readonly longAnimationFrames: number;
  readonly seconds: number;
  readonly intervals: number[];
  readonly lastRow: number;
}

/**
 * Runs in the page (as plain JavaScript text: the function is not compiled by this file's
 * loader): scrolls the list as described above, and reports long tasks and frame times.
 */
const SCROLL_IN_PAGE = `async ({ mode, steps }) => {
  const list = document.querySelector('[role="listbox"]');
  const tasks = [];
  const frames = [];
  let loaf = 0;
  const longTasks = new PerformanceObserver((entries) => tasks.push(...entries.getEntries().map((e) => e.duration)));
  longTasks.observe({ type: 'longtask' });
  let loafObserver = null;
  try {
    loafObserver = new PerformanceObserver((entries) => (loaf += entries.getEntries().length));
    loafObserver.observe({ type: 'long-animation-frame' });
  } catch {
    loafObserver = null;
  }
  const nextFrame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const started = performance.now();
  let last = await nextFrame();
  const end = list.scrollHeight - list.clientHeight;
  for (let i = 1; i <= steps; i++) {
    list.scrollTop = mode === 'jump' ? Math.round((end * i) / steps) : Math.min(end, list.scrollTop + 100);
    const now = await nextFrame();
    frames.push(now - last);
    last = now;
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  longTasks.disconnect();
  if (loafObserver) loafObserver.disconnect();
  const rows = [...document.querySelectorAll('[role="option"]')].map((row) => Number(row.getAttribute('aria-posinset')));
  return {
    frames: frames.length,
    longTasks: tasks.length,
    longestTaskMs: tasks.length ? Math.max(...tasks) : 0,
    longAnimationFrames: loaf,
    seconds: (performance.now() - started) / 1000,
    intervals: frames,
    lastRow: rows.length ? Math.max(...rows) : 0,
  };
}`;

async function scrollList(page: Page, mode: 'jump' | 'smooth', steps: number): Promise<PageScroll> {
  return (await page.evaluate(`(${SCROLL_IN_PAGE})(${JSON.stringify({ mode, steps })})`)) as PageScroll;
}

let built: Promise<string> | undefined;

/** The app, built once per run by `vite build` into the run folder; answers the folder. */
export function buildWebApp(runDir: string): Promise<string> {
  const webRoot = path.join(runDir, 'web');
  built ??= (async () => {
    log('app: vite build');
    await run(process.execPath, [path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--outDir', webRoot, '--emptyOutDir', '--logLevel', 'warn'], { cwd: ROOT });
    return webRoot;
  })();
  return built;
}

export async function measureApp(options: AppOptions): Promise<AppResult> {
  const { manifest } = options;
  const webRoot = await buildWebApp(options.runDir);
  const service = await startService({ dataDir: options.dataDir, webRoot, logFile: path.join(options.runDir, 'logs', 'app-service.log') });
  const browser = await chromium.launch(LAUNCH);
  try {
    const session = await login(service.url, BENCH_ACCOUNT, PASSWORD);

    // ---- initial JavaScript, on the 100-item folder
    const context = await loggedInContext(browser, service.url, session);
    const page = await context.newPage();
    const scripts: Array<Promise<{ url: string; bytes: number; gzipBytes: number }>> = [];
    page.on('response', (response) => {
      if (response.request().resourceType() !== 'script') return;
      scripts.push(
        response.body().then((body) => ({ url: new URL(response.url()).pathname, bytes: body.length, gzipBytes: gzipSync(body, { level: 6 }).length })),
      );
    });
    await page.goto(`/folder/${manifest.bench.list100}`);
    await page.locator('[role="option"]').first().waitFor();
    await page.waitForLoadState('networkidle');
    const files = await Promise.all(scripts);
    const initialJs = { files, bytes: files.reduce((s, f) => s + f.bytes, 0), gzipBytes: files.reduce((s, f) => s + f.gzipBytes, 0) };
    await context.close();
    log(`app: initial JavaScript ${round(initialJs.gzipBytes / 1024)} KiB gzipped (${files.length} files)`);

    // ---- first render of 100,000 items, each in a fresh context
    const ms: number[] = [];
    const domMs: number[] = [];
    const listing: AppResult['firstRender']['listing'] = [];
    let scroll: AppResult['scroll'] | null = null;
    for (let i = 0; i < options.renders; i++) {
      const ctx = await loggedInContext(browser, service.url, session);
      await ctx.addInitScript(WATCH_FIRST_ROW);
      const p = await ctx.newPage();
      await p.goto(`/folder/${manifest.bench.list100k}`, { waitUntil: 'commit' });
      await p.waitForFunction('window.__bench && window.__bench.frameMs !== null', undefined, { timeout: 120_000 });
      const marks = (await p.evaluate('window.__bench')) as { domMs: number; frameMs: number };
      const setSize = await p.locator('[role="option"]').first().getAttribute('aria-setsize');
      if (setSize !== '100000') throw new Error(`the big folder's list says ${setSize} items`);
      ms.push(marks.frameMs);
      domMs.push(marks.domMs);
      const timing = (await p.evaluate(
        `performance.getEntriesByType('resource').filter((e) => e.name.includes('/GetFiles')).map((e) => ({ sent: e.startTime, first: e.responseStart, last: e.responseEnd }))`,
      )) as Array<{ sent: number; first: number; last: number }>;
      const request = timing[timing.length - 1];
      if (request) listing.push({ sentMs: request.sent, firstByteMs: request.first, lastByteMs: request.last, afterLastByteMs: marks.frameMs - request.last });
      if (i === options.renders - 1) {
        // Scrolling, on the last page opened; the list settles first.
        await p.waitForTimeout(1_000);
        const jump = await scrollList(p, 'jump', options.jumpSteps);
        if (jump.lastRow !== 100_000) throw new Error(`after scrolling to the end, the last row shown is ${jump.lastRow}`);
        await p.evaluate(`document.querySelector('[role="listbox"]').scrollTop = 0`);
        await p.waitForTimeout(500);
        const smooth = await scrollList(p, 'smooth', options.smoothFrames);
        const figures = (r: PageScroll): ScrollFigures => {
          const sorted = [...r.intervals].sort((a, b) => a - b);
          return {
            frames: r.frames,
            longTasks: r.longTasks,
            longestTaskMs: r.longestTaskMs,
            longAnimationFrames: r.longAnimationFrames,
            frameP50Ms: percentile(sorted, 50),
            frameP99Ms: percentile(sorted, 99),
            frameMaxMs: sorted[sorted.length - 1] ?? NaN,
            seconds: r.seconds,
          };
        };
        scroll = { jump: figures(jump), smooth: figures(smooth) };
      }
      await ctx.close();
    }
    const firstRender = { ms, medianMs: median(ms), worstMs: Math.max(...ms), domMs, listing };
    log(`app: first render of 100,000 items: median ${round(firstRender.medianMs, 0)} ms (${ms.map((m) => round(m, 0)).join(', ')})`);
    log(
      `app: scrolling: ${scroll!.jump.longTasks + scroll!.smooth.longTasks} long tasks, ` +
        `longest ${round(Math.max(scroll!.jump.longestTaskMs, scroll!.smooth.longestTaskMs), 0)} ms`,
    );
    return { chromium: browser.version(), initialJs, firstRender, scroll: scroll! };
  } finally {
    await browser.close();
    await service.stop();
  }
}
