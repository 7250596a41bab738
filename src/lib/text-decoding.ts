/**
 * The text of a file's first bytes in its encoding (issue 21): a BOM says UTF-8 or UTF-16 LE/BE;
 * bytes that are valid UTF-8 are UTF-8; anything else is taken as GB18030 (a superset of GBK and
 * GB2312, the usual encoding of Chinese text files that are not UTF-8).
 */

/** The viewer reads at most this many bytes of a text file. */
export const TEXT_PREVIEW_BYTES = 1024 * 1024;

export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'gb18030';

const BOMS: readonly (readonly [TextEncoding, readonly number[]])[] = [
  ['utf-8', [0xef, 0xbb, 0xbf]],
  ['utf-16le', [0xff, 0xfe]],
  ['utf-16be', [0xfe, 0xff]],
];

/**
 * `cut`: the bytes stop before the file does, so a character split at the end is left out
 * (decoding in stream mode holds back an incomplete sequence instead of failing or replacing it).
 */
export function decodeText(bytes: Uint8Array, cut: boolean): { readonly text: string; readonly encoding: TextEncoding } {
  const decode = (encoding: TextEncoding, body: Uint8Array, fatal = false) =>
    new TextDecoder(encoding, { fatal, ignoreBOM: true }).decode(body, { stream: cut });
  for (const [encoding, bom] of BOMS) {
    if (bom.every((byte, index) => bytes[index] === byte)) return { text: decode(encoding, bytes.subarray(bom.length)), encoding };
  }
  try {
    return { text: decode('utf-8', bytes, true), encoding: 'utf-8' };
  } catch {
    return { text: decode('gb18030', bytes), encoding: 'gb18030' };
  }
}
