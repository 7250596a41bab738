/**
 * AES-256-GCM sealing of small secrets under HKDF-SHA256 of a high-entropy input, as `v1.nonce.ciphertext.tag`.
 * `purpose` (HKDF info) gives each use an unrelated key; `context` (associated data) binds a value to one use.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

function derivedKey(input: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', input, Buffer.alloc(0), purpose, 32));
}

export function seal(input: Buffer, purpose: string, plaintext: Buffer, context = ''): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', derivedKey(input, purpose), nonce);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return [VERSION, nonce, ciphertext, cipher.getAuthTag()].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

/** What `seal` sealed; null when the input, purpose, context or the value itself is wrong. */
export function unseal(input: Buffer, purpose: string, sealed: string, context = ''): Buffer | null {
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) return null;
  const [nonce, ciphertext, tag] = parts.slice(1).map((part) => Buffer.from(part, 'base64url'));
  if (nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', derivedKey(input, purpose), nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    return null;
  }
}
