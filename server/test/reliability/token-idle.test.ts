/**
 * A token in use stays live however short the idle time (docs/protocol.md §5.3). With
 * FSS_TOKEN_IDLE_SECONDS=60, the least allowed, a client that keeps calling stays logged in and one
 * that stops is logged out. Use of a token is written at most every touch interval (a minute, or
 * half the idle time when shorter): with a whole minute, a token used every few seconds lapsed at
 * its first minute, before its first write.
 *
 * Over HTTP against the whole service. Time is the service's clock (services.now), replaced by one
 * that stands still between the test's steps: no assertion depends on how fast anything runs.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findOperation } from '../../src/catalog/operations';
import { touchIntervalMs } from '../../src/operations/accounts/sessions';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { resultXml } from '../helpers/requests';

const IDLE_SECONDS = 60;
const GetFiles = findOperation('UserService', 'GetFiles')!;

let app: TestApp;
const services = () => app.app.services as { now: () => Date };
let realNow: () => Date;
beforeAll(async () => {
  app = await startTestApp({ FSS_TOKEN_IDLE_SECONDS: String(IDLE_SECONDS) });
  realNow = services().now;
  await addAccount(app, 'alice', 'alice-password-1');
}, 60_000);
afterAll(() => app?.close());
afterEach(() => {
  services().now = realNow;
});

/** Stops the service's clock at the real time; `advance` moves it on. */
function standingClock(): { advance(seconds: number): void } {
  let current = Date.now();
  services().now = () => new Date(current);
  return {
    advance: (seconds) => {
      current += seconds * 1000;
    },
  };
}

/** A signed call with the session: its result code ("0", or "401" once the token has lapsed). */
async function listRoot(session: Session): Promise<string> {
  const answer = await callSigned(app, 'post', GetFiles, session, { dir: '0', order: 'name', desc: '0' });
  return element(resultXml(answer, GetFiles), 'result')!.attrs.code;
}

/** Calls every `everySeconds` for `forSeconds`; the codes that were not "0", with when they came. */
async function keepCalling(session: Session, clock: { advance(seconds: number): void }, everySeconds: number, forSeconds: number): Promise<string[]> {
  const refused: string[] = [];
  for (let at = everySeconds; at <= forSeconds; at += everySeconds) {
    clock.advance(everySeconds);
    const code = await listRoot(session);
    if (code !== '0') refused.push(`${code} at ${at} s`);
  }
  return refused;
}

describe('the touch interval', () => {
  it('is a minute, or half the idle time when that is shorter', () => {
    expect(touchIntervalMs(24 * 3600)).toBe(60_000);
    expect(touchIntervalMs(120)).toBe(60_000);
    expect(touchIntervalMs(100)).toBe(50_000);
    expect(touchIntervalMs(60)).toBe(30_000);
  });
});

describe(`with an idle time of ${IDLE_SECONDS} s`, () => {
  it('a client that calls every few seconds stays logged in', async () => {
    const clock = standingClock();
    const session = await logIn(app, 'post', 'alice', 'alice-password-1');
    expect(await keepCalling(session, clock, 5, 10 * 60)).toEqual([]);
  });

  it('a client that calls every half idle time stays logged in', async () => {
    const clock = standingClock();
    const session = await logIn(app, 'post', 'alice', 'alice-password-1');
    expect(await keepCalling(session, clock, IDLE_SECONDS / 2, 30 * 60)).toEqual([]);
  });

  it('a client that stops is logged out once the idle time has passed since its last call', async () => {
    const clock = standingClock();
    const session = await logIn(app, 'post', 'alice', 'alice-password-1');
    expect(await keepCalling(session, clock, 7, 5 * 60)).toEqual([]);
    clock.advance(IDLE_SECONDS);
    expect(await listRoot(session)).toBe('401');
  });

  it('a token never used after its login lapses after the idle time', async () => {
    const clock = standingClock();
    const session = await logIn(app, 'post', 'alice', 'alice-password-1');
    clock.advance(IDLE_SECONDS);
    expect(await listRoot(session)).toBe('401');
  });
});
