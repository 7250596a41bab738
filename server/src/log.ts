import { fstatSync, writeSync } from 'node:fs';

/** Structured JSON log lines; callers pass fields explicitly and nothing logs a query, body or header, so no secret is logged. */
export interface Logger {
  info(event: string, fields?: Record<string, unknown>): void;
  /** Something an operator should look at, though the service goes on (a setting, a dependency's notice). */
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
  /** The line of an answered request: an info line with the event `request` and these fields. */
  request(line: RequestLine): void;
}

export interface RequestLine {
  readonly method: string;
  /** As loggablePath gives it: capability paths are logged as their route only. */
  readonly path: string;
  readonly client: string;
  readonly status: number;
  readonly ms: number;
}

/** A line's time as toISOString writes it, formatted once per second and millisecond (a busy service logs many per ms). */
let lastMs = NaN;
let lastTime = '';
let lastSecond = NaN;
let secondText = '';
function timeNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    const second = Math.floor(ms / 1000);
    if (second !== lastSecond) {
      lastSecond = second;
      secondText = new Date(second * 1000).toISOString().slice(0, -4); // without "000Z"
    }
    const fraction = ms - second * 1000;
    lastTime = `${secondText}${fraction < 10 ? '00' : fraction < 100 ? '0' : ''}${fraction}Z`;
  }
  return lastTime;
}

export function createLogger(write: (line: string) => void): Logger {
  const emit = (level: string, event: string, fields: Record<string, unknown> = {}) =>
    write(JSON.stringify({ time: timeNow(), level, event, ...fields }));
  // An error goes out at once: the line an operator needs first, which a dying process must not take with it.
  const flush = (write as Partial<BatchedLines>).flush;
  return {
    info: (event, fields) => emit('info', event, fields),
    warn: (event, fields) => emit('warn', event, fields),
    error: (event, fields) => {
      emit('error', event, fields);
      flush?.();
    },
    // Written by hand, as JSON.stringify would write the object: the one line of every request.
    request: (line) =>
      write(
        `{"time":"${timeNow()}","level":"info","event":"request","method":${JSON.stringify(line.method)},"path":${JSON.stringify(line.path)},` +
          `"client":${JSON.stringify(line.client)},"status":${line.status},"ms":${line.ms}}`,
      ),
  };
}

/** Process warnings (Node's, dependencies') as one `warn` line each instead of multi-line text on standard error. */
export function logProcessWarnings(log: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    log.warn('process warning', { name: warning.name, message: warning.message.replace(/\s+/g, ' ').trim() });
  });
}

export interface BatchedLines {
  (line: string): void;
  /** Writes what is gathered now, as far as the output takes it without waiting. */
  flush(): void;
  /** Writes everything still waiting, waiting for the output if it must: for a process about to end. */
  flushSync(): void;
  /** Resolves once nothing waits to be written, or after `maxMs` (whatever is left then goes at exit). */
  drained(maxMs: number): Promise<void>;
}

/** Where batched lines go: a non-blocking write that takes what the output accepts now. */
export interface LineOutput {
  /** Writes the start of `bytes` that the output accepts without waiting: the count written, 0 when it is full. */
  write(bytes: Buffer): number;
}

/** How long a line may wait to be written with others, and how much may gather before it is written at once. */
export const LINE_BATCH_MS = 10;
export const LINE_BATCH_BYTES = 64 * 1024;
/** How much may wait when the reader lags (a second or two of the busiest bench load); lines beyond are dropped and counted. */
export const LINE_BACKLOG_BYTES = 4 * 1024 * 1024;
/** How long flushSync waits for an output that takes nothing before it gives up on what is left. */
export const LINE_FINAL_WAIT_MS = 5000;

/**
 * A line sink writing batches with one non-blocking write, never holding the event loop for a slow reader: within
 * LINE_BATCH_MS of the first line, or at once past LINE_BATCH_BYTES or after an error. Up to LINE_BACKLOG_BYTES waits
 * (then lines are dropped, counted in a `warn` line); at exit what waits is written synchronously, in order.
 */
export function batchedLines(output: LineOutput, onExit: (flushSync: () => void) => void = exitHook): BatchedLines {
  /** The part of a batch the output has not taken yet. */
  let stalled: Buffer | null = null;
  let gathered = '';
  let dropped = 0;
  let timer: NodeJS.Timeout | null = null;
  let hooked = false;
  const waiters: Array<() => void> = [];

  const schedule = () => {
    if (timer) return;
    timer = setTimeout(flush, LINE_BATCH_MS);
    // A waiting line never keeps the process alive: 'exit' writes it.
    timer.unref();
  };
  /** Writes `bytes` as far as the output takes them; false when some are left (then in `stalled`). */
  const writeOut = (bytes: Buffer): boolean => {
    let written: number;
    try {
      written = output.write(bytes);
    } catch {
      // The output is gone (EPIPE: the reader closed): these lines cannot be written anywhere.
      written = bytes.length;
    }
    stalled = written < bytes.length ? bytes.subarray(written) : null;
    return stalled === null;
  };
  /** Counts the lines dropped so far into the batch, as a warn line where they would have been. */
  const noteDropped = () => {
    if (dropped === 0) return;
    gathered += JSON.stringify({ time: timeNow(), level: 'warn', event: 'log lines dropped', lines: dropped, reason: 'the reader of the log fell behind' }) + '\n';
    dropped = 0;
  };
  function flush() {
    if (timer) clearTimeout(timer);
    timer = null;
    if ((stalled === null || writeOut(stalled)) && gathered !== '') {
      const text = gathered;
      gathered = '';
      writeOut(Buffer.from(text));
    }
    if (stalled !== null || gathered !== '') schedule();
    else for (const resolve of waiters.splice(0)) resolve();
  }
  const flushSync = () => {
    noteDropped();
    let lastProgress = performance.now();
    for (;;) {
      const before = (stalled?.length ?? 0) + gathered.length;
      flush();
      const after = (stalled?.length ?? 0) + gathered.length;
      if (after === 0) return;
      if (after < before) lastProgress = performance.now();
      else if (performance.now() - lastProgress > LINE_FINAL_WAIT_MS) return;
      else sleepSync(1);
    }
  };
  const sink = (line: string) => {
    if (!hooked) {
      hooked = true;
      onExit(flushSync);
    }
    if (stalled !== null && stalled.length + gathered.length + line.length >= LINE_BACKLOG_BYTES) {
      dropped++;
      return;
    }
    noteDropped();
    gathered += line + '\n';
    if (gathered.length >= LINE_BATCH_BYTES && stalled === null) flush();
    else schedule();
  };
  const drained = (maxMs: number) =>
    new Promise<void>((resolve) => {
      if (stalled === null && gathered === '') return resolve();
      const timeout = setTimeout(resolve, maxMs);
      waiters.push(() => {
        clearTimeout(timeout);
        resolve();
      });
    });
  return Object.assign(sink, { flush, flushSync, drained });
}

function exitHook(flushSync: () => void): void {
  process.on('exit', flushSync);
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
}

/** A file descriptor as a LineOutput: pipes and sockets non-blocking (EAGAIN, not a stalled process), files and terminals whole. */
export function fdOutput(fd: number): LineOutput {
  return {
    write(bytes) {
      try {
        return writeSync(fd, bytes);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return 0;
        throw error;
      }
    },
  };
}

/** The default log: lines to standard output, in batches. */
export const stdoutLines: BatchedLines = batchedLines(fdOutput(nonBlockingStdout()));

/** Standard output's descriptor, made non-blocking first when it is a pipe or a socket (see fdOutput). */
function nonBlockingStdout(): number {
  try {
    const stats = fstatSync(1);
    if (stats.isFIFO() || stats.isSocket()) void process.stdout; // libuv opens it non-blocking
  } catch {
    // No standard output (closed): writes fail, and the lines go nowhere, as they would.
  }
  return 1;
}

/** The line of an uncaught error, written before the process ends; Node then writes its stack and exits as it would. */
export function logFatalErrors(log: Logger, lines: (line: string) => void): void {
  if (!isBatched(lines)) return;
  process.on('uncaughtExceptionMonitor', (error, origin) => {
    lines.flushSync();
    log.error('fatal', { origin, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    lines.flushSync();
  });
}

/** Waits up to `maxMs` until `lines` has written everything waiting (at once for a sink that does not batch). */
export function logDrained(lines: (line: string) => void, maxMs: number): Promise<void> {
  return isBatched(lines) ? lines.drained(maxMs) : Promise.resolve();
}

function isBatched(lines: (line: string) => void): lines is BatchedLines {
  return typeof (lines as Partial<BatchedLines>).flushSync === 'function';
}
