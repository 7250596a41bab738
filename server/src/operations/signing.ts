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
 * A signing key made ready to sign: HMAC-SHA256 (RFC 2104) is SHA256((K ⊕ opad) ‖ SHA256((K ⊕ ipad) ‖
 * message)), K the key's UTF-8 bytes (hashed first when longer than a block, zero-padded to one).
 * The two padded blocks are made once, and kept with the session (sessions.ts), rather than on
 * every call; each HMAC is then two one-shot hashes. The same bytes as createHmac('sha256', key)
 * (server/test/operations/signing.test.ts compares them): createHmac's object and key set-up cost
 * several times the hashing itself on this path, which every signed call takes.
 */
export class SigningKey {
  readonly #innerPad = Buffer.alloc(SHA256_BLOCK_BYTES, 0x36);
  readonly #outerPad = Buffer.alloc(SHA256_BLOCK_BYTES, 0x5c);

  constructor(key: string) {
    let keyBytes = Buffer.from(key, 'utf8');
    if (keyBytes.length > SHA256_BLOCK_BYTES) keyBytes = hash('sha256', keyBytes, 'buffer');
    for (let i = 0; i < keyBytes.length; i++) {
      this.#innerPad[i] ^= keyBytes[i]!;
      this.#outerPad[i] ^= keyBytes[i]!;
    }
  }

  /** The HMAC of `message` (its UTF-8 bytes), 32 bytes. */
  hmac(message: string): Buffer {
    const inner = Buffer.allocUnsafe(SHA256_BLOCK_BYTES + Buffer.byteLength(message, 'utf8'));
    this.#innerPad.copy(inner, 0);
    inner.write(message, SHA256_BLOCK_BYTES, 'utf8');
    const outer = Buffer.allocUnsafe(SHA256_BLOCK_BYTES + 32);
    this.#outerPad.copy(outer, 0);
    hash('sha256', inner, 'buffer').copy(outer, SHA256_BLOCK_BYTES);
    return hash('sha256', outer, 'buffer');
  }
}

/** HMAC-SHA256 of `message` under `key`, in lowercase hex. */
export function hmacSha256Hex(key: string, message: string): string {
  return new SigningKey(key).hmac(message).toString('hex');
}

/** The text that is signed. `params` holds each parameter's text as sent ("" when absent). */
export function canonicalString(operation: string, params: Readonly<Record<string, string>>): string {
  // By UTF-16 code unit, not localeCompare: clients in any language must get the same order.
  const names = Object.keys(params).sort();
  let text = `${operation}\n`;
  let first = true;
  for (const name of names) {
    if (name === SIGN_PARAMETER) continue;
    text += `${first ? '' : '&'}${name}=${encodeURIComponent(params[name]!)}`;
    first = false;
  }
  return text;
}

/** The `sign` a client sends for this call. */
export function signRequest(key: string, operation: string, params: Readonly<Record<string, string>>): string {
  return hmacSha256Hex(key, canonicalString(operation, params));
}

/** Whether `sign` is the signature of this call under `key`; compared in constant time. */
export function verifySign(
  key: SigningKey,
  operation: string,
  rawParams: Readonly<Record<string, string>>,
  sign: string | null,
): boolean {
  if (sign === null || !/^[0-9a-fA-F]{64}$/.test(sign)) return false;
  let expected: Buffer;
  try {
    expected = key.hmac(canonicalString(operation, rawParams));
  } catch {
    // encodeURIComponent refuses a lone surrogate: no client can have signed such a value.
    return false;
  }
  return timingSafeEqual(expected, Buffer.from(sign, 'hex'));
}
