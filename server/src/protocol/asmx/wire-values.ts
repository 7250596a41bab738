/** Parameter text to typed values, and HTTP GET/POST decoding, with ASMX's exact rules and messages (ASMX-WIRE.md "Parameters"). */

export const FORMAT_MESSAGE = 'Input string was not in a correct format.';

/** A value that cannot be converted; `message` is .NET's inner exception text. */
export class ConversionError extends Error {
  constructor(
    message: string,
    /** .NET's type name, for "Cannot convert X to System.Int64." */
    readonly dotnetType: string,
  ) {
    super(message);
    this.name = 'ConversionError';
  }
}

const INTEGER = /^[\t\n\v\f\r ]*([+-]?)([0-9]+)[\t\n\v\f\r ]*$/;

interface IntegerRange {
  readonly min: bigint;
  readonly max: bigint;
  readonly dotnetType: string;
  readonly tooLarge: string;
}

const INT64: IntegerRange = {
  min: -(2n ** 63n),
  max: 2n ** 63n - 1n,
  dotnetType: 'System.Int64',
  tooLarge: 'Value was either too large or too small for an Int64.',
};
const INT32: IntegerRange = {
  min: -(2n ** 31n),
  max: 2n ** 31n - 1n,
  dotnetType: 'System.Int32',
  tooLarge: 'Value was either too large or too small for an Int32.',
};
const BYTE: IntegerRange = {
  min: 0n,
  max: 255n,
  dotnetType: 'System.Byte',
  tooLarge: 'Value was either too large or too small for an unsigned byte.',
};

function parseInteger(text: string, range: IntegerRange): bigint {
  const match = INTEGER.exec(text);
  if (!match) throw new ConversionError(FORMAT_MESSAGE, range.dotnetType);
  const value = BigInt(match[1] + match[2]);
  if (value < range.min || value > range.max) throw new ConversionError(range.tooLarge, range.dotnetType);
  return value;
}

/** xs:long / System.Int64: surrounding whitespace and a sign allowed, range-checked, never truncated. */
export const parseLong = (text: string): bigint => parseInteger(text, INT64);
export const parseInt32 = (text: string): number => Number(parseInteger(text, INT32));
export const parseByte = (text: string): number => Number(parseInteger(text, BYTE));

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Base64 as XmlSerializer reads it (whitespace ignored, padding optional); null when not base64. */
export function decodeBase64(text: string): Buffer | null {
  const compact = text.replace(/[\t\n\r ]+/g, '');
  if (!BASE64.test(compact)) return null;
  const unpadded = compact.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return null;
  if (compact.length !== unpadded.length && compact.length % 4 !== 0) return null;
  return Buffer.from(unpadded, 'base64');
}

/**
 * byte[] over HTTP GET/POST: one decimal parameter per byte, or one base64 value (ASMX-WIRE.md "We differ"); a single
 * all-digit value is a decimal byte, so `byteFileStream=255` keeps its ASMX meaning.
 */
export function decodeByteArray(values: readonly string[]): Buffer {
  if (values.length === 1 && !/^\s*[+-]?\d+\s*$/.test(values[0]) && !/^0x/i.test(values[0].trim())) {
    const decoded = values[0] === '' ? null : decodeBase64(values[0]);
    if (decoded) return decoded;
  }
  const bytes = Buffer.allocUnsafe(values.length);
  values.forEach((value, i) => {
    bytes[i] = parseByte(value);
  });
  return bytes;
}

/** A percent-encoded parameter whose bytes are not UTF-8. */
export class EncodingError extends Error {}

/**
 * Decodes a query or form name/value: `+` space, `%XX` UTF-8, `%uXXXX` UTF-16 (.NET proxies). An invalid `%` stays as
 * is, as .NET does; invalid UTF-8 is refused, never replaced.
 */
export function decodeFormComponent(text: string): string {
  if (!/[%+]/.test(text)) return text;
  let out = '';
  let octets: number[] = [];
  const flushOctets = () => {
    if (octets.length === 0) return;
    out += utf8Decoder.decode(Uint8Array.from(octets));
    octets = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '%') {
      if ((text[i + 1] === 'u' || text[i + 1] === 'U') && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        flushOctets();
        out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
        i += 5;
        continue;
      }
      if (/^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
        octets.push(parseInt(text.slice(i + 1, i + 3), 16));
        i += 2;
        continue;
      }
    }
    flushOctets();
    out += c === '+' ? ' ' : c;
  }
  flushOctets();
  if (LONE_SURROGATE.test(out)) throw new EncodingError('a %u escape encodes half of a surrogate pair');
  return out;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** UTF-8 bytes to text; bytes that are not UTF-8 are refused (EncodingError), never replaced. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return fatalUtf8.decode(bytes);
  } catch {
    throw new EncodingError('invalid UTF-8');
  }
}
const utf8Decoder = { decode: decodeUtf8 };

/** Parameters of a query string or form body: lower-cased name → every value in order of appearance. */
export type FormValues = Map<string, { name: string; values: string[] }>;

/** Splits and decodes `a=1&b=2`, keyed in lower case; repeated names keep every value (ASMX joins them with ','). */
export function parseFormEncoded(text: string): FormValues {
  const result: FormValues = new Map();
  if (text === '') return result;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeFormComponent(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decodeFormComponent(pair.slice(eq + 1));
    const key = name.toLowerCase();
    const entry = result.get(key);
    if (entry) entry.values.push(value);
    else result.set(key, { name, values: [value] });
  }
  return result;
}
