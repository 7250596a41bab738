/**
 * A PostgreSQL that stops answering (every process of the server stopped with SIGSTOP, as the operator did):
 * calls fail within the database timeout with 503 and Retry-After in their own form, the log has one warn line when
 * the outage starts and one when it ends, no incident; once the server runs again, calls succeed. The server is
 * this file's own, so stopping it touches no other test.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callSigned, element, newSession, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { startPostgres, type PostgresServer } from '../helpers/postgres';
import { ops, resultXml } from '../helpers/requests';

let server: PostgresServer;
let app: TestApp;
let session: Session;

beforeAll(async () => {
  server = await startPostgres();
  // Short timeouts so the test waits little; the caches off, so every call reaches the database.
  app = await startTestApp({ FSS_DATABASE_URL: server.urlOf('postgres'), FSS_DB_TIMEOUT_SECONDS: '2', FSS_CONNECT_TIMEOUT_SECONDS: '1', FSS_CACHE_MB: '0' });
  session = await newSession(app, 'ann');
});

afterAll(async () => {
  signalServer('SIGCONT');
  await app?.close();
  await server?.stop();
});

/** The postmaster of `server` (its command line names the port) and every process it started. */
function serverProcesses(): number[] {
  const pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
  const read = (pid: number, file: string) => {
    try {
      return readFileSync(`/proc/${pid}/${file}`, 'utf8');
    } catch {
      return '';
    }
  };
  const postmaster = pids.find((pid) => read(pid, 'cmdline').split('\0').includes(`port=${server.port}`));
  if (postmaster === undefined) throw new Error('the postmaster of the test server was not found');
  // /proc/PID/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after its closing parenthesis.
  const children = pids.filter((pid) => Number(read(pid, 'stat').split(') ')[1]?.split(' ')[1]) === postmaster);
  return [postmaster, ...children];
}

function signalServer(signal: 'SIGSTOP' | 'SIGCONT'): void {
  if (!server) return;
  for (const pid of serverProcesses()) process.kill(pid, signal);
}

const outageLines = (event: string) => app.logLines.filter((line) => line.includes(`"event":"${event}"`)).map((line) => JSON.parse(line) as Record<string, unknown>);

describe('a PostgreSQL that stops answering', () => {
  it('answers 503 with Retry-After within the timeout, logs the outage once, and recovers', async () => {
    signalServer('SIGSTOP');

    let started = Date.now();
    const listing = await callSigned(app, 'post', ops.GetFiles, session, { dir: '0', order: 'name', desc: '0' });
    const listingMs = Date.now() - started;
    expect(listing.status, listing.body + app.logLines.join("\n")).toBe(200);
    expect(element(resultXml(listing, ops.GetFiles), 'result')?.attrs).toMatchObject({ code: '503', reason: 'service-unavailable', retryAfter: '5' });
    // The statement timeout (2 s) and its grace (2 s), with room for a slow machine: not the minutes of a hang.
    expect(listingMs).toBeLessThan(10_000);

    started = Date.now();
    const upload = await fetch(`${app.url}/upload/`, { method: 'POST', headers: { Authorization: `Bearer ${session.token}`, 'Tus-Resumable': '1.0.0', 'Upload-Length': '3' } });
    expect(upload.status).toBe(503);
    expect(upload.headers.get('retry-after')).toBe('5');
    expect(Date.now() - started).toBeLessThan(10_000);

    // Past a round of the background jobs (every 5 s): they fail too, and the outage's one line says so for them.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(outageLines('outage-started')).toEqual([expect.objectContaining({ level: 'warn', dependency: 'database' })]);
    expect(outageLines('outage-ended')).toEqual([]);
    expect(app.logLines.filter((line) => line.includes('"level":"error"'))).toEqual([]);
    expect(app.logLines.some((line) => line.includes('"event":"incident"'))).toBe(false);
    // No connection string, hence no password, in any line.
    expect(app.logLines.some((line) => line.includes(server.urlOf('postgres')))).toBe(false);

    signalServer('SIGCONT');
    const after = await callSigned(app, 'post', ops.GetFiles, session, { dir: '0', order: 'name', desc: '0' });
    expect(element(resultXml(after, ops.GetFiles), 'result')?.attrs.code).toBe('0');
    expect(outageLines('outage-ended')).toEqual([expect.objectContaining({ level: 'warn', dependency: 'database', seconds: expect.any(Number) })]);
    expect(outageLines('outage-started')).toHaveLength(1);
  });
});
