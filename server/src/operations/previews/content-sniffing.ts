/**
 * What a file's first bytes say it is, for the preview route (docs/security.md "Safe serving"): the
 * magic numbers of the allowlisted media types, the text test, and an image's pixel count.
 */

/** What a file's extension claims it is; the bytes must agree (media = audio or video). */
export type PreviewKind = 'image' | 'media' | 'pdf' | 'text';

const KINDS_BY_EXTENSION: ReadonlyMap<string, PreviewKind> = new Map([
  ...words('jpg jpeg jpe jfif png gif webp avif bmp svg').map((ext) => [ext, 'image'] as const),
  ...words('mp4 m4v m4a webm mp3 aac ogg oga ogv opus wav flac').map((ext) => [ext, 'media'] as const),
  ['pdf', 'pdf'],
  ...words(
    'txt text md markdown csv tsv json jsonl log ini cfg conf toml yaml yml xml html htm css js mjs cjs ts tsx jsx vue ' +
      'py rb go rs java kt c h cc cpp hpp cs php pl lua r sh bash zsh bat ps1 sql srt vtt tex diff patch properties gitignore env',
  ).map((ext) => [ext, 'text'] as const),
]);

export function claimedKind(ext: string): PreviewKind | undefined {
  return KINDS_BY_EXTENSION.get(ext.toLowerCase());
}

/** How many leading bytes the sniffing reads: enough for a JPEG's frame header after its EXIF block. */
export const SNIFF_BYTES = 64 * 1024;
const TEXT_TEST_BYTES = 8 * 1024;

export interface Sniffed {
  readonly type: string;
  readonly kind: Exclude<PreviewKind, 'text'>;
}

const image = (type: string): Sniffed => ({ type, kind: 'image' });
const media = (type: string): Sniffed => ({ type, kind: 'media' });

/** The allowlisted type the magic number of `head` names; undefined for anything else. */
export function sniff(head: Buffer): Sniffed | undefined {
  const ascii = (start: number, end: number) => head.toString('latin1', start, end);
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return image('image/jpeg');
  if (ascii(0, 8) === '\x89PNG\r\n\x1a\n') return image('image/png');
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return image('image/gif');
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return image('image/webp');
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return media('audio/wav');
  if (ascii(0, 2) === 'BM' && head.length >= 18 && head.readUInt32LE(6) === 0 && [12, 40, 52, 56, 64, 108, 124].includes(head.readUInt32LE(14))) {
    return image('image/bmp');
  }
  if (ascii(4, 8) === 'ftyp') return sniffIsoMedia(head);
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return ascii(0, 64).includes('webm') ? media('video/webm') : undefined;
  if (ascii(0, 4) === 'OggS') return media('audio/ogg');
  if (ascii(0, 4) === 'fLaC') return media('audio/flac');
  if (ascii(0, 5) === '%PDF-') return { type: 'application/pdf', kind: 'pdf' };
  if (ascii(0, 3) === 'ID3') return media('audio/mpeg');
  if (head[0] === 0xff && head.length >= 3) {
    if ((head[1] & 0xf6) === 0xf0) return media('audio/aac'); // ADTS: 12-bit sync, layer 00
    // MPEG audio frame: 11-bit sync, a layer, a bitrate index and a sample rate that are not reserved.
    if ((head[1] & 0xe0) === 0xe0 && (head[1] & 0x06) !== 0 && (head[2] & 0xf0) !== 0xf0 && (head[2] & 0x0c) !== 0x0c) return media('audio/mpeg');
  }
  return undefined;
}

/** An ISO base media file (ftyp box): AVIF, audio-only MP4 (M4A) or MP4 video; not QuickTime or HEIC. */
function sniffIsoMedia(head: Buffer): Sniffed | undefined {
  const boxEnd = Math.min(head.length, head.readUInt32BE(0));
  const brands = [head.toString('latin1', 8, 12)];
  for (let at = 16; at + 4 <= boxEnd; at += 4) brands.push(head.toString('latin1', at, at + 4));
  if (brands.includes('avif') || brands.includes('avis')) return image('image/avif');
  if (['M4A ', 'M4B ', 'M4P '].includes(brands[0])) return media('audio/mp4');
  if (brands.some((brand) => /^(isom|iso[2-9]|mp4[12]|avc1|M4V |M4VH|M4VP|dash|mmp4|MSNV|f4v )$/.test(brand))) return media('video/mp4');
  return undefined;
}

/** Text as the preview takes it: no NUL in the first 8 KiB, unless a UTF-16 byte order mark opens it. */
export function looksLikeText(head: Buffer): boolean {
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) return true;
  return !head.subarray(0, TEXT_TEST_BYTES).includes(0);
}

/** Width × height from an image's header (JPEG, PNG, GIF, WebP, AVIF, BMP); undefined when not found in `head`. */
export function imagePixels(head: Buffer, type: string): number | undefined {
  const size = dimensions(head, type);
  return size && size[0] > 0 && size[1] > 0 ? size[0] * size[1] : undefined;
}

function dimensions(head: Buffer, type: string): [number, number] | undefined {
  const has = (bytes: number) => head.length >= bytes;
  switch (type) {
    case 'image/png':
      return has(24) ? [head.readUInt32BE(16), head.readUInt32BE(20)] : undefined;
    case 'image/gif':
      return has(10) ? [head.readUInt16LE(6), head.readUInt16LE(8)] : undefined;
    case 'image/bmp':
      if (head.readUInt32LE(14) === 12) return has(22) ? [head.readUInt16LE(18), head.readUInt16LE(20)] : undefined;
      return has(26) ? [Math.abs(head.readInt32LE(18)), Math.abs(head.readInt32LE(22))] : undefined;
    case 'image/webp':
      return webpDimensions(head);
    case 'image/avif':
      return avifDimensions(head);
    case 'image/jpeg':
      return jpegDimensions(head);
  }
  return undefined;
}

function webpDimensions(head: Buffer): [number, number] | undefined {
  const chunk = head.toString('latin1', 12, 16);
  if (chunk === 'VP8 ' && head.length >= 30) return [head.readUInt16LE(26) & 0x3fff, head.readUInt16LE(28) & 0x3fff];
  if (chunk === 'VP8L' && head.length >= 25) {
    const bits = head.readUInt32LE(21);
    return [(bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1];
  }
  if (chunk === 'VP8X' && head.length >= 30) return [head.readUIntLE(24, 3) + 1, head.readUIntLE(27, 3) + 1];
  return undefined;
}

/** The largest `ispe` (image spatial extent) property: the primary image, or the grid of its tiles. */
function avifDimensions(head: Buffer): [number, number] | undefined {
  let largest: [number, number] | undefined;
  for (let at = head.indexOf('ispe'); at >= 0 && at + 16 <= head.length; at = head.indexOf('ispe', at + 4)) {
    const size: [number, number] = [head.readUInt32BE(at + 8), head.readUInt32BE(at + 12)];
    if (!largest || size[0] * size[1] > largest[0] * largest[1]) largest = size;
  }
  return largest;
}

/** The frame header (SOFn) after the segments before it; undefined if it lies past `head`. */
function jpegDimensions(head: Buffer): [number, number] | undefined {
  let at = 2;
  while (at + 9 <= head.length) {
    if (head[at] !== 0xff) return undefined;
    const marker = head[at + 1];
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return [head.readUInt16BE(at + 7), head.readUInt16BE(at + 5)];
    at += 2 + head.readUInt16BE(at + 2);
  }
  return undefined;
}

function words(text: string): string[] {
  return text.split(' ');
}
