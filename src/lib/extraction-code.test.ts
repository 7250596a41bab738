import { describe, expect, it } from 'vitest';
import {
  CODE_ALPHABET,
  characterCount,
  extractionCodeProblem,
  generateExtractionCode,
  limitReached,
  linkWithCode,
  parseDownloadLimit,
} from './extraction-code';

describe('generated extraction codes', () => {
  it('are 4 characters of the alphabet by default', () => {
    for (let i = 0; i < 200; i++) {
      const code = generateExtractionCode();
      expect(code).toMatch(/^[a-z2-9]{4}$/);
      for (const char of code) expect(CODE_ALPHABET).toContain(char);
    }
  });

  it('leave out the characters people confuse', () => {
    for (const char of '0o1liIO') expect(CODE_ALPHABET).not.toContain(char);
  });

  it('are accepted by the service rules', () => {
    expect(extractionCodeProblem(generateExtractionCode())).toBeNull();
    expect(generateExtractionCode(32)).toHaveLength(32);
  });

  it('draw again the bytes that would favour some symbols', () => {
    // 31 symbols: bytes 248..255 are thrown away, 0 is "a", 30 is "9", 31 is "a" again.
    const bytes = [255, 248, 0, 30, 31, 249, 62];
    let call = 0;
    const random = (buffer: Uint8Array) => {
      call++;
      buffer.fill(0);
      buffer.set(bytes.slice(0, buffer.length));
      return buffer;
    };
    expect(generateExtractionCode(4, random)).toBe('a9aa');
    expect(call).toBe(1);
  });

  it('keep drawing when a whole draw was thrown away', () => {
    let call = 0;
    const random = (buffer: Uint8Array) => buffer.fill(call++ === 0 ? 250 : 1);
    expect(generateExtractionCode(4, random)).toBe('bbbb');
    expect(call).toBe(2);
  });

  it('spread over the whole alphabet', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 400; i++) for (const char of generateExtractionCode()) seen.add(char);
    expect(seen.size).toBe(CODE_ALPHABET.length);
  });
});

describe('typed extraction codes', () => {
  it('take 4 to 32 characters', () => {
    expect(extractionCodeProblem('')).toBe('empty');
    expect(extractionCodeProblem('abc')).toBe('too-short');
    expect(extractionCodeProblem('abcd')).toBeNull();
    expect(extractionCodeProblem('x'.repeat(32))).toBeNull();
    expect(extractionCodeProblem('x'.repeat(33))).toBe('too-long');
  });

  it('count characters as the service does: code points after NFC', () => {
    // Four emoji are eight UTF-16 units, four characters.
    expect(extractionCodeProblem('😀😀😀😀')).toBeNull();
    expect(characterCount('😀😀😀😀')).toBe(4);
    // "e" + combining acute is one character after NFC: three, too short.
    expect(extractionCodeProblem('e\u0301ab')).toBe('too-short');
    expect(extractionCodeProblem(`${'😀'.repeat(32)}`)).toBeNull();
  });

  it('refuse control characters', () => {
    expect(extractionCodeProblem('ab\tcd')).toBe('control');
    expect(extractionCodeProblem('abcd\n')).toBe('control');
    expect(extractionCodeProblem('ab cd')).toBeNull();
  });
});

describe('the download limit', () => {
  it('is no limit when empty or 0', () => {
    expect(parseDownloadLimit('')).toEqual({ ok: true, value: 0 });
    expect(parseDownloadLimit('  ')).toEqual({ ok: true, value: 0 });
    expect(parseDownloadLimit('0')).toEqual({ ok: true, value: 0 });
  });

  it('is a whole number of downloads that fits the service int', () => {
    expect(parseDownloadLimit('2')).toEqual({ ok: true, value: 2 });
    expect(parseDownloadLimit(' 15 ')).toEqual({ ok: true, value: 15 });
    expect(parseDownloadLimit('2147483647')).toEqual({ ok: true, value: 2147483647 });
    for (const text of ['-1', '1.5', '1e3', 'ten', '2147483648']) expect(parseDownloadLimit(text)).toEqual({ ok: false });
  });

  it('is reached when the downloads made are at or above it', () => {
    expect(limitReached({ downValue: 2, downloads: 1 })).toBe(false);
    expect(limitReached({ downValue: 2, downloads: 2 })).toBe(true);
    expect(limitReached({ downValue: 0, downloads: 99 })).toBe(false);
    expect(limitReached({})).toBe(false);
  });
});

describe('the link with its code', () => {
  it('carries the code as ?pwd=', () => {
    expect(linkWithCode('http://host/s/abc', 'x7k2')).toBe('http://host/s/abc?pwd=x7k2');
  });

  it('encodes codes that are not plain letters and digits, and reads back the same', () => {
    const link = linkWithCode('http://host/s/abc', 'a&b #?密码');
    expect(new URL(link).searchParams.get('pwd')).toBe('a&b #?密码');
  });

  it('is the link itself for an open share', () => {
    expect(linkWithCode('http://host/s/abc', '')).toBe('http://host/s/abc');
  });
});
