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
 *
 * The hashed bytes are written into buffers that are made once (hmac() is synchronous, so no two
 * calls share them at a time), and the inner digest goes into the outer block as a latin1 ('binary') string:
 * Node's one-shot hash answers a string more cheaply than a Buffer, and each Buffer made per call
 * was as much work as a hash.
 */
export class SigningKey {
  readonly #innerPad = Buffer.alloc(SHA256_BLOCK_BYTES, 0x36);
  /** The outer pad, then room for the inner digest: filled anew by every hmac(). */
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

/**
 * The names a sign covers, in the order they are signed: every name but `sign`, by UTF-16 code unit
 * (not localeCompare: clients in any language must get the same order).
 */
export function signedNames(names: readonly string[]): string[] {
  return names.filter((name) => name !== SIGN_PARAMETER).sort();
}

/**
 * The text that is signed. `params` holds each parameter's text as sent ("" when absent);
 * `names` is signedNames of its names, when the caller has it already (the server knows each
 * operation's parameters, and sorts them once: verifySign).
 */
export function canonicalString(operation: string, params: Readonly<Record<string, string>>, names: readonly string[] = signedNames(Object.keys(params))): string {
  let text = `${operation}\n`;
  for (let i = 0; i < names.length; i++) text += `${i === 0 ? '' : '&'}${names[i]}=${encodeURIComponent(params[names[i]!]!)}`;
  return text;
}

/** The `sign` a client sends for this call. */
export function signRequest(key: string, operation: string, params: Readonly<Record<string, string>>): string {
  return hmacSha256Hex(key, canonicalString(operation, params));
}

/**
 * Whether `sign` is the signature of this call under `key`; compared in constant time. `names`:
 * signedNames of the parameters' names, when the caller has it (each must be in `rawParams`).
 */
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
