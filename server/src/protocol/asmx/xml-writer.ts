/**
 * Streaming XML output, no DOM per response, so a 100,000-item listing costs the bytes it writes. The style is .NET
 * XmlWriter's, as the captures show: `<a x="1" />`, and for HTTP GET/POST a declaration and two-space indentation.
 */

import { TimeSlices } from '../../time-slices';

/** Where the writer's chunks go. `write` may return a promise to apply back-pressure. */
export interface XmlSink {
  write(chunk: string): void | Promise<void>;
}

export type AttributeValue = string | number | bigint | boolean | null | undefined;
export type Attributes = ReadonlyArray<readonly [string, AttributeValue]>;

// Characters XML 1.0 cannot carry at all (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/F).
// They can only come from HTTP GET/POST input; they are replaced rather than written broken.
// eslint-disable-next-line no-control-regex
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const TEXT_SPECIAL = /[&<>\r]/;
const ATTRIBUTE_SPECIAL = /[&<>"\t\n\r]/;
// One test for anything escapeText or escapeAttribute may change (escaped characters, controls, surrogates, U+FFFE/F):
// most values (names, hashes, paths) have none and are returned as they are.
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

const FLUSH_AT = 32 * 1024;

/** A newline and two spaces per level, kept for the few depths documents have. */
const INDENTATIONS = Array.from({ length: 8 }, (_, depth) => '\n' + '  '.repeat(depth));
const indentation = (depth: number) => INDENTATIONS[depth] ?? '\n' + '  '.repeat(depth);

export class XmlWriter {
  private buffer = '';
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
    this.buffer += markup;
  }

  start(name: string, attributes?: Attributes): void {
    this.beginChild();
    this.buffer += `<${name}${formatAttributes(attributes)}${this.topNamespace()}`;
    this.open.push(name);
    this.startTagOpen = true;
  }

  /** An element with attributes only: `<name a="1" />`. */
  empty(name: string, attributes?: Attributes): void {
    this.emptyFormatted(name, formatAttributes(attributes));
  }

  /** `empty` with attributes already formatted: listing items are built as one string each, not an array each. */
  emptyFormatted(name: string, formattedAttributes: string): void {
    this.beginChild();
    this.buffer += `<${name}${formattedAttributes}${this.topNamespace()} />`;
  }

  /** An element holding text: `<name a="1">text</name>`. */
  textElement(name: string, attributes: Attributes | undefined, text: string): void {
    this.beginChild();
    this.buffer += `<${name}${formatAttributes(attributes)}${this.topNamespace()}>${escapeText(text)}</${name}>`;
  }

  end(): void {
    const name = this.open.pop();
    if (name === undefined) throw new Error('XmlWriter.end() without an open element');
    if (this.startTagOpen) {
      this.buffer += ' />';
      this.startTagOpen = false;
    } else {
      if (this.options.indent) this.buffer += indentation(this.open.length);
      this.buffer += `</${name}>`;
    }
  }

  /**
   * Hands what is buffered to the sink once enough has accumulated; await it for back-pressure, and to give the event
   * loop back after a slice (a fast reader never fills the socket, so 100,000 items would go in one turn).
   */
  flushIfFull(): void | Promise<void> {
    if (this.buffer.length < FLUSH_AT) return;
    const written = this.flush();
    // 'drain' may come in the same turn (the kernel took the bytes at once): waiting for it is no pause.
    if (written) return written.then(() => this.slices.pauseIfDue());
    return this.slices.pauseIfDue();
  }

  flush(): void | Promise<void> {
    if (this.buffer === '') return;
    const chunk = this.buffer;
    this.buffer = '';
    return this.sink.write(chunk);
  }

  private beginChild(): void {
    if (this.startTagOpen) {
      this.buffer += '>';
      this.startTagOpen = false;
    }
    if (this.options.indent && this.topWritten) this.buffer += indentation(this.open.length);
  }

  private topNamespace(): string {
    if (this.topWritten) return '';
    this.topWritten = true;
    return this.options.emptyNamespaceOnTop ? ' xmlns=""' : '';
  }
}

/** A sink that collects everything into one string (small documents, tests). */
export class StringSink implements XmlSink {
  private readonly chunks: string[] = [];
  write(chunk: string): void {
    this.chunks.push(chunk);
  }
  toString(): string {
    return this.chunks.join('');
  }
}
