/**
 * The key a password unlocks: scrypt with parameters and salt stored per item, so the cost can be raised
 * for new items later. Never stored: it only unwraps the item's data key (data-key.ts).
 */
import { randomBytes, scrypt as scryptCallback } from 'node:crypto';
import type { HashQueue } from './hash-queue';

export interface KdfParams {
  readonly algorithm: 'scrypt';
  /** CPU/memory cost, a power of two. */
  readonly N: number;
  readonly r: number;
  readonly p: number;
  readonly salt: Buffer;
}

/** The cost of new items: as account passwords (passwords.ts), 32 MiB and ~0.2 s an attempt; throttled on top. */
export const DEFAULT_KDF_COST = { N: 2 ** 15, r: 8, p: 3 } as const;

const SALT_BYTES = 16;
export const KEY_ENCRYPTION_KEY_BYTES = 32;
/** Stored parameters needing more memory than this are refused (a corrupt or hostile row). */
const MAX_MEMORY_BYTES = 256 * 1024 * 1024;

const memoryOf = ({ N, r, p }: { N: number; r: number; p: number }) => 128 * N * r + 128 * r * p;

/** Parameters for a new item: the given cost and a fresh random salt. */
export function newKdfParams(cost: { readonly N: number; readonly r: number; readonly p: number } = DEFAULT_KDF_COST): KdfParams {
  const params: KdfParams = { algorithm: 'scrypt', N: cost.N, r: cost.r, p: cost.p, salt: randomBytes(SALT_BYTES) };
  if (!validKdfParams(params)) throw new Error('invalid scrypt cost');
  return params;
}

export function validKdfParams(params: KdfParams): boolean {
  const { N, r, p } = params;
  return (
    params.algorithm === 'scrypt' &&
    [N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) &&
    N > 1 &&
    (N & (N - 1)) === 0 &&
    memoryOf(params) <= MAX_MEMORY_BYTES &&
    params.salt.length >= 16
  );
}

/** The key-encryption key of `password` (NFC) under `params`, in a slot of `queue` (429 when full). */
export function deriveKeyEncryptionKey(queue: HashQueue, password: string, params: KdfParams): Promise<Buffer> {
  if (!validKdfParams(params)) return Promise.reject(new Error('stored key-derivation parameters are invalid'));
  return queue.run(
    () =>
      new Promise<Buffer>((resolve, reject) =>
        scryptCallback(
          Buffer.from(password.normalize('NFC'), 'utf8'),
          params.salt,
          KEY_ENCRYPTION_KEY_BYTES,
          { N: params.N, r: params.r, p: params.p, maxmem: memoryOf(params) + 1024 * 1024 },
          (error, key) => (error ? reject(error) : resolve(key)),
        ),
      ),
  );
}
