/**
 * The result documents of DECISIONS.md §2 as TypeScript types, and the parsers from the parsed XML
 * (fast-xml-parser output, attributes without prefix, repeated items as arrays) to those types.
 * Numbers become numbers, 0/1 flags booleans; times stay ISO 8601 strings.
 */
import { ApiError } from './errors';
import type { ResultKind } from './generated/operations';

/** One parsed element: attributes by name, child elements by name (items as arrays), text as '#text'. */
export type XmlElement = Readonly<Record<string, unknown>>;

// ---- Items ------------------------------------------------------------------------------------

interface ItemBase {
  readonly id: number;
  /** Parent folder id; 0 is the account's root. */
  readonly dir: number;
  readonly name: string;
  /** Last modification, ISO 8601 UTC. */
  readonly time: string;
  /** Bytes; for a folder the total of the files beneath it. */
  readonly size: number;
  readonly shared: boolean;
  readonly linked: boolean;
  readonly encrypted: boolean;
  /** The password hint, only when encrypted. */
  readonly tip?: string;
  /** Absolute path (`/A/B/x.txt`), where the operation gives paths. */
  readonly path?: string;

  // Recycle-bin items
  /** When the item was deleted, ISO 8601. */
  readonly deleted?: string;
  /** The original parent folder's path. */
  readonly from?: string;
  /** When the retention sweep removes it for good, ISO 8601. */
  readonly purge?: string;

  // Folders being encrypted or decrypted in the background
  /** Percent done. */
  readonly progress?: number;

  // Shared items
  readonly code?: string;
  /** The share page URL (shared items) or the direct link (linked files). */
  readonly url?: string;
  readonly downpwd?: string;
  readonly downValue?: number;
  readonly downloads?: number;
  readonly description?: string;
  /** The share's cover image URL. */
  readonly image?: string;

  // Linked files
  readonly hits?: number;
}

export interface FolderItem extends ItemBase {
  readonly kind: 'folder';
}

export interface FileItem extends ItemBase {
  readonly kind: 'file';
  /** Lowercase extension without the dot; "" if none. */
  readonly ext: string;
  /** SHA-256 of the content, lowercase hex. */
  readonly hash: string;
}

export type Item = FolderItem | FileItem;

// ---- Documents --------------------------------------------------------------------------------

/** Login and APILogin: `<token uid key expires>TOKEN</token>`. */
export interface TokenResult {
  readonly token: string;
  readonly uid: number;
  readonly key: string;
  readonly expires: string;
}

export interface PathSegment {
  readonly id: number;
  readonly name: string;
}

/** GetFilesWhitPath: `<path value="/A/B"><dir id name/>…</path>`, the root first. */
export interface FolderPath {
  readonly value: string;
  readonly dirs: readonly PathSegment[];
}

/** `<result count>` then all folders, then all files. */
export interface Listing {
  readonly count: number;
  readonly folders: readonly FolderItem[];
  readonly files: readonly FileItem[];
  /** FileSearch stops at its hit limit and says so. */
  readonly truncated: boolean;
  readonly path?: FolderPath;
  /**
   * Set while a streamed listing is still arriving (api/listing-stream.ts): the items so far, in
   * order, and `count` the number announced. A complete listing never has it.
   */
  readonly partial?: true;
}

export interface PathListing extends Listing {
  readonly path: FolderPath;
}

/** Folders and files in one answer (restored items and where they went; shared items). */
export interface Items {
  readonly folders: readonly FolderItem[];
  readonly files: readonly FileItem[];
}

export interface EmailRecipient {
  readonly to: string;
  readonly time: string;
  /** queued, sent or failed. */
  readonly status: string;
  readonly error?: string;
}

/** Get*EmailShareInfo: the shared item and one entry per recipient. */
export interface EmailShareInfo {
  readonly item?: Item;
  readonly emails: readonly EmailRecipient[];
}

/** `<result url expires/>`; a permanent direct link has no expiry. */
export interface UrlResult {
  readonly url: string;
  readonly expires?: string;
}

/** ShareOpen: the shared folder or file with its share attributes. */
export interface ShareResult {
  readonly item: Item;
}

/** What each result kind parses to. */
export interface ResultTypes {
  token: TokenResult;
  empty: void;
  file: FileItem;
  folder: FolderItem;
  listing: Listing;
  pathListing: PathListing;
  restored: Items;
  shared: Items;
  emailShareInfo: EmailShareInfo;
  url: UrlResult;
  share: ShareResult;
  string: string;
}

export type ResultOf<R extends ResultKind> = ResultTypes[R];

// ---- Reading attributes -----------------------------------------------------------------------

function malformed(what: string): ApiError {
  return new ApiError('Protocol', `The service's answer is not understood: ${what}.`);
}

function text(element: XmlElement, name: string): string | undefined {
  const value = element[name];
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}

function requiredText(element: XmlElement, name: string, where: string): string {
  const value = text(element, name);
  if (value === undefined) throw malformed(`<${where}> has no ${name}`);
  return value;
}

function optionalNumber(element: XmlElement, name: string): number | undefined {
  const value = text(element, name);
  if (value === undefined || value.trim() === '') return undefined;
  const number = Number(value);
  if (!Number.isFinite(number)) throw malformed(`${name}="${value}" is not a number`);
  return number;
}

function requiredNumber(element: XmlElement, name: string, where: string): number {
  const number = optionalNumber(element, name);
  if (number === undefined) throw malformed(`<${where}> has no ${name}`);
  return number;
}

const flag = (element: XmlElement, name: string) => text(element, name) === '1';

/** The text content of an element (fast-xml-parser gives a bare string for text-only elements). */
export function elementText(element: XmlElement): string {
  return text(element, '#text') ?? '';
}

/** Child elements of one name, always as an array. */
export function children(element: XmlElement, name: string): XmlElement[] {
  const value = element[name];
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((child) => (typeof child === 'object' && child !== null ? (child as XmlElement) : { '#text': String(child) }));
}

// The optional attributes, set only where present so that items compare and print cleanly.
const OPTIONAL_TEXTS = ['tip', 'path', 'deleted', 'from', 'purge', 'code', 'url', 'downpwd', 'description', 'image'] as const;
const OPTIONAL_NUMBERS = ['downValue', 'downloads', 'hits', 'progress'] as const;

// One object per item, built in place: a listing may hold 100,000 of them, and every object made
// on the way would be garbage to collect while the list scrolls.
function item(element: XmlElement, kind: 'folder' | 'file'): Record<string, unknown> {
  const out: Record<string, unknown> = {
    kind,
    id: requiredNumber(element, 'id', kind),
    dir: optionalNumber(element, 'dir') ?? 0,
    name: requiredText(element, 'name', kind),
    time: text(element, 'time') ?? '',
    size: optionalNumber(element, 'size') ?? 0,
    shared: flag(element, 'shared'),
    linked: flag(element, 'linked'),
    encrypted: flag(element, 'encrypted'),
  };
  for (const name of OPTIONAL_TEXTS) {
    const value = text(element, name);
    if (value !== undefined) out[name] = value;
  }
  for (const name of OPTIONAL_NUMBERS) {
    const value = optionalNumber(element, name);
    if (value !== undefined) out[name] = value;
  }
  if (kind === 'file') {
    out.ext = text(element, 'ext') ?? '';
    out.hash = text(element, 'hash') ?? '';
  }
  return out;
}

export function parseFolder(element: XmlElement): FolderItem {
  return item(element, 'folder') as unknown as FolderItem;
}

export function parseFile(element: XmlElement): FileItem {
  return item(element, 'file') as unknown as FileItem;
}

function parseItems(result: XmlElement): Items {
  return { folders: children(result, 'folder').map(parseFolder), files: children(result, 'file').map(parseFile) };
}

function onlyItem(result: XmlElement): Item | undefined {
  const [folder] = children(result, 'folder');
  if (folder) return parseFolder(folder);
  const [file] = children(result, 'file');
  if (file) return parseFile(file);
  return undefined;
}

function parsePath(result: XmlElement): FolderPath | undefined {
  const [path] = children(result, 'path');
  if (!path) return undefined;
  return {
    value: text(path, 'value') ?? '',
    dirs: children(path, 'dir').map((dir) => ({ id: requiredNumber(dir, 'id', 'dir'), name: text(dir, 'name') ?? '' })),
  };
}

// ---- Parsers per result kind ------------------------------------------------------------------

export function parseToken(token: XmlElement): TokenResult {
  return {
    token: elementText(token),
    uid: requiredNumber(token, 'uid', 'token'),
    key: requiredText(token, 'key', 'token'),
    expires: text(token, 'expires') ?? '',
  };
}

export function parseListing(result: XmlElement): Listing {
  const items = parseItems(result);
  const path = parsePath(result);
  return {
    count: optionalNumber(result, 'count') ?? items.folders.length + items.files.length,
    ...items,
    truncated: flag(result, 'truncated'),
    ...(path ? { path } : {}),
  };
}

function parseSingle<K extends 'folder' | 'file'>(kind: K) {
  return (result: XmlElement) => {
    const [element] = children(result, kind);
    if (!element) throw malformed(`the result has no <${kind}>`);
    return (kind === 'folder' ? parseFolder(element) : parseFile(element)) as K extends 'folder' ? FolderItem : FileItem;
  };
}

/**
 * From the answer's top element (`<token>`, `<result>`, or `<string>`) to the typed result. The
 * transport has already turned refusals into ApiErrors: these see successful answers only.
 */
export const resultParsers: { readonly [R in ResultKind]: (element: XmlElement) => ResultTypes[R] } = {
  token: parseToken,
  empty: () => undefined,
  file: parseSingle('file'),
  folder: parseSingle('folder'),
  listing: parseListing,
  pathListing(result) {
    const listing = parseListing(result);
    if (!listing.path) throw malformed('the listing has no <path>');
    return listing as PathListing;
  },
  restored: parseItems,
  shared: parseItems,
  emailShareInfo(result) {
    const item = onlyItem(result);
    return {
      ...(item ? { item } : {}),
      emails: children(result, 'email').map((email) => {
        const error = text(email, 'error');
        return {
          to: text(email, 'to') ?? '',
          time: text(email, 'time') ?? '',
          status: text(email, 'status') ?? '',
          ...(error ? { error } : {}),
        };
      }),
    };
  },
  url(result) {
    const expires = text(result, 'expires');
    return { url: requiredText(result, 'url', 'result'), ...(expires ? { expires } : {}) };
  },
  share(result) {
    const item = onlyItem(result);
    if (!item) throw malformed('the share has no <folder> or <file>');
    return { item };
  },
  string: elementText,
};

/** Element names that may repeat: the parser always gives them as arrays. */
export const REPEATED_ELEMENTS: ReadonlySet<string> = new Set(['folder', 'file', 'dir', 'email', 'path']);
