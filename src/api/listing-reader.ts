// Reads a listing answer incrementally, chunk by chunk (chunks may end anywhere, even inside a character): a scanner for exactly that flat shape,
// so a 100,000-item folder shows early. Anything the service never sends (text, CDATA, a DTD, other elements) is a Protocol error.
import { malformed, parseFile, parseFolder, parsePathSegment, PREDEFINED, type FileItem, type FolderItem, type FolderPath, type Listing, type PathSegment } from './results';

/** The attributes of one element, unescaped, by name. */
export type Attributes = Record<string, string>;

/** Whether a code point may appear in an XML 1.0 document (the Char production). */
function isXmlChar(codePoint: number): boolean {
  return (
    codePoint === 0x9 ||
    codePoint === 0xa ||
    codePoint === 0xd ||
    (codePoint >= 0x20 && codePoint <= 0xd7ff) ||
    (codePoint >= 0xe000 && codePoint <= 0xfffd) ||
    (codePoint >= 0x10000 && codePoint <= 0x10ffff)
  );
}

const REFERENCE = /&(?:#([0-9]+)|#x([0-9a-fA-F]+)|([A-Za-z_][\w.-]*))?;?/g;
const LITERAL_WHITESPACE = /\r\n|[\t\n\r]/g;
const SPECIAL_IN_VALUE = /[<&\t\n\r]/;

/** An attribute value as XML 1.0 §3.3.3 normalizes it: literal tabs and line ends become spaces, but `&#xA;` stays a newline. */
export function attributeValue(raw: string): string {
  // Most values have nothing to replace: one scan tells.
  if (!SPECIAL_IN_VALUE.test(raw)) return raw;
  if (raw.includes('<')) throw malformed('a "<" inside an attribute value');
  const value = raw.replace(LITERAL_WHITESPACE, ' ');
  if (!value.includes('&')) return value;
  return value.replace(REFERENCE, (reference, decimal?: string, hex?: string, name?: string) => {
    if (!reference.endsWith(';') || (decimal === undefined && hex === undefined && name === undefined)) {
      throw malformed(`a bare "&" in an attribute value`);
    }
    if (name !== undefined) {
      const text = PREDEFINED[name];
      if (text === undefined) throw malformed(`the unknown entity ${reference}`);
      return text;
    }
    const codePoint = decimal !== undefined ? Number(decimal) : parseInt(hex ?? '', 16);
    if (!isXmlChar(codePoint)) throw malformed(`the character reference ${reference}`);
    return String.fromCodePoint(codePoint);
  });
}

const Place = {
  /** Before the top element: the declaration, comments, whitespace. */
  Prolog: 0,
  Result: 1,
  Path: 2,
  /** After `</result>` (or a self-closing `<result/>`). */
  Epilog: 3,
} as const;
type Place = (typeof Place)[keyof typeof Place];

/** One start tag read whole: its name, attributes, and whether it closes itself (`<a />`). */
interface StartTag {
  readonly name: string;
  readonly attributes: Attributes;
  readonly empty: boolean;
}

const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d;
/** Where an attribute's name ends: whitespace, "=", or a character no name may hold. */
const isNameEnd = (code: number) =>
  isSpace(code) || code === 0x3d /* = */ || code === 0x3c /* < */ || code === 0x3e /* > */ || code === 0x2f /* / */ || code === 0x22 /* " */ || code === 0x27; /* ' */

export class ListingReader {
  readonly folders: FolderItem[] = [];
  readonly files: FileItem[] = [];
  /** The top element's attributes, once its start tag has been read. */
  root: Attributes | undefined;
  /** The top element's name (`result` for a listing; anything else is for the caller to refuse). */
  rootName: string | undefined;
  private path: { value: string; dirs: PathSegment[] } | undefined;
  private place: Place = Place.Prolog;
  private buffer = '';
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

  /** The next bytes of the answer; they may end anywhere. */
  push(bytes: Uint8Array): void {
    let text: string;
    try {
      text = this.decoder.decode(bytes, { stream: true });
    } catch {
      throw malformed('the text is not UTF-8');
    }
    this.pushText(text);
  }

  /** The answer is complete: anything left unread is an error. */
  end(): void {
    let rest: string;
    try {
      rest = this.decoder.decode();
    } catch {
      throw malformed('the text ends inside a UTF-8 character');
    }
    this.pushText(rest);
    if (this.settled) return;
    if (this.place !== Place.Epilog) throw malformed(this.root ? 'the listing ends before </result>' : 'there is no XML element');
    if (this.buffer.trim() !== '') throw malformed('text after the listing');
  }

  /** Whether the top element has been read and said that the call was refused (code ≠ 0). */
  get refused(): boolean {
    return this.rootName === 'result' && (this.root?.code ?? '0').trim() !== '0';
  }

  /** A refusal, or no `<result>` at all: the rest of the answer is not read. */
  get settled(): boolean {
    return this.rootName !== undefined && (this.rootName !== 'result' || this.refused);
  }

  /** Whether everything has been read (after a refusal, the rest does not matter). */
  get done(): boolean {
    return this.place === Place.Epilog;
  }

  /** The number of items the answer announces (`count`), or those read so far without one. */
  get count(): number {
    const count = this.root?.count;
    const number = count === undefined || count.trim() === '' ? NaN : Number(count);
    return Number.isFinite(number) ? number : this.folders.length + this.files.length;
  }

  /** Fresh arrays, so that what was handed out does not change afterwards. */
  listing(partial: boolean): Listing {
    const path: FolderPath | undefined = this.path ? { value: this.path.value, dirs: this.path.dirs.slice() } : undefined;
    return {
      count: this.count,
      folders: partial ? this.folders.slice() : this.folders,
      files: partial ? this.files.slice() : this.files,
      truncated: this.root?.truncated === '1',
      ...(path ? { path } : {}),
      ...(partial ? { partial: true as const } : {}),
    };
  }

  private pushText(text: string): void {
    if (this.settled) return;
    const buffer = this.buffer.length === 0 ? text : this.buffer + text;
    let at = 0;
    const length = buffer.length;
    while (at < length) {
      const open = buffer.indexOf('<', at);
      const textEnd = open < 0 ? length : open;
      for (let i = at; i < textEnd; i++) {
        // Only whitespace between elements; a byte order mark may open the document.
        const code = buffer.charCodeAt(i);
        if (!isSpace(code) && !(code === 0xfeff && i === 0 && this.place === Place.Prolog)) {
          throw malformed(this.place === Place.Epilog ? 'text after the listing' : 'text where elements were expected');
        }
      }
      if (open < 0) {
        at = length;
        break;
      }
      const next = this.markup(buffer, open);
      if (next < 0) {
        at = open;
        break;
      }
      at = next;
      if (this.settled) {
        at = length;
        break;
      }
    }
    this.buffer = at >= length ? '' : buffer.slice(at);
  }

  /** Reads the markup at `open` (a `<`); returns where it ends, or -1 when it is not all here yet. */
  private markup(buffer: string, open: number): number {
    const second = buffer.charCodeAt(open + 1);
    if (Number.isNaN(second)) return -1;
    if (second === 0x3f /* ? */) {
      const close = buffer.indexOf('?>', open + 2);
      return close < 0 ? -1 : close + 2;
    }
    if (second === 0x21 /* ! */) {
      if (buffer.length < open + 4) return -1;
      if (!buffer.startsWith('<!--', open)) throw malformed('a DTD or CDATA section');
      const close = buffer.indexOf('-->', open + 4);
      return close < 0 ? -1 : close + 3;
    }
    if (second === 0x2f /* / */) {
      const close = buffer.indexOf('>', open + 2);
      if (close < 0) return -1;
      this.endTag(buffer.slice(open + 2, close).trim());
      return close + 1;
    }
    const tag = readStartTag(buffer, open);
    if (tag === undefined) return -1;
    this.startTag(tag.tag);
    return tag.end;
  }

  private startTag({ name, attributes, empty }: StartTag): void {
    switch (this.place) {
      case Place.Prolog:
        this.rootName = name;
        this.root = attributes;
        // A refusal, or another top element than a listing's: nothing more is needed from it.
        this.place = empty || name !== 'result' || this.refused ? Place.Epilog : Place.Result;
        return;
      case Place.Result:
        if (name === 'folder' && empty) this.folders.push(parseFolder(attributes));
        else if (name === 'file' && empty) this.files.push(parseFile(attributes));
        else if (name === 'path' && !this.path) {
          this.path = { value: attributes.value ?? '', dirs: [] };
          if (!empty) this.place = Place.Path;
        } else throw malformed(`<${name}> in a listing`);
        return;
      case Place.Path:
        if (name !== 'dir' || !empty) throw malformed(`<${name}> in <path>`);
        this.path!.dirs.push(parsePathSegment(attributes));
        return;
      case Place.Epilog:
        throw malformed(`<${name}> after the listing`);
    }
  }

  private endTag(name: string): void {
    if (this.place === Place.Path && name === 'path') this.place = Place.Result;
    else if (this.place === Place.Result && name === 'result') this.place = Place.Epilog;
    else throw malformed(`</${name}> out of place`);
  }
}

/** The start tag at `open`, or undefined while incomplete; a quoted `>` does not end it. */
function readStartTag(buffer: string, open: number): { readonly tag: StartTag; readonly end: number } | undefined {
  const length = buffer.length;
  let at = open + 1;
  while (at < length) {
    const code = buffer.charCodeAt(at);
    if (isSpace(code) || code === 0x2f || code === 0x3e) break;
    at++;
  }
  if (at >= length) return undefined;
  const name = buffer.slice(open + 1, at);
  if (name === '') throw malformed('a "<" without an element name');
  const attributes: Attributes = {};
  for (;;) {
    while (at < length && isSpace(buffer.charCodeAt(at))) at++;
    if (at >= length) return undefined;
    const code = buffer.charCodeAt(at);
    if (code === 0x3e /* > */) return { tag: { name, attributes, empty: false }, end: at + 1 };
    if (code === 0x2f /* / */) {
      if (at + 1 >= length) return undefined;
      if (buffer.charCodeAt(at + 1) !== 0x3e) throw malformed(`<${name}> has a "/" out of place`);
      return { tag: { name, attributes, empty: true }, end: at + 2 };
    }
    // The attribute's name runs to "=" (spaces may come before it).
    const nameStart = at;
    while (at < length && !isNameEnd(buffer.charCodeAt(at))) at++;
    const attribute = buffer.slice(nameStart, at);
    while (at < length && isSpace(buffer.charCodeAt(at))) at++;
    if (at >= length) return undefined;
    if (attribute === '' || buffer.charCodeAt(at) !== 0x3d /* = */) throw malformed(`<${name}> has a malformed attribute`);
    at++;
    while (at < length && isSpace(buffer.charCodeAt(at))) at++;
    if (at >= length) return undefined;
    const quote = buffer[at];
    if (quote !== '"' && quote !== "'") throw malformed(`<${name}>: the value of ${attribute} is not quoted`);
    const close = buffer.indexOf(quote, at + 1);
    if (close < 0) return undefined;
    if (Object.hasOwn(attributes, attribute)) throw malformed(`<${name}> has ${attribute} twice`);
    attributes[attribute] = attributeValue(buffer.slice(at + 1, close));
    at = close + 1;
    if (at < length && !isSpace(buffer.charCodeAt(at)) && buffer[at] !== '>' && buffer[at] !== '/') {
      throw malformed(`<${name}> has attributes without space between them`);
    }
  }
}
