import { describe, expect, it } from 'vitest';
import { MAX_COVER_BYTES, coverProblem, coverTypeOf } from './cover-image';

const bytes = (...values: (number | string)[]) =>
  new Uint8Array(values.flatMap((value) => (typeof value === 'string' ? [...value].map((char) => char.charCodeAt(0)) : [value])));

const PNG = bytes(0x89, 'PNG', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13);
const JPEG = bytes(0xff, 0xd8, 0xff, 0xe0, 0, 16, 'JFIF');
const GIF = bytes('GIF89a', 1, 0, 1, 0);
const WEBP = bytes('RIFF', 26, 0, 0, 0, 'WEBPVP8 ');

describe('cover images', () => {
  it('are recognized by their first bytes', () => {
    expect(coverTypeOf(PNG)).toBe('image/png');
    expect(coverTypeOf(JPEG)).toBe('image/jpeg');
    expect(coverTypeOf(GIF)).toBe('image/gif');
    expect(coverTypeOf(bytes('GIF87a'))).toBe('image/gif');
    expect(coverTypeOf(WEBP)).toBe('image/webp');
  });

  it('are not a text, an SVG, a RIFF of another kind or a cut-off header', () => {
    expect(coverTypeOf(bytes('hello, world'))).toBeNull();
    expect(coverTypeOf(bytes('<svg xmlns="'))).toBeNull();
    expect(coverTypeOf(bytes('RIFF', 26, 0, 0, 0, 'WAVE'))).toBeNull();
    expect(coverTypeOf(PNG.subarray(0, 7))).toBeNull();
    expect(coverTypeOf(new Uint8Array())).toBeNull();
  });

  it('are checked whatever their name or declared type says', async () => {
    expect(await coverProblem(new Blob([PNG], { type: 'text/plain' }))).toBeNull();
    expect(await coverProblem(new Blob(['not an image'], { type: 'image/png' }))).toBe('not-an-image');
  });

  it('hold at most 5 MiB and at least one byte', async () => {
    const atLimit = new Uint8Array(MAX_COVER_BYTES);
    atLimit.set(PNG);
    expect(await coverProblem(new Blob([atLimit]))).toBeNull();
    const over = new Uint8Array(MAX_COVER_BYTES + 1);
    over.set(PNG);
    expect(await coverProblem(new Blob([over]))).toBe('too-large');
    expect(await coverProblem(new Blob([]))).toBe('empty');
  });
});
