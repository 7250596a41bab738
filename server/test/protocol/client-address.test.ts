/**
 * The client's address behind a load balancer (protocol/client-address.ts, FSS_TRUSTED_PROXIES):
 * the rule on its own, the setting, and over the wire: login throttling counts per forwarded
 * address when the peer is a trusted proxy, and on the peer when it is not; the request log names
 * the same address.
 */
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type Config } from '../../src/config';
import { canonicalAddress, clientAddressOf, requestSchemeOf } from '../../src/protocol/client-address';
import { requestFacts } from '../../src/protocol/http-common';
import { addAccount, element, startTestApp, type TestApp } from '../helpers/app-server';
import { ops, resultXml, send } from '../helpers/requests';

const { Login } = ops;

function configWith(trusted: string): Config {
  return { ...loadConfig({ FSS_TRUSTED_PROXIES: trusted, FSS_DATA_DIR: '/nonexistent' }), log: () => {} };
}

function request(peer: string | undefined, headers: Record<string, string | string[]> = {}): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers: { host: 'files.example', ...headers } } as unknown as IncomingMessage;
}

describe('FSS_TRUSTED_PROXIES', () => {
  it('is empty by default, and a comma-separated list of addresses and CIDR ranges otherwise', () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ FSS_TRUSTED_PROXIES: ' 10.0.0.0/8, 192.168.1.10 ,::1,fd00::/8,' }).trustedProxies).toEqual(['10.0.0.0/8', '192.168.1.10', '::1', 'fd00::/8']);
  });

  it.each(['localhost', '10.0.0.0/33', '::1/129', '10.0.0/8', '10.0.0.0/8/1', '10.0.0.0/x', '*'])('refuses %s, naming it', (entry) => {
    expect(() => loadConfig({ FSS_TRUSTED_PROXIES: entry })).toThrow(ConfigError);
    expect(() => loadConfig({ FSS_TRUSTED_PROXIES: entry })).toThrow(`"${entry}"`);
  });
});

describe('the client address', () => {
  const none = configWith('');
  const proxies = configWith('10.0.0.0/8, 127.0.0.1, ::1');

  it('is the TCP peer when no proxy is trusted: X-Forwarded-For is ignored', () => {
    expect(clientAddressOf(request('203.0.113.7', { 'x-forwarded-for': '198.51.100.1' }), none)).toBe('203.0.113.7');
    expect(clientAddressOf(request(undefined), none)).toBe('unknown');
  });

  it('is the TCP peer when the peer is not a trusted proxy, whatever it forwards', () => {
    expect(clientAddressOf(request('203.0.113.7', { 'x-forwarded-for': '10.1.1.1' }), proxies)).toBe('203.0.113.7');
  });

  it('behind a trusted proxy: the right-most forwarded address that is not a trusted proxy', () => {
    expect(clientAddressOf(request('10.0.0.2', { 'x-forwarded-for': '198.51.100.1' }), proxies)).toBe('198.51.100.1');
    // Two proxies of ours in a row (10.0.0.5 handed it to 10.0.0.2).
    expect(clientAddressOf(request('10.0.0.2', { 'x-forwarded-for': '198.51.100.1, 10.0.0.5' }), proxies)).toBe('198.51.100.1');
    // The client sent a forged entry first: it is left of the address our proxy saw, and ignored.
    expect(clientAddressOf(request('10.0.0.2', { 'x-forwarded-for': '1.2.3.4, 198.51.100.1' }), proxies)).toBe('198.51.100.1');
    // Several headers read as one list, in order.
    expect(clientAddressOf(request('10.0.0.2', { 'x-forwarded-for': ['1.2.3.4', '198.51.100.1, 10.0.0.5'] }), proxies)).toBe('198.51.100.1');
  });

  it('behind a trusted proxy without X-Forwarded-For, or with every hop trusted: the nearest address known', () => {
    expect(clientAddressOf(request('10.0.0.2'), proxies)).toBe('10.0.0.2');
    expect(clientAddressOf(request('10.0.0.2', { 'x-forwarded-for': '10.0.0.9, 10.0.0.5' }), proxies)).toBe('10.0.0.9');
  });

  it('stops at an entry that is not an address, rather than report it', () => {
    expect(clientAddressOf(request('10.0.0.2', { 'x-forwarded-for': 'unknown, 10.0.0.5' }), proxies)).toBe('10.0.0.5');
    expect(clientAddressOf(request('10.0.0.2', { 'x-forwarded-for': '198.51.100.1, <script>' }), proxies)).toBe('10.0.0.2');
  });

  it('reads entries with ports and brackets, IPv6, and IPv4-mapped peers', () => {
    expect(clientAddressOf(request('::ffff:10.0.0.2', { 'x-forwarded-for': '198.51.100.1:51234' }), proxies)).toBe('198.51.100.1');
    expect(clientAddressOf(request('::1', { 'x-forwarded-for': '[2001:DB8::1]:443' }), proxies)).toBe('2001:db8::1');
    expect(clientAddressOf(request('::ffff:203.0.113.7'), none)).toBe('203.0.113.7');
    expect(canonicalAddress('::FFFF:192.0.2.1')).toBe('192.0.2.1');
    expect(canonicalAddress('2001:db8::1')).toBe('2001:db8::1');
    expect(canonicalAddress('example.com')).toBeNull();
    expect(canonicalAddress('1.2.3')).toBeNull();
  });

  it('the scheme is X-Forwarded-Proto from a trusted proxy only, and goes into links when FSS_PUBLIC_URL is not set', () => {
    const forwarded = request('10.0.0.2', { 'x-forwarded-proto': 'https' });
    expect(requestSchemeOf(forwarded, proxies)).toBe('https');
    expect(requestFacts(forwarded, proxies).baseUrl).toBe('https://files.example');
    expect(requestSchemeOf(request('203.0.113.7', { 'x-forwarded-proto': 'https' }), proxies)).toBe('http');
    expect(requestSchemeOf(request('10.0.0.2', { 'x-forwarded-proto': 'gopher' }), proxies)).toBe('http');
    expect(requestFacts(forwarded, none).baseUrl).toBe('http://files.example');
    expect(requestFacts(forwarded, { ...proxies, publicUrl: 'https://fss.example' }).baseUrl).toBe('https://fss.example');
  });
});

describe('over the wire: login throttling behind a proxy', () => {
  let behindProxy: TestApp;
  let direct: TestApp;
  beforeAll(async () => {
    behindProxy = await startTestApp({ FSS_TRUSTED_PROXIES: '127.0.0.1, ::1' });
    direct = await startTestApp();
    await addAccount(behindProxy, 'alice', 'alice-password-1');
    await addAccount(direct, 'alice', 'alice-password-1');
  });
  afterAll(async () => {
    await behindProxy?.close();
    await direct?.close();
  });

  async function login(app: TestApp, password: string, forwardedFor: string): Promise<{ text: string; reason?: string }> {
    const body = `uid=alice&pwd=${encodeURIComponent(password)}`;
    const answer = await send(app.url, 'POST', '/OAuthService.asmx/Login', { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': forwardedFor }, body);
    expect(answer.status).toBe(200);
    const token = element(resultXml(answer, Login), 'token')!;
    return { text: token.text, reason: token.attrs.reason };
  }

  it('counts failures per forwarded client when the peer is a trusted proxy', async () => {
    for (let i = 0; i < 5; i++) expect((await login(behindProxy, 'wrong', '198.51.100.1')).reason).toBe('invalid');
    expect((await login(behindProxy, 'alice-password-1', '198.51.100.1')).reason).toBe('throttled');
    // Another client behind the same proxy is not blocked by the first one's failures.
    expect((await login(behindProxy, 'alice-password-1', '198.51.100.2')).text).not.toBe('0');
    const lines = behindProxy.logLines.map((line) => JSON.parse(line) as { event: string; client?: string });
    expect(lines.filter((line) => line.event === 'request').map((line) => line.client)).toContain('198.51.100.2');
  });

  it('counts them on the peer when no proxy is trusted: a forged X-Forwarded-For changes nothing', async () => {
    for (let i = 0; i < 5; i++) expect((await login(direct, 'wrong', `198.51.100.${10 + i}`)).reason).toBe('invalid');
    expect((await login(direct, 'alice-password-1', '198.51.100.99')).reason).toBe('throttled');
    const lines = direct.logLines.map((line) => JSON.parse(line) as { event: string; client?: string });
    expect(new Set(lines.filter((line) => line.event === 'request').map((line) => line.client))).toEqual(new Set(['127.0.0.1']));
  });
});
