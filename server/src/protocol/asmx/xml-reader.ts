/**
 * A small strict XML reader for SOAP requests: refuses any DTD, resolves namespaces, bounds depth and element count
 * while reading, and reports errors at .NET's line and position — less code than taming a general parser.
 */

export interface XmlAttribute {
  readonly ns: string;
  readonly local: string;
  readonly value: string;
}

export interface XmlElement {
  readonly ns: string;
  readonly local: string;
  readonly attributes: readonly XmlAttribute[];
  readonly children: XmlElement[];
  /** Character data directly inside this element (text and CDATA), line ends normalized. */
  text: string;
  /** Offset of the element's name in the source (just after '<'). */
  readonly nameOffset: number;
  /** Offset just after the element's end tag (or '/>'); -1 while the element is still open. */
  endOffset: number;
}

export interface XmlLimits {
  readonly maxDepth: number;
  readonly maxElements: number;
}

export type XmlErrorKind = 'syntax' | 'dtd' | 'limit' | 'empty';

export class XmlReadError extends Error {
  constructor(
    readonly kind: XmlErrorKind,
    message: string,
    readonly offset: number,
    /** The tree read before the error, so routing can tell how far the document was readable. */
    readonly partialRoot: XmlElement | null,
  ) {
    super(message);
    this.name = 'XmlReadError';
  }
}

export const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';
export const XML_NS = 'http://www.w3.org/XML/1998/namespace';

const MAX_ATTRIBUTES = 256;

/** Line and 1-based position of an offset, counted the way .NET's XmlReader reports them. */
export function linePosition(source: string, offset: number): { line: number; position: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < source.length; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, position: offset - lineStart + 1 };
}

/** Where a reader stands after an element (next name for a tag, else next text): where .NET reports a value's error. */
export function offsetAfter(source: string, element: XmlElement): number {
  const end = element.endOffset;
  if (end < 0 || end >= source.length) return end < 0 ? source.length : end;
  if (source.charCodeAt(end) !== 60 /* < */) return end;
  const next = source.charCodeAt(end + 1);
  return next === 47 /* / */ ? end + 2 : end + 1;
}

function isNameStart(c: number): boolean {
  return (
    (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58 || (c >= 0xc0 && c !== 0xd7 && c !== 0xf7)
  );
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 0xb7;
}

function isXmlWhitespace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** Characters XML 1.0 allows in a document (surrogate pairs are checked where they occur). */
function isXmlChar(c: number): boolean {
  return c === 9 || c === 10 || c === 13 || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd);
}

interface OpenElement {
  readonly element: XmlElement;
  readonly qname: string;
  readonly scope: Map<string, string>;
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };

class Reader {
  private pos = 0;
  private elementCount = 0;
  private root: XmlElement | null = null;
  private readonly stack: OpenElement[] = [];

  constructor(
    private readonly src: string,
    private readonly limits: XmlLimits,
  ) {}

  fail(message: string, at = this.pos, kind: XmlErrorKind = 'syntax'): never {
    const { line, position } = linePosition(this.src, at);
    const suffix = kind === 'syntax' ? ` Line ${line}, position ${position}.` : '';
    throw new XmlReadError(kind, message + suffix, at, this.root);
  }

  read(): XmlElement {
    const src = this.src;
    if (src.charCodeAt(0) === 0xfeff) this.pos = 1;
    this.skipWhitespace();
    if (this.pos >= src.length) throw new XmlReadError('empty', 'Root element is missing.', this.pos, null);
    if (src.startsWith('<?xml', this.pos) && isXmlWhitespaceOrEnd(src.charCodeAt(this.pos + 5))) this.readDeclaration();
    this.readMisc();
    if (this.pos >= src.length) throw new XmlReadError('empty', 'Root element is missing.', this.pos, null);
    if (src.charCodeAt(this.pos) !== 60 || !isNameStart(src.charCodeAt(this.pos + 1))) {
      this.fail('Data at the root level is invalid.');
    }
    this.readStartTag();
    this.readContent();
    this.readMisc();
    if (this.pos < src.length) this.fail('There are multiple root elements.');
    return this.root!;
  }

  private skipWhitespace(): void {
    while (this.pos < this.src.length && isXmlWhitespace(this.src.charCodeAt(this.pos))) this.pos++;
  }

  private readDeclaration(): void {
    const end = this.src.indexOf('?>', this.pos);
    if (end < 0) this.fail('Unexpected end of file while parsing the XML declaration.');
    this.pos = end + 2;
  }

  /** Comments, processing instructions and whitespace around the root; a DOCTYPE is refused. */
  private readMisc(): void {
    const src = this.src;
    for (;;) {
      this.skipWhitespace();
      if (src.startsWith('<!--', this.pos)) this.readComment();
      else if (src.startsWith('<?', this.pos)) this.readProcessingInstruction();
      else if (src.startsWith('<!DOCTYPE', this.pos) || src.startsWith('<!', this.pos)) this.refuseDtd();
      else return;
    }
  }

  private refuseDtd(): never {
    this.fail('DTD is prohibited in this XML document.', this.pos, 'dtd');
  }

  private readComment(): void {
    const end = this.src.indexOf('-->', this.pos + 4);
    if (end < 0) this.fail('Unexpected end of file while parsing Comment has occurred.');
    this.checkChars(this.pos + 4, end);
    this.pos = end + 3;
  }

  private readProcessingInstruction(): void {
    const start = this.pos + 2;
    let i = start;
    while (i < this.src.length && isNameChar(this.src.charCodeAt(i))) i++;
    const target = this.src.slice(start, i);
    if (target === '' || target.toLowerCase() === 'xml') this.fail('Unexpected XML declaration.', this.pos);
    const end = this.src.indexOf('?>', i);
    if (end < 0) this.fail('Unexpected end of file while parsing the processing instruction.');
    this.checkChars(i, end);
    this.pos = end + 2;
  }

  private checkChars(from: number, to: number): void {
    const src = this.src;
    for (let i = from; i < to; i++) {
      const c = src.charCodeAt(i);
      if (c >= 0x20 && c < 0xd800) continue;
      if (c >= 0xd800 && c <= 0xdbff) {
        const next = src.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          i++;
          continue;
        }
        this.fail('Invalid surrogate character in the document.', i);
      }
      if (!isXmlChar(c)) this.fail(`'${describeChar(c)}', hexadecimal value 0x${c.toString(16).toUpperCase().padStart(2, '0')}, is an invalid character.`, i);
    }
  }

  /** Everything inside the root element, until it closes. */
  private readContent(): void {
    const src = this.src;
    while (this.stack.length > 0) {
      const top = this.stack[this.stack.length - 1].element;
      const lt = src.indexOf('<', this.pos);
      if (lt < 0) {
        this.appendText(top, this.pos, src.length);
        this.pos = src.length;
        const open = this.stack.map((e) => e.qname).join(', ');
        this.fail(`Unexpected end of file has occurred. The following elements are not closed: ${open}.`);
      }
      if (lt > this.pos) this.appendText(top, this.pos, lt);
      this.pos = lt;
      const c = src.charCodeAt(lt + 1);
      if (c === 47 /* / */) this.readEndTag();
      else if (c === 33 /* ! */) {
        if (src.startsWith('<!--', lt)) this.readComment();
        else if (src.startsWith('<![CDATA[', lt)) this.readCdata(top);
        else this.refuseDtd();
      } else if (c === 63 /* ? */) this.readProcessingInstruction();
      else this.readStartTag();
    }
  }

  private readCdata(into: XmlElement): void {
    const start = this.pos + 9;
    const end = this.src.indexOf(']]>', start);
    if (end < 0) this.fail('Unexpected end of file while parsing CDATA has occurred.');
    this.checkChars(start, end);
    into.text += normalizeLineEnds(this.src.slice(start, end));
    this.pos = end + 3;
  }

  private appendText(into: XmlElement, from: number, to: number): void {
    const raw = this.src.slice(from, to);
    if (raw.includes(']]>')) this.fail("']]>' is not allowed in character data.", from + raw.indexOf(']]>'));
    this.checkChars(from, to);
    into.text += normalizeLineEnds(raw.includes('&') ? this.decodeReferences(raw, from) : raw);
  }

  private decodeReferences(raw: string, baseOffset: number): string {
    let out = '';
    let last = 0;
    for (let amp = raw.indexOf('&'); amp >= 0; amp = raw.indexOf('&', last)) {
      out += raw.slice(last, amp);
      const semi = raw.indexOf(';', amp);
      if (semi < 0) this.fail('An error occurred while parsing EntityName.', baseOffset + amp);
      const name = raw.slice(amp + 1, semi);
      if (name.startsWith('#')) {
        const code = name[1] === 'x' ? parseIntStrict(name.slice(2), 16) : parseIntStrict(name.slice(1), 10);
        if (code === null || !isXmlCodePoint(code)) this.fail(`Invalid character reference '&${name};'.`, baseOffset + amp);
        out += String.fromCodePoint(code);
      } else if (Object.hasOwn(PREDEFINED, name)) {
        out += PREDEFINED[name];
      } else {
        this.fail(`Reference to undeclared entity '${name}'.`, baseOffset + amp);
      }
      last = semi + 1;
    }
    return out + raw.slice(last);
  }

  private readName(): string {
    const src = this.src;
    const start = this.pos;
    if (!isNameStart(src.charCodeAt(start))) this.fail(`Name cannot begin with the '${src[start] ?? 'end of file'}' character.`);
    let i = start + 1;
    while (i < src.length && isNameChar(src.charCodeAt(i))) i++;
    this.pos = i;
    return src.slice(start, i);
  }

  private readStartTag(): void {
    const src = this.src;
    const tagStart = this.pos;
    this.pos++;
    const nameOffset = this.pos;
    const qname = this.readName();
    const rawAttributes: Array<{ qname: string; value: string; offset: number }> = [];
    for (;;) {
      const before = this.pos;
      this.skipWhitespace();
      const c = src.charCodeAt(this.pos);
      if (c === 62 /* > */ || c === 47 /* / */) break;
      if (this.pos === before) this.fail(`'${src[this.pos] ?? 'EOF'}' is an unexpected token. Expecting white space.`);
      if (this.pos >= src.length) this.fail('Unexpected end of file while parsing Name has occurred.');
      const attrOffset = this.pos;
      const attrName = this.readName();
      this.skipWhitespace();
      if (src.charCodeAt(this.pos) !== 61 /* = */) this.fail("'=' is expected.");
      this.pos++;
      this.skipWhitespace();
      const quote = src.charCodeAt(this.pos);
      if (quote !== 34 && quote !== 39) this.fail('Attribute values must be enclosed in quotes.');
      const valueStart = this.pos + 1;
      const valueEnd = src.indexOf(quote === 34 ? '"' : "'", valueStart);
      if (valueEnd < 0) this.fail('Unexpected end of file while parsing an attribute value.');
      const rawValue = src.slice(valueStart, valueEnd);
      const lt = rawValue.indexOf('<');
      if (lt >= 0) this.fail("'<', hexadecimal value 0x3C, is an invalid attribute character.", valueStart + lt);
      this.checkChars(valueStart, valueEnd);
      const decoded = rawValue.includes('&') ? this.decodeReferences(rawValue, valueStart) : rawValue;
      for (const earlier of rawAttributes) if (earlier.qname === attrName) this.fail(`'${attrName}' is a duplicate attribute name.`, attrOffset);
      if (rawAttributes.length >= MAX_ATTRIBUTES) this.fail('Too many attributes on one element.', attrOffset, 'limit');
      // Attribute-value normalization: each tab and line end is a space.
      const value = ATTRIBUTE_WHITESPACE.test(decoded) ? decoded.replace(ATTRIBUTE_WHITESPACE_ALL, ' ') : decoded;
      rawAttributes.push({ qname: attrName, value, offset: attrOffset });
      this.pos = valueEnd + 1;
    }
    const selfClosing = src.charCodeAt(this.pos) === 47;
    if (selfClosing) {
      if (src.charCodeAt(this.pos + 1) !== 62) this.fail("'>' is expected.", this.pos + 1);
      this.pos += 2;
    } else {
      this.pos += 1;
    }

    if (++this.elementCount > this.limits.maxElements) {
      this.fail(`The document has more than ${this.limits.maxElements} elements.`, tagStart, 'limit');
    }
    if (this.stack.length + 1 > this.limits.maxDepth) {
      this.fail(`The document is nested deeper than ${this.limits.maxDepth} elements.`, tagStart, 'limit');
    }

    const parentScope = this.stack.length > 0 ? this.stack[this.stack.length - 1].scope : DEFAULT_SCOPE;
    let scope = parentScope;
    for (const a of rawAttributes) {
      if (a.qname === 'xmlns' || a.qname.startsWith('xmlns:')) {
        if (scope === parentScope) scope = new Map(parentScope);
        const prefix = a.qname === 'xmlns' ? '' : a.qname.slice(6);
        if (prefix !== '' && a.value === '') this.fail(`Cannot use a prefix with an empty namespace.`, a.offset);
        scope.set(prefix, a.value);
      }
    }
    const attributes: XmlAttribute[] = rawAttributes.length === 0 ? NO_ATTRIBUTES : [];
    for (const a of rawAttributes) {
      if (a.qname === 'xmlns') {
        attributes.push({ ns: XMLNS_NS, local: 'xmlns', value: a.value });
      } else if (a.qname.startsWith('xmlns:')) {
        attributes.push({ ns: XMLNS_NS, local: a.qname.slice(6), value: a.value });
      } else {
        const colon = a.qname.indexOf(':');
        // An attribute without a prefix is in no namespace.
        const ns = colon < 0 ? '' : this.namespaceOf(scope, a.qname.slice(0, colon), a.offset);
        attributes.push({ ns, local: colon < 0 ? a.qname : a.qname.slice(colon + 1), value: a.value });
      }
    }
    const colon = qname.indexOf(':');
    const ns = colon < 0 ? (scope.get('') ?? '') : this.namespaceOf(scope, qname.slice(0, colon), nameOffset);
    const local = colon < 0 ? qname : qname.slice(colon + 1);
    const element: XmlElement = { ns, local, attributes, children: [], text: '', nameOffset, endOffset: -1 };
    if (this.stack.length > 0) this.stack[this.stack.length - 1].element.children.push(element);
    else this.root = element;

    if (selfClosing) element.endOffset = this.pos;
    else this.stack.push({ element, qname, scope });
  }

  private namespaceOf(scope: ReadonlyMap<string, string>, prefix: string, offset: number): string {
    const ns = scope.get(prefix);
    if (ns === undefined) this.fail(`'${prefix}' is an undeclared prefix.`, offset);
    return ns;
  }

  private readEndTag(): void {
    const src = this.src;
    this.pos += 2;
    const nameOffset = this.pos;
    const qname = this.readName();
    this.skipWhitespace();
    if (src.charCodeAt(this.pos) !== 62) this.fail("'>' is expected.");
    this.pos++;
    const open = this.stack.pop()!;
    if (open.qname !== qname) {
      this.fail(`The '${open.qname}' start tag does not match the end tag of '${qname}'.`, nameOffset);
    }
    open.element.endOffset = this.pos;
  }
}

const DEFAULT_SCOPE: Map<string, string> = new Map([['xml', XML_NS]]);
/** Shared by every element without attributes: attributes are never added after reading. */
const NO_ATTRIBUTES: XmlAttribute[] = Object.freeze([]) as unknown as XmlAttribute[];
const ATTRIBUTE_WHITESPACE = /[\t\n\r]/;
const ATTRIBUTE_WHITESPACE_ALL = /[\t\n\r]/g;

function isXmlWhitespaceOrEnd(c: number): boolean {
  return Number.isNaN(c) || isXmlWhitespace(c);
}

function isXmlCodePoint(c: number): boolean {
  return c === 9 || c === 10 || c === 13 || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

function parseIntStrict(digits: string, radix: 10 | 16): number | null {
  const pattern = radix === 16 ? /^[0-9a-fA-F]{1,6}$/ : /^[0-9]{1,7}$/;
  return pattern.test(digits) ? parseInt(digits, radix) : null;
}

function normalizeLineEnds(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

function describeChar(c: number): string {
  return c < 0x20 ? '' : String.fromCharCode(c);
}

/** Reads a whole XML document. Throws XmlReadError on anything that is not well-formed or over a limit. */
export function readXml(source: string, limits: XmlLimits): XmlElement {
  return new Reader(source, limits).read();
}

/** Whether an element carries xsi:nil="true". */
export function isNil(element: XmlElement): boolean {
  return element.attributes.some(
    (a) => a.ns === 'http://www.w3.org/2001/XMLSchema-instance' && a.local === 'nil' && (a.value.trim() === 'true' || a.value.trim() === '1'),
  );
}
