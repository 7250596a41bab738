/**
 * Data keys: each encrypted item's random 256-bit key rests only wrapped under the key its password derives;
 * unwrapping authenticates, so a wrong password is told apart without storing a password hash.
 */
import { randomBytes } from 'node:crypto';
import { seal, unseal } from './sealing';

export const DATA_KEY_BYTES = 32;
const WRAP_PURPOSE = 'fss/wrapped-data-key/v1';

export function newDataKey(): Buffer {
  return randomBytes(DATA_KEY_BYTES);
}

/** `dataKey` wrapped under `keyEncryptionKey`, bound to `context` (the owning account). */
export function wrapDataKey(keyEncryptionKey: Buffer, dataKey: Buffer, context: string): string {
  return seal(keyEncryptionKey, WRAP_PURPOSE, dataKey, context);
}

/** The data key; null when the key-encryption key (the password) or the context is wrong. */
export function unwrapDataKey(keyEncryptionKey: Buffer, wrapped: string, context: string): Buffer | null {
  const key = unseal(keyEncryptionKey, WRAP_PURPOSE, wrapped, context);
  return key && key.length === DATA_KEY_BYTES ? key : null;
}
