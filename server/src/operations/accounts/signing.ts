/**
 * The request signature (docs/protocol.md §6): hex HMAC-SHA256 under the signing key over the operation
 * and the sorted, encoded parameters, so a leaked GET URL cannot be replayed as another operation.
 */
import { hash, timingSafeEqual } from 'node:crypto';

const SIGN_PARAMETER = 'sign';

const SHA256_BLOCK_BYTES = 64;

/**
 * A signing key ready to sign: HMAC-SHA256's two padded key blocks are made once and kept with the
 * session, so each HMAC is two one-shot hashes (createHmac's set-up cost several times the hashing).
 * Same bytes as createHmac (signing.test.ts); scratch buffers are shared since hmac() is synchronous.
 */
export class SigningKey {
  readonly #innerPad = Buffer.alloc(SHA256_BLOCK_BYTES, 0x36);
  /** The outer pad, then room for the inner digest. */
  readonly #outer = Buffer.alloc(SHA256_BLOCK_BYTES + 32, 0x5c);

  constructor(key: string) {
    let keyBytes = Buffer.from(key, 'utf8');
    if (keyBytes.length > SHA256_BLOCK_BYTES) keyBytes = hash('sha256', keyBytes, 'buffer');
    for (let i = 0; i < keyBytes.length; i++) {
      this.#innerPad[i] ^= keyBytes[i]!;
      this.#outer[i] ^= keyBytes[i]!;
    }
  }

  /** The HMAC of `message` (its UTF-8 bytes), 32 bytes. */
  hmac(message: string): Buffer {
    const length = SHA256_BLOCK_BYTES + Buffer.byteLength(message, 'utf8');
    // A message longer than the scratch (a signed upload's base64 content) gets a buffer of its own.
    const inner = length <= INNER_SCRATCH_BYTES ? innerScratch : Buffer.allocUnsafe(length);
    this.#innerPad.copy(inner, 0);
    inner.write(message, SHA256_BLOCK_BYTES, 'utf8');
    this.#outer.write(hash('sha256', inner.subarray(0, length), 'binary'), SHA256_BLOCK_BYTES, 'latin1');
    return hash('sha256', this.#outer, 'buffer');
  }
}

/** The inner block and message of hmac(): a signed call's message is a few hundred bytes. */
const INNER_SCRATCH_BYTES = 4096;
const innerScratch = Buffer.allocUnsafe(INNER_SCRATCH_BYTES);

/** HMAC-SHA256 of `message` under `key`, in lowercase hex. */
export function hmacSha256Hex(key: string, message: string): string {
  return new SigningKey(key).hmac(message).toString('hex');
}

/** Every name but `sign`, by UTF-16 code unit (not localeCompare: every client must get the same order). */
export function signedNames(names: readonly string[]): string[] {
  return names.filter((name) => name !== SIGN_PARAMETER).sort();
}

/** The text that is signed: `params` as sent ("" when absent); `names` its signedNames, when known. */
export function canonicalString(operation: string, params: Readonly<Record<string, string>>, names: readonly string[] = signedNames(Object.keys(params))): string {
  let text = `${operation}\n`;
  for (let i = 0; i < names.length; i++) text += `${i === 0 ? '' : '&'}${names[i]}=${encodeURIComponent(params[names[i]!]!)}`;
  return text;
}

/** The `sign` a client sends for this call. */
export function signRequest(key: string, operation: string, params: Readonly<Record<string, string>>): string {
  return hmacSha256Hex(key, canonicalString(operation, params));
}

/** Whether `sign` signs this call under `key`, compared in constant time. */
export function verifySign(
  key: SigningKey,
  operation: string,
  rawParams: Readonly<Record<string, string>>,
  sign: string | null,
  names?: readonly string[],
): boolean {
  if (sign === null || !/^[0-9a-fA-F]{64}$/.test(sign)) return false;
  let expected: Buffer;
  try {
    expected = key.hmac(canonicalString(operation, rawParams, names));
  } catch {
    // encodeURIComponent refuses a lone surrogate: no client can have signed such a value.
    return false;
  }
  return timingSafeEqual(expected, Buffer.from(sign, 'hex'));
}
