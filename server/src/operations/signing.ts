/**
 * The request signature (DECISIONS.md §5): lowercase hex HMAC-SHA256, keyed with the UTF-8 bytes of
 * the signing key Login returned, over
 *
 *     Operation + "\n" + name1=value1&name2=value2…
 *
 * with every parameter of the call except `sign`, sorted by name by character code (so
 * `downValue` sorts before `downpwd`), each value encodeURIComponent-encoded exactly as sent.
 * Binding the operation name means a leaked GET URL cannot be replayed as another operation.
 */
import { hash, timingSafeEqual } from 'node:crypto';

const SIGN_PARAMETER = 'sign';

const SHA256_BLOCK_BYTES = 64;

/**
 * HMAC-SHA256 (RFC 2104) in lowercase hex: SHA256((K ⊕ opad) ‖ SHA256((K ⊕ ipad) ‖ message)), K the
 * key's UTF-8 bytes (hashed first when longer than a block, zero-padded to one). The same bytes as
 * createHmac('sha256', key) (server/test/operations/signing.test.ts compares them), made of two
 * one-shot hashes: every signed call checks a sign, and createHmac's object and key set-up cost
 * several times the hashing itself on this path (bench/README.md).
 */
export function hmacSha256Hex(key: string, message: string): string {
  let keyBytes = Buffer.from(key, 'utf8');
  if (keyBytes.length > SHA256_BLOCK_BYTES) keyBytes = hash('sha256', keyBytes, 'buffer');
  const messageBytes = Buffer.from(message, 'utf8');
  const inner = Buffer.alloc(SHA256_BLOCK_BYTES + messageBytes.length, 0x36);
  const outer = Buffer.alloc(SHA256_BLOCK_BYTES + 32, 0x5c);
  for (let i = 0; i < keyBytes.length; i++) {
    inner[i] ^= keyBytes[i]!;
    outer[i] ^= keyBytes[i]!;
  }
  messageBytes.copy(inner, SHA256_BLOCK_BYTES);
  hash('sha256', inner, 'buffer').copy(outer, SHA256_BLOCK_BYTES);
  return hash('sha256', outer, 'hex');
}

/** The text that is signed. `params` holds each parameter's text as sent ("" when absent). */
export function canonicalString(operation: string, params: Readonly<Record<string, string>>): string {
  const pairs = Object.keys(params)
    .filter((name) => name !== SIGN_PARAMETER)
    // By UTF-16 code unit, not localeCompare: clients in any language must get the same order.
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => `${name}=${encodeURIComponent(params[name])}`);
  return `${operation}\n${pairs.join('&')}`;
}

/** The `sign` a client sends for this call. */
export function signRequest(key: string, operation: string, params: Readonly<Record<string, string>>): string {
  return hmacSha256Hex(key, canonicalString(operation, params));
}

/** Whether `sign` is the signature of this call under `key`; compared in constant time. */
export function verifySign(
  key: string,
  operation: string,
  rawParams: Readonly<Record<string, string>>,
  sign: string | null,
): boolean {
  if (sign === null || !/^[0-9a-fA-F]{64}$/.test(sign)) return false;
  let expected: Buffer;
  try {
    expected = Buffer.from(signRequest(key, operation, rawParams), 'hex');
  } catch {
    // encodeURIComponent refuses a lone surrogate: no client can have signed such a value.
    return false;
  }
  return timingSafeEqual(expected, Buffer.from(sign, 'hex'));
}
