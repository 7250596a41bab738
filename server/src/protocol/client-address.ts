/**
 * The one place that decides the client's address (what throttling counts and the log names) and scheme. Forwarding
 * headers count only from FSS_TRUSTED_PROXIES: the address is the right-most X-Forwarded-For entry that is not a trusted
 * proxy, so a client cannot choose it (docs/protocol.md). IPv4-mapped IPv6 is reported as IPv4.
 */
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP, type Socket } from 'node:net';
import type { Config } from '../config';

const matchers = new WeakMap<readonly string[], BlockList>();

/** The trusted proxies of the settings as a matcher (built once per list). */
function trustedProxies(entries: readonly string[]): BlockList {
  let list = matchers.get(entries);
  if (!list) {
    list = new BlockList();
    for (const entry of entries) {
      const [raw, prefix] = entry.split('/');
      const address = canonicalAddress(raw);
      if (address === null) continue; // config.ts has refused anything else already
      const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) list.addAddress(address, type);
      else list.addSubnet(address, Number(prefix), type);
    }
    matchers.set(entries, list);
  }
  return list;
}

/** An IP address in canonical form (IPv4-mapped as IPv4, zone kept), from forms like `203.0.113.7:51234` or `[2001:db8::1]:443`; null if none. */
export function canonicalAddress(text: string): string | null {
  let address = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(address);
  if (bracketed) address = bracketed[1];
  else if (/^[\d.]+:\d{1,5}$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) address = mapped[1];
  return isIP(address) === 0 ? null : address.toLowerCase();
}

function isTrusted(address: string, list: BlockList): boolean {
  // A zone (`fe80::1%eth0`) does not take part in the comparison.
  const bare = address.split('%')[0];
  return list.check(bare, isIP(bare) === 4 ? 'ipv4' : 'ipv6');
}

/** The values of a header that may be sent several times, each a comma-separated list, in order. */
function listHeader(req: IncomingMessage, name: string): string[] {
  const value = req.headers[name];
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return joined
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** The TCP peer's canonical address, worked out once per connection (kept-alive requests ask again); undefined once closed. */
const peers = new WeakMap<Socket, string>();

function peerAddressOf(req: IncomingMessage): string | undefined {
  const socket = req.socket;
  let peer = peers.get(socket);
  if (peer === undefined) {
    const raw = socket.remoteAddress;
    if (raw === undefined) return undefined;
    peer = canonicalAddress(raw) ?? raw;
    peers.set(socket, peer);
  }
  return peer;
}

/** Whether the request came through one of the trusted proxies (the TCP peer is one). */
function viaTrustedProxy(req: IncomingMessage, config: Config): boolean {
  if (config.trustedProxies.length === 0) return false;
  const peer = peerAddressOf(req);
  return peer !== undefined && isIP(peer) !== 0 && isTrusted(peer, trustedProxies(config.trustedProxies));
}

/** The client's address (see the top of this file); `unknown` when the socket has none. */
export function clientAddressOf(req: IncomingMessage, config: Config): string {
  const peer = peerAddressOf(req);
  if (peer === undefined) return 'unknown';
  if (!viaTrustedProxy(req, config)) return peer;
  const list = trustedProxies(config.trustedProxies);
  const hops = listHeader(req, 'x-forwarded-for');
  let address = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = canonicalAddress(hops[i]);
    if (hop === null) return address;
    address = hop;
    if (!isTrusted(address, list)) return address;
  }
  return address;
}

/** The scheme the client used: X-Forwarded-Proto from a trusted proxy, else `http` (this server speaks no TLS). */
export function requestSchemeOf(req: IncomingMessage, config: Config): 'http' | 'https' {
  if (!viaTrustedProxy(req, config)) return 'http';
  const proto = listHeader(req, 'x-forwarded-proto').pop()?.toLowerCase();
  return proto === 'https' ? 'https' : 'http';
}
