/**
 * Structured log lines (one JSON object per line). Callers pass fields explicitly; nothing logs a
 * request's query string, body or headers, so tokens, passwords, signs and keys never reach a log.
 */
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

/**
 * The time of a line, as toISOString writes it: the date and second formatted once per second
 * (toISOString costs about half a microsecond), the milliseconds added once per millisecond, which a
 * busy service logs many lines in.
 */
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
  // An error goes out at once, with what was gathered before it: it is the line an operator needs
  // first, and the one a process that dies next must not take with it.
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

/**
 * Process warnings (Node's and dependencies', e.g. the AWS SDK's notice about Node 20) as one `warn`
 * line each in the log, instead of Node's multi-line text on standard error.
 */
export function logProcessWarnings(log: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    log.warn('process warning', { name: warning.name, message: warning.message.replace(/\s+/g, ' ').trim() });
  });
}

export interface BatchedLines {
  (line: string): void;
  /** Writes what is gathered now. */
  flush(): void;
}

/** How long a line may wait to be written with others, and how much may gather before it is written at once. */
export const LINE_BATCH_MS = 10;
export const LINE_BATCH_BYTES = 64 * 1024;

/**
 * A line sink that writes lines in batches: gathered, then written in one piece within
 * LINE_BATCH_MS of the first, or at once when LINE_BATCH_BYTES have gathered (or when a logger
 * writes an error: createLogger flushes after it). Writing to a pipe
 * or a file is a system call, and one per request cost a busy server as much as a twentieth of its
 * time (bench/README.md); a batch costs one for many. Lines keep their order. What is gathered is
 * written when the process exits (the 'exit' event, also after process.exit()); a process killed
 * outright loses at most the last LINE_BATCH_MS of lines.
 */
export function batchedLines(writeText: (text: string) => void, onExit: (flush: () => void) => void = exitHook): BatchedLines {
  let pending = '';
  let timer: NodeJS.Timeout | null = null;
  let hooked = false;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending === '') return;
    const text = pending;
    pending = '';
    writeText(text);
  };
  const sink = (line: string) => {
    pending += line + '\n';
    if (!hooked) {
      hooked = true;
      onExit(flush);
    }
    if (pending.length >= LINE_BATCH_BYTES) flush();
    else if (!timer) {
      timer = setTimeout(flush, LINE_BATCH_MS);
      // A pending line never keeps the process alive: 'exit' writes it.
      timer.unref();
    }
  };
  return Object.assign(sink, { flush });
}

function exitHook(flush: () => void): void {
  process.on('exit', flush);
}

/** The default log: lines to standard output, in batches. */
export const stdoutLines: BatchedLines = batchedLines((text) => process.stdout.write(text));
