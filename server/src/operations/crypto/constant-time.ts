/** Secrets compared in constant time: both hashed first, so different lengths take the same time (docs/security.md). */
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Whether `given` is `expected` (UTF-8 texts), compared in constant time. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
