import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { batchedLines, createLogger, LINE_BATCH_BYTES, LINE_BATCH_MS } from '../src/log';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A batched sink writing into an array, with its exit hook captured instead of registered. */
function capture() {
  const writes: string[] = [];
  let onExit: (() => void) | undefined;
  const sink = batchedLines(
    (text) => writes.push(text),
    (flush) => (onExit = flush),
  );
  return { sink, writes, exit: () => onExit?.() };
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
});
