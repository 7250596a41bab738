/** Share settings checked by the service's own rules (docs/sharing.md §2), the generated codes, and the link that carries a code. */

/** An extraction code is empty (an open share) or 4–32 characters (code points, after NFC). */
export const EXTRACTION_CODE_MIN = 4;
export const EXTRACTION_CODE_MAX = 32;
/** Generated codes are this long, as the common netdisks do. */
export const GENERATED_CODE_LENGTH = 4;
/** The service's FSS_MAX_DESCRIPTION_LENGTH default, in code points. */
export const DESCRIPTION_MAX = 500;
/** downValue is an xsd:int. */
export const DOWNLOAD_LIMIT_MAX = 2_147_483_647;

/** No 0 o 1 l i, which are mistaken when read aloud; lower case, as the service compares exactly. The service blocks guessing after 5 tries. */
export const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** The query parameter of a share link that carries the extraction code; the share page reads it. */
export const CODE_PARAMETER = 'pwd';

export type RandomBytes = (bytes: Uint8Array) => Uint8Array;

const cryptoRandom: RandomBytes = (bytes) => crypto.getRandomValues(bytes);

/** Bytes at or above the largest multiple of the alphabet's size are redrawn: no modulo bias. */
export function generateExtractionCode(length: number = GENERATED_CODE_LENGTH, random: RandomBytes = cryptoRandom): string {
  const size = CODE_ALPHABET.length;
  const limit = 256 - (256 % size);
  let code = '';
  while (code.length < length) {
    for (const byte of random(new Uint8Array(length * 2))) {
      if (byte >= limit) continue;
      code += CODE_ALPHABET[byte % size];
      if (code.length === length) break;
    }
  }
  return code;
}

/** How many characters the service counts: code points, after NFC. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text.normalize('NFC')) count++;
  return count;
}

export type ExtractionCodeProblem = 'empty' | 'too-short' | 'too-long' | 'control';

/** Null when the service will take it; empty is a problem here, as the dialog asks only when the owner chose a code. */
export function extractionCodeProblem(code: string): ExtractionCodeProblem | null {
  const normalized = code.normalize('NFC');
  if (normalized === '') return 'empty';
  if (/\p{Cc}/u.test(normalized)) return 'control';
  const length = characterCount(normalized);
  if (length < EXTRACTION_CODE_MIN) return 'too-short';
  if (length > EXTRACTION_CODE_MAX) return 'too-long';
  return null;
}

export type DownloadLimit = { readonly ok: true; readonly value: number } | { readonly ok: false };

/** The download limit field: empty or 0 is no limit; otherwise a whole number of downloads. */
export function parseDownloadLimit(text: string): DownloadLimit {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, value: 0 };
  if (!/^\d+$/.test(trimmed)) return { ok: false };
  const value = Number(trimmed);
  return value <= DOWNLOAD_LIMIT_MAX ? { ok: true, value } : { ok: false };
}

/** The share link that opens with its code filled in: `{url}?pwd={code}` (the URL itself for an open share). */
export function linkWithCode(url: string, code: string): string {
  if (!code) return url;
  return `${url}${url.includes('?') ? '&' : '?'}${CODE_PARAMETER}=${encodeURIComponent(code)}`;
}

/** Whether a share's downloads have reached its limit (it then refuses further downloads). */
export function limitReached(share: { readonly downValue?: number; readonly downloads?: number }): boolean {
  const limit = share.downValue ?? 0;
  return limit > 0 && (share.downloads ?? 0) >= limit;
}
