/** The service's cover image rules (docs/sharing.md §4): PNG, JPEG, GIF or WebP by its first bytes, at most 5 MiB, checked here first. */

export const MAX_COVER_BYTES = 5 * 1024 * 1024;
export const COVER_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type CoverType = (typeof COVER_TYPES)[number];

const ascii = (bytes: Uint8Array, from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));

/** The image type the first bytes announce, as the service reads them; null for anything else. */
export function coverTypeOf(head: Uint8Array): CoverType | null {
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (head.length >= 8 && png.every((byte, index) => head[index] === byte)) return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 6 && (ascii(head, 0, 6) === 'GIF87a' || ascii(head, 0, 6) === 'GIF89a')) return 'image/gif';
  if (head.length >= 12 && ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

export type CoverProblem = 'empty' | 'too-large' | 'not-an-image';

/** What is wrong with a chosen file as a cover, or null when the service will take it. */
export async function coverProblem(file: Blob): Promise<CoverProblem | null> {
  if (file.size === 0) return 'empty';
  if (file.size > MAX_COVER_BYTES) return 'too-large';
  const head = new Uint8Array(await file.slice(0, 12).arrayBuffer());
  return coverTypeOf(head) ? null : 'not-an-image';
}
