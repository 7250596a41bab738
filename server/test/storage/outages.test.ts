/** Which errors are dependency outages (storage/outages.ts), and that an outage is logged once when it starts and once when it ends. */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log';
import { DependencyOutages, fromDependency, outageOf } from '../../src/storage/outages';

const pgError = (code: string) => Object.assign(new pg.DatabaseError('server said no', 0, 'error'), { code, severity: 'FATAL' });
const systemError = (code: string) => Object.assign(new Error(`connect ${code} 10.0.0.1:5432`), { code });
const sdkError = (name: string, status?: number) => Object.assign(new Error(name), { name, $metadata: status === undefined ? {} : { httpStatusCode: status } });

describe('what is an outage', () => {
  it('on the database: admin shutdown, connection failures, timeouts and lost connections', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '57014']) expect(outageOf(fromDependency('database', pgError(code)))).toEqual({ dependency: 'database', code });
    expect(outageOf(fromDependency('database', systemError('ECONNREFUSED')))).toEqual({ dependency: 'database', code: 'ECONNREFUSED' });
    expect(outageOf(fromDependency('database', new Error('Query read timeout')))?.code).toBe('timeout');
    expect(outageOf(fromDependency('database', new Error('Connection terminated unexpectedly')))?.code).toBe('connection-lost');
  });

  it('not on the database: a refused statement (a constraint, a syntax error) or a bad value', () => {
    for (const code of ['23505', '42601', '40001']) expect(outageOf(fromDependency('database', pgError(code)))).toBeNull();
    expect(outageOf(fromDependency('database', new TypeError('bad value')))).toBeNull();
  });

  it('on the store: no answer, a timeout or a 5xx; not a 4xx', () => {
    expect(outageOf(fromDependency('store', systemError('ECONNRESET')))?.code).toBe('ECONNRESET');
    expect(outageOf(fromDependency('store', sdkError('TimeoutError')))?.code).toBe('timeout');
    expect(outageOf(fromDependency('store', sdkError('SlowDown', 503)))?.code).toBe('http-503');
    expect(outageOf(fromDependency('store', sdkError('AccessDenied', 403)))).toBeNull();
    expect(outageOf(fromDependency('store', sdkError('NoSuchKey', 404)))).toBeNull();
  });

  it('never for an error no dependency gave (the local disk, a bug)', () => {
    expect(outageOf(systemError('ECONNREFUSED'))).toBeNull();
    expect(outageOf(Object.assign(new Error('EACCES'), { code: 'EACCES' }))).toBeNull();
  });
});

describe('an outage in the log', () => {
  it('is one warn line when it starts and one when the dependency answers again, with its length', () => {
    const lines: string[] = [];
    let now = new Date('2026-01-01T00:00:00Z');
    const outages = new DependencyOutages(createLogger((line) => lines.push(line)), () => now);
    for (let i = 0; i < 5; i++) outages.failed(fromDependency('database', systemError('ECONNREFUSED')));
    expect(outages.current()).toEqual([{ dependency: 'database', code: 'ECONNREFUSED', since: now }]);
    outages.reached('store');
    now = new Date('2026-01-01T00:00:12.5Z');
    outages.reached('database');
    outages.reached('database');
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 'warn', event: 'outage-started', dependency: 'database', code: 'ECONNREFUSED' }),
      expect.objectContaining({ level: 'warn', event: 'outage-ended', dependency: 'database', seconds: 12.5 }),
    ]);
    expect(outages.current()).toEqual([]);
  });
});
