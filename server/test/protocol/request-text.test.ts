/**
 * The text of a SOAP request (soap.ts decodeRequestText): decoders are kept from one request to the
 * next, so what one request's bytes did to a decoder must never show in the next request's text.
 */
import { describe, expect, it } from 'vitest';
import { parseContentType } from '../../src/protocol/http-common';
import { decodeRequestText } from '../../src/protocol/asmx/soap';

const textXml = (charset: string) => parseContentType(`text/xml; charset=${charset}`)!;
const utf16le = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);

describe('the text of a request', () => {
  it('a UTF-16 request cut off in the middle of a character is refused, and the next one is read whole', () => {
    const cut = Buffer.concat([utf16le('<a>'), Buffer.from([0x3c])]);
    expect(() => decodeRequestText(cut, textXml('utf-16'))).toThrow();
    expect(decodeRequestText(utf16le('<b/>'), textXml('utf-16'))).toBe('<b/>');
  });

  it('a UTF-16 request with a lone surrogate is refused, and the next one is read whole', () => {
    const lone = Buffer.concat([utf16le('<a>'), Buffer.from([0x00, 0xd8])]);
    expect(() => decodeRequestText(lone, textXml('utf-16'))).toThrow();
    expect(decodeRequestText(utf16le('<b/>'), textXml('utf-16'))).toBe('<b/>');
  });

  it('a UTF-8 request ending inside a character is refused, and the next one is read whole', () => {
    expect(() => decodeRequestText(Buffer.from([0x3c, 0x61, 0xe2, 0x82]), textXml('utf-8'))).toThrow();
    expect(decodeRequestText(Buffer.from('<b>€</b>', 'utf8'), textXml('utf-8'))).toBe('<b>€</b>');
  });

  it('a charset spelled in another case is read as that charset', () => {
    expect(decodeRequestText(Buffer.from('<b>é</b>', 'latin1'), textXml('ISO-8859-1'))).toBe('<b>é</b>');
    expect(decodeRequestText(Buffer.from('<b>é</b>', 'latin1'), textXml('iso-8859-1'))).toBe('<b>é</b>');
  });

  it('an unknown charset is refused', () => {
    expect(() => decodeRequestText(Buffer.from('<b/>'), textXml('x-no-such-charset'))).toThrow();
  });
});
