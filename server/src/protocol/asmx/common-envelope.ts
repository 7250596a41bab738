/**
 * Reads the envelope every SOAP client sends (envelope, empty header, body, one text child per parameter) in place,
 * without the general reader's tree, which cost a quarter of a SOAP call's CPU. Anything else (DTD, comment, CDATA,
 * reference, CR, other attributes, xsi:nil, non-ASCII names…) answers undefined and goes to the general reader;
 * what it accepts it reads exactly as that reader does (common-envelope.test.ts holds them side by side).
 */
import type { OperationSpec } from '../../catalog/operations';
import { bindParameterTexts, type BoundCall } from './binding';
import type { XmlLimits } from './xml-reader';

/** Elements deep: envelope, body, request, parameter. */
const DEPTH = 4;

export interface CommonEnvelope {
  /** The envelope element's namespace (SOAP 1.1 or 1.2 when it is a SOAP envelope). */
  readonly ns: string;
  readonly local: string;
  /** The body's first child: the request element. Undefined when the body is empty. */
  readonly request: { readonly ns: string; readonly local: string } | undefined;
  /** The request element's children, in document order. */
  readonly params: ReadonlyArray<{ readonly ns: string; readonly local: string; readonly text: string }>;
}

/** A character of an ASCII name: letter, digit, '_', '-' or '.' (name starts: letter or '_'). */
function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45 || c === 46;
}
const isNameStart = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
const isWhitespace = (c: number) => c === 32 || c === 10 || c === 9;

/**
 * Whether a parameter's text in `src` is taken as it is: no `]]>`, no reference, nothing below U+0020 but tab and LF,
 * nothing from U+D800 on (the general reader judges those). Read in place: a slice cost a third of the envelope.
 */
function plainText(src: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = src.charCodeAt(i);
    if (c < 32 ? c !== 9 && c !== 10 : c >= 0xd800 || c === 38) return false;
    // `]]>` is not allowed in character data.
    if (c === 62 && i >= start + 2 && src.charCodeAt(i - 1) === 93 && src.charCodeAt(i - 2) === 93) return false;
  }
  return true;
}

/** A namespace URI taken as it is: plain text without markup, tab or line end (which attribute values normalize). */
function plainUri(src: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = src.charCodeAt(i);
    if (c < 32 || c >= 0xd800 || c === 38 || c === 60) return false;
  }
  return true;
}

interface StartTag {
  readonly prefix: string;
  readonly local: string;
  readonly ns: string;
  readonly empty: boolean;
  /** Where its name (`prefix:local` as written) starts in the text, and where it ends: what its end tag must repeat. */
  readonly nameStart: number;
  readonly nameEnd: number;
}

function atXmlns(src: string, pos: number): boolean {
  return (
    src.charCodeAt(pos) === 120 && src.charCodeAt(pos + 1) === 109 && src.charCodeAt(pos + 2) === 108 && src.charCodeAt(pos + 3) === 110 && src.charCodeAt(pos + 4) === 115
  );
}

class Scanner {
  pos = 0;
  /** Namespace declarations in scope, innermost last: prefix, uri, prefix, uri… ('' is the default namespace). */
  private readonly declarations: string[] = [];
  /** How many entries of `declarations` each open element added. */
  private readonly added: number[] = [];

  constructor(readonly src: string) {}

  skipWhitespace(): void {
    const src = this.src;
    let pos = this.pos;
    while (pos < src.length && isWhitespace(src.charCodeAt(pos))) pos++;
    this.pos = pos;
  }

  /** An ASCII name at pos (no colon); '' when there is none. */
  private ncName(): string {
    const src = this.src;
    const start = this.pos;
    if (!isNameStart(src.charCodeAt(start))) return '';
    let pos = start + 1;
    while (isNameChar(src.charCodeAt(pos))) pos++;
    this.pos = pos;
    return src.slice(start, pos);
  }

  /** `<name decl*` then `>` or `/>`; undefined for anything else (other attributes included). */
  startTag(): StartTag | undefined {
    const src = this.src;
    if (src.charCodeAt(this.pos) !== 60) return undefined;
    this.pos++;
    const nameStart = this.pos;
    let prefix = '';
    let local = this.ncName();
    if (local === '') return undefined;
    if (src.charCodeAt(this.pos) === 58) {
      this.pos++;
      prefix = local;
      local = this.ncName();
      if (local === '') return undefined;
    }
    const nameEnd = this.pos;
    const before = this.declarations.length;
    for (;;) {
      const at = this.pos;
      this.skipWhitespace();
      if (this.pos === at || !atXmlns(src, this.pos)) {
        this.pos = at;
        break;
      }
      this.pos += 5;
      let declared = '';
      if (src.charCodeAt(this.pos) === 58) {
        this.pos++;
        declared = this.ncName();
        if (declared === '') return undefined;
      }
      this.skipWhitespace();
      if (src.charCodeAt(this.pos) !== 61) return undefined; // '=': xmlnsfoo="…" is an attribute
      this.pos++;
      this.skipWhitespace();
      const quote = src.charCodeAt(this.pos);
      if (quote !== 34 && quote !== 39) return undefined;
      const end = src.indexOf(quote === 34 ? '"' : "'", this.pos + 1);
      if (end < 0) return undefined;
      // Markup, a reference, a tab or line end (normalized in attribute values) are the general reader's.
      if (!plainUri(src, this.pos + 1, end)) return undefined;
      const uri = src.slice(this.pos + 1, end);
      // Undeclaring a prefix, binding xml or xmlns, or declaring one twice: the general reader decides.
      if ((declared !== '' && uri === '') || declared === 'xml' || declared === 'xmlns') return undefined;
      for (let i = before; i < this.declarations.length; i += 2) if (this.declarations[i] === declared) return undefined;
      this.declarations.push(declared, uri);
      this.pos = end + 1;
    }
    this.skipWhitespace();
    let empty = false;
    if (src.charCodeAt(this.pos) === 47 && src.charCodeAt(this.pos + 1) === 62) {
      empty = true;
      this.pos += 2;
    } else if (src.charCodeAt(this.pos) === 62) {
      this.pos++;
    } else {
      return undefined;
    }
    const ns = this.resolve(prefix);
    if (ns === undefined) return undefined;
    // Popped rather than cut by setting the length, which V8 does not do in optimized code.
    if (empty) while (this.declarations.length > before) this.declarations.pop();
    else this.added.push(this.declarations.length - before);
    return { prefix, local, ns, empty, nameStart, nameEnd };
  }

  /** Whether `</` is at pos. */
  atEndTag(): boolean {
    return this.src.charCodeAt(this.pos) === 60 && this.src.charCodeAt(this.pos + 1) === 47;
  }

  /** `</prefix:local>` at pos, closing the innermost open element. */
  endTag(tag: StartTag): boolean {
    const src = this.src;
    if (!this.atEndTag()) return false;
    // The name as the start tag wrote it, compared in place (startsWith of a slice is a call into
    // the runtime), then no more of a name after it.
    const pos = this.pos + 2;
    const length = tag.nameEnd - tag.nameStart;
    for (let i = 0; i < length; i++) if (src.charCodeAt(pos + i) !== src.charCodeAt(tag.nameStart + i)) return false;
    const next = src.charCodeAt(pos + length);
    if (isNameChar(next) || next === 58) return false;
    this.pos = pos + length;
    this.skipWhitespace();
    if (src.charCodeAt(this.pos) !== 62) return false;
    this.pos++;
    for (let added = this.added.pop() ?? 0; added > 0; added--) this.declarations.pop();
    return true;
  }

  private resolve(prefix: string): string | undefined {
    const declarations = this.declarations;
    for (let i = declarations.length - 2; i >= 0; i -= 2) if (declarations[i] === prefix) return declarations[i + 1];
    return prefix === '' ? '' : undefined;
  }

  /** Character data up to the next '<'; undefined when it holds a reference or `]]>`. */
  text(): string | undefined {
    const src = this.src;
    const end = src.indexOf('<', this.pos);
    if (end < 0 || !plainText(src, this.pos, end)) return undefined;
    const text = src.slice(this.pos, end);
    this.pos = end;
    return text;
  }
}

/** The envelope of `text` when it has the common shape (see the top of this file); undefined otherwise. */
export function readCommonEnvelope(text: string, limits: XmlLimits): CommonEnvelope | undefined {
  if (limits.maxDepth < DEPTH) return undefined;
  const scan = new Scanner(text);
  if (text.charCodeAt(0) === 0xfeff) scan.pos = 1;
  scan.skipWhitespace();
  if (text.startsWith('<?xml', scan.pos)) {
    // As the general reader: the declaration is passed over up to its end.
    const end = text.indexOf('?>', scan.pos);
    if (end < 0) return undefined;
    scan.pos = end + 2;
    scan.skipWhitespace();
  }

  const envelope = scan.startTag();
  if (!envelope || envelope.empty) return undefined;
  scan.skipWhitespace();
  let body = scan.startTag();
  if (!body) return undefined;
  if (body.local === 'Header' && body.ns === envelope.ns) {
    // An empty header only: entries (mustUnderstand) are the general reader's.
    if (!body.empty) {
      scan.skipWhitespace();
      if (!scan.endTag(body)) return undefined;
    }
    scan.skipWhitespace();
    body = scan.startTag();
    if (!body) return undefined;
  }
  if (body.local !== 'Body' || body.ns !== envelope.ns || body.empty) return undefined;
  scan.skipWhitespace();

  let request: CommonEnvelope['request'];
  const params: Array<{ ns: string; local: string; text: string }> = [];
  if (!scan.atEndTag()) {
    const element = scan.startTag();
    if (!element) return undefined;
    request = { ns: element.ns, local: element.local };
    if (!element.empty) {
      for (;;) {
        scan.skipWhitespace();
        if (scan.atEndTag()) break; // the request element ends
        const param = scan.startTag();
        if (!param) return undefined;
        if (params.length + DEPTH > limits.maxElements) return undefined;
        let value: string | undefined = '';
        if (!param.empty) {
          value = scan.text();
          if (value === undefined || !scan.endTag(param)) return undefined;
        }
        params.push({ ns: param.ns, local: param.local, text: value });
      }
      if (!scan.endTag(element)) return undefined;
    }
    scan.skipWhitespace();
  }
  if (!scan.endTag(body)) return undefined;
  scan.skipWhitespace();
  if (!scan.endTag(envelope)) return undefined;
  scan.skipWhitespace();
  if (scan.pos !== text.length) return undefined;
  return { ns: envelope.ns, local: envelope.local, request, params };
}

/**
 * The call's parameters as bindSoapParameters reads them (first child in the service namespace of each name);
 * undefined when a value does not convert, so the general path reports it exactly.
 */
export function bindCommonParameters(op: OperationSpec, envelope: CommonEnvelope, namespace: string): BoundCall | undefined {
  // A few parameters each: looked for in the list rather than put in a map first.
  return bindParameterTexts(op, (name) => {
    for (const param of envelope.params) if (param.local === name && param.ns === namespace) return param.text;
    return undefined;
  });
}
