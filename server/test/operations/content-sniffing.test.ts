/**
 * The preview's reading of first bytes (operations/previews/content-sniffing.ts): magic numbers that
 * look alike, the text test, and pixel counts read from real images' headers.
 */
import sharp, { type Sharp } from 'sharp';
import { describe, expect, it } from 'vitest';
import { claimedKind, imagePixels, looksLikeText, sniff } from '../../src/operations/previews/content-sniffing';

const bytes = (...values: Array<number | string>) => Buffer.concat(values.map((v) => (typeof v === 'string' ? Buffer.from(v, 'latin1') : Buffer.from([v]))));

describe('sniff', () => {
  it('tells AAC (ADTS, layer 00) from MP3 (a layer), and refuses a frame header with reserved fields', () => {
    expect(sniff(bytes(0xff, 0xf1, 0x50, 0x80))?.type).toBe('audio/aac');
    expect(sniff(bytes(0xff, 0xfb, 0x90, 0x64))?.type).toBe('audio/mpeg');
    expect(sniff(bytes(0xff, 0xfb, 0xf0, 0x64))).toBeUndefined(); // bitrate index 1111
    expect(sniff(bytes(0xff, 0xfb, 0x9c, 0x64))).toBeUndefined(); // sample rate 11
  });

  it('reads ftyp brands: AVIF is an image, M4A audio, isom video; QuickTime and HEIC are not allowlisted', () => {
    const ftyp = (major: string, ...compatible: string[]) => bytes(0, 0, 0, 16 + 4 * compatible.length, 'ftyp', major, 0, 0, 0, 0, ...compatible);
    expect(sniff(ftyp('avif', 'mif1', 'avif'))).toEqual({ type: 'image/avif', kind: 'image' });
    expect(sniff(ftyp('mif1', 'mif1', 'avif'))?.type).toBe('image/avif');
    expect(sniff(ftyp('M4A ', 'isom'))?.type).toBe('audio/mp4');
    expect(sniff(ftyp('isom', 'isom', 'avc1'))?.type).toBe('video/mp4');
    expect(sniff(ftyp('qt  ', 'qt  '))).toBeUndefined();
    expect(sniff(ftyp('heic', 'mif1', 'heic'))).toBeUndefined();
  });

  it('takes EBML as WebM only with the webm DocType (Matroska is not allowlisted)', () => {
    expect(sniff(bytes(0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x84, 'webm'))?.type).toBe('video/webm');
    expect(sniff(bytes(0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x88, 'matroska'))).toBeUndefined();
  });

  it('takes "BM" as a bitmap only with a known DIB header size: text that starts with BM is not one', () => {
    expect(sniff(Buffer.from('BMW owners club: meeting notes, Saturday'))).toBeUndefined();
  });

  it('names nothing for HTML, SVG, XML or an empty file', () => {
    for (const text of ['<!DOCTYPE html><script>', '<svg xmlns="http://www.w3.org/2000/svg"/>', '<?xml version="1.0"?>', '']) expect(sniff(Buffer.from(text))).toBeUndefined();
  });
});

describe('looksLikeText', () => {
  it('refuses a NUL in the first 8 KiB, not after; takes UTF-16 with its BOM', () => {
    expect(looksLikeText(Buffer.from('a\0b'))).toBe(false);
    expect(looksLikeText(Buffer.concat([Buffer.alloc(8192, 'a'), Buffer.from([0])]))).toBe(true);
    expect(looksLikeText(Buffer.from('\ufeffhello', 'utf16le'))).toBe(true);
  });
});

describe('claimedKind', () => {
  it('by extension, in any case; unknown extensions claim nothing', () => {
    expect([claimedKind('JPG'), claimedKind('svg'), claimedKind('m4a'), claimedKind('pdf'), claimedKind('html'), claimedKind('exe')]).toEqual(['image', 'image', 'media', 'pdf', 'text', undefined]);
  });
});

describe('imagePixels', () => {
  const canvas = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#48c' } });

  it.each([
    ['image/jpeg', (image: Sharp) => image.jpeg()],
    ['image/png', (image: Sharp) => image.png()],
    ['image/gif', (image: Sharp) => image.gif()],
    ['image/webp', (image: Sharp) => image.webp()],
    ['image/webp', (image: Sharp) => image.webp({ lossless: true })],
    ['image/avif', (image: Sharp) => image.avif()],
  ])('%s: width × height from the header', async (type, encode) => {
    const head = await encode(canvas(321, 123)).toBuffer();
    expect(sniff(head)?.type).toBe(type);
    expect(imagePixels(head, type)).toBe(321 * 123);
  });

  it('a JPEG whose frame header lies past the bytes read: unknown', async () => {
    const jpeg = await canvas(50, 40).jpeg().withMetadata({ exif: { IFD0: { ImageDescription: 'x'.repeat(30_000) } } }).toBuffer();
    expect(imagePixels(jpeg, 'image/jpeg')).toBe(2000);
    expect(imagePixels(jpeg.subarray(0, 1000), 'image/jpeg')).toBeUndefined();
  });
});
