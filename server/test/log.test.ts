import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { batchedLines, createLogger, LINE_BACKLOG_BYTES, LINE_BATCH_BYTES, LINE_BATCH_MS } from '../src/log';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A batched sink writing into an array, with its exit hook captured instead of registered. The
 * output takes `room` bytes per write (all of them by default), as a pipe whose reader lags does.
 */
function capture() {
  const writes: string[] = [];
  const output = { room: Infinity };
  let onExit: (() => void) | undefined;
  const sink = batchedLines(
    {
      write(bytes) {
        const taken = Math.min(bytes.length, output.room);
        if (taken > 0) writes.push(bytes.subarray(0, taken).toString());
        return taken;
      },
    },
    (flush) => (onExit = flush),
  );
  return { sink, writes, output, exit: () => onExit?.() };
}

describe('batched log lines', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  test('lines written within the batch time go out in one write, in order, each ending with a newline', () => {
    vi.useFakeTimers();
    const { sink, writes } = capture();
    sink('one');
    sink('two');
    sink('three');
    expect(writes).toEqual([]);
    vi.advanceTimersByTime(LINE_BATCH_MS);
    expect(writes).toEqual(['one\ntwo\nthree\n']);
  });

  test('a batch that reaches its byte bound is written at once', () => {
    vi.useFakeTimers();
    const { sink, writes } = capture();
    const line = 'x'.repeat(1023);
    for (let i = 0; i < LINE_BATCH_BYTES / 1024; i++) sink(line);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toHaveLength(LINE_BATCH_BYTES);
  });

  test('flush writes what is gathered now, and nothing when nothing is', () => {
    const { sink, writes } = capture();
    sink('before');
    sink.flush();
    sink.flush();
    expect(writes).toEqual(['before\n']);
  });

  test('the exit hook writes what is still gathered', () => {
    const { sink, writes, exit } = capture();
    sink('last words');
    exit();
    expect(writes).toEqual(['last words\n']);
  });

  test('an output that takes nothing holds nothing up: the lines wait, and go out in order once it takes them again', () => {
    vi.useFakeTimers();
    const { sink, writes, output } = capture();
    output.room = 0;
    for (let i = 0; i < 1000; i++) sink(`line ${i}`);
    vi.advanceTimersByTime(10 * LINE_BATCH_MS);
    expect(writes).toEqual([]);
    output.room = 100; // a reader that takes a little at a time: a batch is continued where it stopped
    vi.advanceTimersByTime(LINE_BATCH_MS);
    output.room = Infinity;
    sink('after');
    vi.advanceTimersByTime(LINE_BATCH_MS);
    expect(writes.join('')).toBe([...Array.from({ length: 1000 }, (_, i) => `line ${i}`), 'after'].map((line) => line + '\n').join(''));
  });

  test('past the backlog bound, lines are dropped, and a warn line counts them where they would have been', () => {
    vi.useFakeTimers();
    const { sink, writes, output } = capture();
    output.room = 0;
    const line = 'x'.repeat(1023);
    const fit = LINE_BACKLOG_BYTES / 1024;
    for (let i = 0; i < fit + 10; i++) sink(`${line}`);
    output.room = Infinity;
    vi.advanceTimersByTime(LINE_BATCH_MS);
    sink('after the drop');
    vi.advanceTimersByTime(LINE_BATCH_MS);
    const lines = writes.join('').split('\n').slice(0, -1);
    const kept = lines.filter((text) => text === line).length;
    expect(kept).toBeGreaterThan(fit - 80); // what fits beside the stalled batch
    expect(lines.slice(kept)).toHaveLength(2);
    const notice = JSON.parse(lines[kept]) as Record<string, unknown>;
    expect(notice).toMatchObject({ level: 'warn', event: 'log lines dropped', lines: fit + 10 - kept });
    expect(lines[kept + 1]).toBe('after the drop');
  });

  test('flushSync waits for an output that is full for a moment, and writes everything', () => {
    const { sink, writes, output } = capture();
    let tries = 0;
    Object.defineProperty(output, 'room', { get: () => (++tries > 5 ? Infinity : 0) }); // full for five tries
    for (let i = 0; i < 100; i++) sink(`line ${i}`);
    sink.flushSync();
    expect(tries).toBeGreaterThan(5);
    expect(writes.join('')).toBe(Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join(''));
  });

  test('drained resolves once everything waiting has been written', async () => {
    const { sink, writes, output } = capture();
    output.room = 0;
    sink('one');
    sink.flush();
    let resolved = false;
    const drained = sink.drained(60_000).then(() => (resolved = true));
    await new Promise((resolve) => setTimeout(resolve, 3 * LINE_BATCH_MS));
    expect(resolved).toBe(false);
    output.room = Infinity;
    await drained;
    expect(writes).toEqual(['one\n']);
  });

  test('a logger writing to a batched sink writes an error at once, with the lines before it', () => {
    vi.useFakeTimers();
    const { sink, writes } = capture();
    const log = createLogger(sink);
    log.info('request', { status: 200 });
    expect(writes).toEqual([]);
    log.error('incident', { incident: 'abc' });
    expect(writes).toHaveLength(1);
    expect(writes[0].trim().split('\n').map((line) => JSON.parse(line).event)).toEqual(['request', 'incident']);
  });

  test("a line's time is the instant it was written, as toISOString writes it, to the millisecond", () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const log = createLogger((line) => lines.push(line));
    const instants = [Date.UTC(2026, 10, 26, 23, 59, 59, 999), Date.UTC(2026, 10, 27, 0, 0, 0, 0), Date.UTC(2026, 10, 27, 0, 0, 0, 7), Date.UTC(2026, 10, 27, 0, 0, 0, 42), Date.UTC(2026, 10, 27, 0, 0, 1, 500), 0, Date.UTC(10000, 0, 1, 0, 0, 0, 3)];
    for (const instant of instants) {
      vi.setSystemTime(instant);
      log.request({ method: 'GET', path: '/', client: '127.0.0.1', status: 200, ms: 0 });
      log.info('event');
    }
    const expected = instants.flatMap((instant) => [new Date(instant).toISOString(), new Date(instant).toISOString()]);
    expect(lines.map((line) => (JSON.parse(line) as { time: string }).time)).toEqual(expected);
  });

  test('a request line is the JSON of its fields, as any other line is, whatever the path holds', () => {
    const lines: string[] = [];
    const log = createLogger((line) => lines.push(line));
    const fields = { method: 'POST', path: '/a "quoted"\\ path\n\u0001/é/😀', client: '::ffff:127.0.0.1', status: 200, ms: 3 };
    log.request(fields);
    log.info('request', fields);
    const [written, general] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(Object.keys(written)).toEqual(Object.keys(general));
    expect({ ...written, time: 0 }).toEqual({ ...general, time: 0 });
  });

  test('a process that exits right after logging still writes the line (the default standard-output log)', async () => {
    const script = [
      "import { loadConfig } from './server/src/config.ts';",
      "const config = loadConfig({ FSS_DATA_DIR: '/nonexistent' });",
      "config.log('first'); config.log('second');",
      'process.exit(0);',
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root });
    expect(stdout).toBe('first\nsecond\n');
  });

  /**
   * Runs `script` (an ES module in the repository's root) with standard output a pipe that nobody
   * reads for `lagMs`, then read to the end: what it wrote, on which stream, and how it ended.
   */
  async function runWithLaggingReader(script: string, lagMs: number) {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pause();
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    setTimeout(() => child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk)).resume(), lagMs);
    const [code] = (await once(child, 'close')) as [number | null];
    return { lines: Buffer.concat(stdout).toString().split('\n'), stderr, code };
  }

  test('lines written faster than the reader takes them all arrive, whole and in order', async () => {
    const script = [
      "import { createLogger, stdoutLines } from './server/src/log.ts';",
      'const log = createLogger(stdoutLines);',
      // 3 MB: far more than a pipe holds, less than the backlog bound
      "for (let i = 0; i < 20000; i++) log.info('line', { i, pad: 'x'.repeat(120) });",
      "let ticks = 0; const timer = setInterval(() => ticks++, 5);",
      "setTimeout(() => { clearInterval(timer); log.info('ticks', { ticks }); }, 300);",
    ].join('\n');
    const { lines, code } = await runWithLaggingReader(script, 600);
    expect(code).toBe(0);
    expect(lines.pop()).toBe('');
    const parsed = lines.map((line) => JSON.parse(line) as { event: string; i?: number; ticks?: number });
    expect(parsed.slice(0, -1).map((line) => line.i)).toEqual(Array.from({ length: 20000 }, (_, i) => i));
    // While nobody read, the event loop went on: the timer ticked.
    expect(parsed.at(-1)).toMatchObject({ event: 'ticks' });
    expect(parsed.at(-1)!.ticks).toBeGreaterThan(10);
  }, 30_000);

  test('an uncaught exception: the lines waiting are written, then its fatal line, then Node ends the process as it would', async () => {
    const script = [
      "import { createLogger, logFatalErrors, stdoutLines } from './server/src/log.ts';",
      'const log = createLogger(stdoutLines);',
      'logFatalErrors(log, stdoutLines);',
      "for (let i = 0; i < 20000; i++) log.info('line', { i, pad: 'x'.repeat(120) });",
      "setTimeout(() => { throw new Error('the fatal one'); }, 50);",
    ].join('\n');
    const { lines, stderr, code } = await runWithLaggingReader(script, 600);
    expect(code).toBe(1);
    expect(stderr).toContain('Error: the fatal one');
    expect(lines.pop()).toBe('');
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.slice(0, -1).map((line) => line.i)).toEqual(Array.from({ length: 20000 }, (_, i) => i));
    expect(parsed.at(-1)).toMatchObject({ level: 'error', event: 'fatal', origin: 'uncaughtException' });
    expect(parsed.at(-1)!.error).toContain('Error: the fatal one');
  }, 30_000);
});
