import { describe, expect, it } from 'vitest';
import {
  ConversionError,
  decodeBase64,
  decodeByteArray,
  decodeFormComponent,
  EncodingError,
  parseFormEncoded,
  parseInt32,
  parseLong,
} from '../../src/protocol/asmx/wire-values';

describe('numbers', () => {
  it('accept surrounding whitespace and a sign, as xs:long does', () => {
    expect(parseLong(' 10001 ')).toBe(10001n);
    expect(parseLong('+1')).toBe(1n);
    expect(parseLong('-5')).toBe(-5n);
    expect(parseInt32('\t7\n')).toBe(7);
  });

  it('keep the whole range of a long without rounding', () => {
    expect(parseLong('9223372036854775807')).toBe(9223372036854775807n);
    expect(parseLong('-9223372036854775808')).toBe(-9223372036854775808n);
  });

  it('refuse values out of range rather than truncate them', () => {
    expect(() => parseLong('9223372036854775808')).toThrow('Value was either too large or too small for an Int64.');
    expect(() => parseInt32('2147483648')).toThrow('Value was either too large or too small for an Int32.');
  });

  it('refuse decimals, exponents, hex and empty text', () => {
    for (const text of ['1.5', '1e3', '0x10', '', ' ', '1 2', '١٢']) {
      expect(() => parseLong(text), JSON.stringify(text)).toThrow(ConversionError);
    }
  });
});

describe('percent decoding', () => {
  it('decodes + as space, %XX as UTF-8 and %uXXXX as UTF-16', () => {
    expect(decodeFormComponent('a+b%20c')).toBe('a b c');
    expect(decodeFormComponent('%e6%8a%a5%E5%91%8A')).toBe('报告');
    expect(decodeFormComponent('%u5B63%u5EA6')).toBe('季度');
  });

  it('keeps a percent sign that starts no escape', () => {
    expect(decodeFormComponent('100%')).toBe('100%');
    expect(decodeFormComponent('%zz')).toBe('%zz');
  });

  it('refuses octets that are not UTF-8 instead of replacing them', () => {
    expect(() => decodeFormComponent('%FF%FE')).toThrow(EncodingError);
    expect(() => decodeFormComponent('%C3')).toThrow(EncodingError);
    expect(() => decodeFormComponent('%uD800')).toThrow(EncodingError);
  });

  it('matches names case-insensitively and keeps repeated values in order', () => {
    const form = parseFormEncoded('UID=1&dirids=1&dirids=2&x');
    expect(form.get('uid')?.values).toEqual(['1']);
    expect(form.get('dirids')?.values).toEqual(['1', '2']);
    expect(form.get('x')?.values).toEqual(['']);
  });
});

describe('byte arrays', () => {
  it('take one decimal byte per repeated value', () => {
    expect([...decodeByteArray(['137', '80', '78', '71'])]).toEqual([137, 80, 78, 71]);
  });

  it('take a single base64 value', () => {
    expect(decodeByteArray(['iVBORw0KGgo=']).equals(Buffer.from('iVBORw0KGgo=', 'base64'))).toBe(true);
  });

  it('refuse bytes out of range', () => {
    expect(() => decodeByteArray(['256'])).toThrow('Value was either too large or too small for an unsigned byte.');
  });

  it('decode base64 with or without padding and with line breaks', () => {
    expect(decodeBase64('iVBORw0KGgo')?.length).toBe(8);
    expect(decodeBase64('iVBO\r\nRw0KGgo=')?.length).toBe(8);
    expect(decodeBase64('!!!')).toBeNull();
    expect(decodeBase64('a')).toBeNull();
  });
});
