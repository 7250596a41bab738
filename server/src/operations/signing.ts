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
import { createHmac, timingSafeEqual } from 'node:crypto';

const SIGN_PARAMETER = 'sign';

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
  return createHmac('sha256', Buffer.from(key, 'utf8')).update(canonicalString(operation, params), 'utf8').digest('hex');
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
