/**
 * Streaming XML output: escaped correctly, encoded (UTF-8) straight into Buffers as it is written,
 * flushed in chunks. No DOM is built per response, and no document-sized string either: a
 * 100,000-item listing, or 1,000 paths of 64 KiB, costs the bytes it writes and little more. The
 * encoding is done here, within the writer's time slices, rather than by the socket's write later
 * in the same turn of the event loop (docs/design.md §8, "Long work in slices").
 *
 * The style follows .NET's XmlWriter, which the captures show: empty elements as `<a x="1" />`,
 * and for HTTP GET/POST documents a declaration, a newline and two-space indentation.
 */

import { TimeSlices } from '../time-slices';

/**
 * Where the writer's chunks go, UTF-8 encoded; the writer never touches a chunk again once handed
 * over. `write` may return a promise to apply back-pressure.
 */
export interface XmlSink {
  write(chunk: Buffer): void | Promise<void>;
}

export type AttributeValue = string | number | bigint | boolean | null | undefined;
export type Attributes = ReadonlyArray<readonly [string, AttributeValue]>;

// Characters XML 1.0 cannot carry at all (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/F).
// They can only come from HTTP GET/POST input; they are replaced rather than written broken.
// eslint-disable-next-line no-control-regex
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const TEXT_SPECIAL = /[&<>\r]/;
const ATTRIBUTE_SPECIAL = /[&<>"\t\n\r]/;
// One test that finds anything escapeText or escapeAttribute may change: the characters they escape,
// every control character, every surrogate (a lone one is replaced; pairs take the full checks and
// pass) and U+FFFE/F. Most values (names, hashes, paths) have none, and are returned as they are.
// eslint-disable-next-line no-control-regex
const MAY_NEED_ESCAPING = /[&<>"\u0000-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

function replaceInvalid(value: string): string {
  return value.replace(INVALID_XML_CHARS, '\uFFFD');
}

export function escapeText(value: string): string {
  if (!MAY_NEED_ESCAPING.test(value)) return value;
  let out = value;
  if (TEXT_SPECIAL.test(out)) {
    out = out.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
  }
  INVALID_XML_CHARS.lastIndex = 0;
  return INVALID_XML_CHARS.test(out) ? replaceInvalid(out) : out;
}

export function escapeAttribute(value: string): string {
  if (!MAY_NEED_ESCAPING.test(value)) return value;
  let out = value;
  if (ATTRIBUTE_SPECIAL.test(out)) {
    out = out
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/\t/g, '&#x9;')
      .replace(/\n/g, '&#xA;')
      .replace(/\r/g, '&#xD;');
  }
  INVALID_XML_CHARS.lastIndex = 0;
  return INVALID_XML_CHARS.test(out) ? replaceInvalid(out) : out;
}

/** ` name="value"`, the value escaped; "" when the value is null or undefined (the attribute is left out). */
export function formatAttribute(name: string, value: AttributeValue): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? escapeAttribute(value) : typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
  return ` ${name}="${text}"`;
}

export function formatAttributes(attributes: Attributes | undefined): string {
  if (!attributes) return '';
  let out = '';
  for (const [name, value] of attributes) out += formatAttribute(name, value);
  return out;
}

export interface XmlWriterOptions {
  /** Newline and two-space indentation, as ASMX writes HTTP GET/POST documents. */
  readonly indent: boolean;
  /** Adds xmlns="" to the top element, as ASMX does for an XML result inside <OpResult>. */
  readonly emptyNamespaceOnTop: boolean;
}

/** Bytes buffered before flushIfFull hands them over. */
const FLUSH_AT = 32 * 1024;
/** A writer's first Buffer (most documents are small), and each one after a flush (a big one). */
const FIRST_BYTES = 8 * 1024;
const NEXT_BYTES = 64 * 1024;
/** The most bytes UTF-8 takes per UTF-16 code unit (a surrogate pair: 4 bytes for 2 units). */
const MAX_BYTES_PER_UNIT = 3;

/** A newline and two spaces per level, kept for the few depths documents have. */
const INDENTATIONS = Array.from({ length: 8 }, (_, depth) => '\n' + '  '.repeat(depth));
const indentation = (depth: number) => INDENTATIONS[depth] ?? '\n' + '  '.repeat(depth);

export class XmlWriter {
  /** The bytes written since the last flush: bytes.subarray(0, used). */
  private bytes = Buffer.allocUnsafe(FIRST_BYTES);
  private used = 0;
  private readonly slices = new TimeSlices();
  private readonly open: string[] = [];
  /** Whether the element on top of the stack still has its start tag open (`<a x="1"`). */
  private startTagOpen = false;
  private topWritten = false;

  constructor(
    private readonly sink: XmlSink,
    private readonly options: XmlWriterOptions,
  ) {}

  /** Raw markup written as is: envelopes and declarations, never user data. */
  raw(markup: string): void {
    this.put(markup);
  }

  start(name: string, attributes?: Attributes): void {
    this.beginChild();
    this.put(`<${name}${formatAttributes(attributes)}${this.topNamespace()}`);
    this.open.push(name);
    this.startTagOpen = true;
  }

  /** An element with attributes only: `<name a="1" />`. */
  empty(name: string, attributes?: Attributes): void {
    this.emptyFormatted(name, formatAttributes(attributes));
  }

  /**
   * `empty` with its attributes already formatted (formatAttribute, formatAttributes), in pieces
   * written one after the other: for the items of a listing, whose one long value (a path of up
   * to 64 KiB) is then encoded where it is, never first copied into a longer string.
   */
  emptyFormatted(name: string, ...formattedAttributes: string[]): void {
    this.beginChild();
    this.put(`<${name}`);
    for (const piece of formattedAttributes) this.put(piece);
    this.put(`${this.topNamespace()} />`);
  }

  /** An element holding text: `<name a="1">text</name>`. */
  textElement(name: string, attributes: Attributes | undefined, text: string): void {
    this.beginChild();
    this.put(`<${name}${formatAttributes(attributes)}${this.topNamespace()}>${escapeText(text)}</${name}>`);
  }

  end(): void {
    const name = this.open.pop();
    if (name === undefined) throw new Error('XmlWriter.end() without an open element');
    if (this.startTagOpen) {
      this.put(' />');
      this.startTagOpen = false;
    } else {
      if (this.options.indent) this.put(indentation(this.open.length));
      this.put(`</${name}>`);
    }
  }

  /**
   * Hands what is buffered to the sink once enough has accumulated; await it to respect
   * back-pressure, and to give the event loop back once this document has held it for a slice (a
   * client that reads fast never fills the kernel's socket buffer, and 100,000 items would
   * otherwise go out in one turn of the event loop).
   */
  flushIfFull(): void | Promise<void> {
    if (this.used < FLUSH_AT) return;
    const written = this.flush();
    // A socket's 'drain' may come in the same turn of the event loop (the kernel took the bytes at
    // once, as on loopback to a fast reader): waiting for it is no pause.
    if (written) return written.then(() => this.slices.pauseIfDue());
    return this.slices.pauseIfDue();
  }

  flush(): void | Promise<void> {
    if (this.used === 0) return;
    const chunk = this.bytes.subarray(0, this.used);
    // The sink may keep the chunk (a socket writes it later): the next bytes go into a new Buffer.
    this.bytes = Buffer.allocUnsafe(NEXT_BYTES);
    this.used = 0;
    return this.sink.write(chunk);
  }

  /** Encodes `text` after what is buffered, growing the Buffer when it might not fit. */
  private put(text: string): void {
    if (text.length * MAX_BYTES_PER_UNIT > this.bytes.length - this.used) {
      const needed = this.used + Buffer.byteLength(text);
      if (needed > this.bytes.length) {
        const grown = Buffer.allocUnsafe(Math.max(needed, 2 * this.bytes.length));
        this.bytes.copy(grown, 0, 0, this.used);
        this.bytes = grown;
      }
    }
    this.used += this.bytes.write(text, this.used);
  }

  private beginChild(): void {
    if (this.startTagOpen) {
      this.put('>');
      this.startTagOpen = false;
    }
    if (this.options.indent && this.topWritten) this.put(indentation(this.open.length));
  }

  private topNamespace(): string {
    if (this.topWritten) return '';
    this.topWritten = true;
    return this.options.emptyNamespaceOnTop ? ' xmlns=""' : '';
  }
}

/** A sink that collects everything (small documents, tests). */
export class StringSink implements XmlSink {
  private readonly chunks: Buffer[] = [];
  write(chunk: Buffer): void {
    this.chunks.push(chunk);
  }
  /** Everything written, in a Buffer of its own size. */
  toBuffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
  toString(): string {
    return this.toBuffer().toString('utf8');
  }
}
