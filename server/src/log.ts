/**
 * Structured log lines (one JSON object per line). Callers pass fields explicitly; nothing logs a
 * request's query string, body or headers, so tokens, passwords, signs and keys never reach a log.
 */
export interface Logger {
  info(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

export function createLogger(write: (line: string) => void): Logger {
  const emit = (level: string, event: string, fields: Record<string, unknown> = {}) =>
    write(JSON.stringify({ time: new Date().toISOString(), level, event, ...fields }));
  return {
    info: (event, fields) => emit('info', event, fields),
    error: (event, fields) => emit('error', event, fields),
  };
}

/** Public codes in URL paths (/s/, /l/, /d/) are capabilities: logs keep only the route. */
export function loggablePath(pathname: string): string {
  return pathname.replace(/^\/(s|l|d|files)\/.*/, '/$1/…');
}
