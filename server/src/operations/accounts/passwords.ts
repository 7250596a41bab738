/**
 * Secret hashing: scrypt for passwords (its parameters in the hash string, so they can be raised later);
 * one SHA-256 for 256-bit tokens and API keys, whose lookup must be one indexed equality on every call.
 */
import { hash, randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { HashQueue } from '../crypto/hash-queue';

const scrypt = (queue: HashQueue, password: string, salt: Buffer, length: number, options: ScryptOptions) =>
  queue.run(
    () =>
      new Promise<Buffer>((resolve, reject) =>
        scryptCallback(password.normalize('NFC'), salt, length, options, (error, key) => (error ? reject(error) : resolve(key))),
      ),
  );

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/** OWASP's N=2^15, r=8, p=3: 32 MiB a hash rather than N=2^17's 128 MiB, so concurrent logins fit a small host. */
export const defaultScryptParams: ScryptParams = { N: 2 ** 15, r: 8, p: 3 };

const SALT_BYTES = 16;
const HASH_BYTES = 32;
/** Refuse stored parameters that would take more than this much memory (a corrupt or hostile row). */
const MAX_MEMORY_BYTES = 256 * 1024 * 1024;

const memoryOf = ({ N, r, p }: ScryptParams) => 128 * N * r + 128 * r * p;

export async function hashPassword(queue: HashQueue, password: string, params: ScryptParams = defaultScryptParams): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scrypt(queue, password, salt, HASH_BYTES, { ...params, maxmem: memoryOf(params) + 1024 * 1024 });
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether `password` matches `stored` (false when malformed); OpError 429 when the hash queue is full. */
export async function verifyPassword(queue: HashQueue, password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const actual = await scrypt(queue, password, parsed.salt, parsed.hash.length, {
    ...parsed.params,
    maxmem: memoryOf(parsed.params) + 1024 * 1024,
  });
  return timingSafeEqual(actual, parsed.hash);
}

function parseHash(stored: string): { params: ScryptParams; salt: Buffer; hash: Buffer } | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const params = { N, r, p };
  const valid =
    [N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) && (N & (N - 1)) === 0 && N > 1 && memoryOf(params) <= MAX_MEMORY_BYTES;
  if (!valid) return null;
  const salt = Buffer.from(parts[4], 'base64url');
  const hash = Buffer.from(parts[5], 'base64url');
  if (salt.length === 0 || hash.length < 16) return null;
  return { params, salt, hash };
}

/**
 * A hash of a thrown-away password: logins for unknown accounts verify against it, so they cost what a
 * known one does. Regenerate it when the default parameters change (a test checks that they agree).
 */
export const DUMMY_PASSWORD_HASH = 'scrypt$32768$8$3$c7KEn1DdDWdx9VfWyJaChw$XHFZhxH2wbgdcUVKk-QIA2mbern1khJ6UoHopHoPu-Q';

/** SHA-256 (lowercase hex) of a high-entropy secret: a token or an API key. */
export function hashSecret(secret: string): string {
  // One-shot: on every authenticated call, a third of createHash's cost.
  return hash('sha256', secret, 'hex');
}
