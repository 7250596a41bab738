import { describe, expect, it } from 'vitest';
import { decodeText, TEXT_PREVIEW_BYTES } from './text-decoding';

const bytes = (...values: number[]) => Uint8Array.from(values);
const utf16 = (text: string, bigEndian: boolean) => {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    out.push(...(bigEndian ? [unit >> 8, unit & 0xff] : [unit & 0xff, unit >> 8]));
  }
  return out;
};
// 你好，世界 in GB18030 (the same bytes in GBK).
const NI_HAO_GB18030 = [0xc4, 0xe3, 0xba, 0xc3, 0xa3, 0xac, 0xca, 0xc0, 0xbd, 0xe7];

describe('decoding the first bytes of a text file', () => {
  it('reads valid UTF-8 as UTF-8', () => {
    expect(decodeText(new TextEncoder().encode('naïve 你好'), false)).toEqual({ text: 'naïve 你好', encoding: 'utf-8' });
  });

  it('drops a UTF-8 BOM', () => {
    expect(decodeText(bytes(0xef, 0xbb, 0xbf, 0x68, 0x69), false)).toEqual({ text: 'hi', encoding: 'utf-8' });
  });

  it('reads UTF-16 little-endian and big-endian by their BOM', () => {
    expect(decodeText(bytes(0xff, 0xfe, ...utf16('中文 ok', false)), false)).toEqual({ text: '中文 ok', encoding: 'utf-16le' });
    expect(decodeText(bytes(0xfe, 0xff, ...utf16('中文 ok', true)), false)).toEqual({ text: '中文 ok', encoding: 'utf-16be' });
  });

  it('reads bytes that are not UTF-8 as GB18030', () => {
    expect(decodeText(bytes(...NI_HAO_GB18030), false)).toEqual({ text: '你好，世界', encoding: 'gb18030' });
  });

  it('leaves out a UTF-8 character cut at the 1 MiB end, and still calls it UTF-8', () => {
    const full = new TextEncoder().encode('a'.repeat(TEXT_PREVIEW_BYTES - 2) + '你'); // the 3-byte 你 crosses the end
    const { text, encoding } = decodeText(full.subarray(0, TEXT_PREVIEW_BYTES), true);
    expect(encoding).toBe('utf-8');
    expect(text).toBe('a'.repeat(TEXT_PREVIEW_BYTES - 2));
  });

  it('leaves out a GB18030 character cut at the end instead of a replacement character', () => {
    const { text, encoding } = decodeText(bytes(...NI_HAO_GB18030.slice(0, 9)), true);
    expect(encoding).toBe('gb18030');
    expect(text).toBe('你好，世');
  });

  it('leaves out half a UTF-16 code unit cut at the end', () => {
    expect(decodeText(bytes(0xff, 0xfe, ...utf16('ab', false), 0x2d), true).text).toBe('ab');
  });

  it('shows a broken sequence in a whole file as a replacement character', () => {
    expect(decodeText(bytes(0xc4, 0xe3, 0x81), false).text).toBe('你\ufffd');
  });
});
