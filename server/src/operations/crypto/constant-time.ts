/**
 * Comparing a secret with what a caller gave, in a time that tells nothing about either. Both
 * texts are hashed first (SHA-256), so that values of different lengths compare in the same time
 * as equal-length ones, then the digests are compared with timingSafeEqual. docs/security.md lists
 * every place a secret is compared, and how.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Whether `given` is `expected` (UTF-8 texts), compared in constant time. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
