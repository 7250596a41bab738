/** Result types and parsers from fast-xml-parser output; elements and attributes are generated from the catalog (generated/results.ts). */
import { ApiError } from './errors';
import type { ResultKind } from './generated/operations';
import {
  ACCOUNT_ATTRIBUTES,
  DIR_ATTRIBUTES,
  EMAIL_ATTRIBUTES,
  ITEM_ATTRIBUTES,
  PATH_ATTRIBUTES,
  TOKEN_ATTRIBUTES,
  type AccountInfo,
  type AttributeSpec,
  type EmailRecipient,
  type FileItem,
  type FolderItem,
  type Item,
  type PathSegment,
  type TokenResult,
} from './generated/results';

export type { AccountInfo, EmailRecipient, FileItem, FolderItem, Item, PathSegment, TokenResult } from './generated/results';

/** One parsed element: attributes by name, child elements by name (items as arrays), text as '#text'. */
export type XmlElement = Readonly<Record<string, unknown>>;

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
  /** Set while a streamed listing is still arriving: `count` is the number announced. */
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
  account: AccountInfo;
  url: UrlResult;
  /** ShareOpen: the shared folder or file with its share attributes. */
  share: { readonly item: Item };
  string: string;
}

export type ResultOf<R extends ResultKind> = ResultTypes[R];

export function malformed(what: string): ApiError {
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

/** Reads attributes as the catalog describes them, in place: a listing may hold 100,000 items, and every object made on the way is garbage. */
function readAttributes(element: XmlElement, specs: readonly AttributeSpec[], where: string, out: Record<string, unknown>): Record<string, unknown> {
  for (const spec of specs) {
    if (spec.only !== undefined && spec.only !== where) continue;
    const { name } = spec;
    let value: unknown;
    if (spec.type === 'int') value = optionalNumber(element, name);
    else if (spec.type === 'flag') value = flag(element, name);
    else value = text(element, name);
    if (value !== undefined) out[name] = value;
    else if (spec.presence === 'required') throw malformed(`<${where}> has no ${name}`);
    else if (spec.presence === 'always') out[name] = spec.type === 'int' ? 0 : '';
  }
  return out;
}

export function parseFolder(element: XmlElement): FolderItem {
  return readAttributes(element, ITEM_ATTRIBUTES, 'folder', { type: 'folder' }) as unknown as FolderItem;
}

export function parseFile(element: XmlElement): FileItem {
  return readAttributes(element, ITEM_ATTRIBUTES, 'file', { type: 'file' }) as unknown as FileItem;
}

/** `<dir id name/>` of a path. */
export function parsePathSegment(element: XmlElement): PathSegment {
  return readAttributes(element, DIR_ATTRIBUTES, 'dir', {}) as unknown as PathSegment;
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
  return readAttributes(path, PATH_ATTRIBUTES, 'path', { dirs: children(path, 'dir').map(parsePathSegment) }) as unknown as FolderPath;
}

export function parseToken(token: XmlElement): TokenResult {
  return readAttributes(token, TOKEN_ATTRIBUTES, 'token', { token: elementText(token) }) as unknown as TokenResult;
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

/** Successful answers only: the transport has already turned refusals into ApiErrors. */
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
      emails: children(result, 'email').map((email) => readAttributes(email, EMAIL_ATTRIBUTES, 'email', {}) as unknown as EmailRecipient),
    };
  },
  account(result) {
    const [account] = children(result, 'account');
    if (!account) throw malformed('the result has no <account>');
    return readAttributes(account, ACCOUNT_ATTRIBUTES, 'account', {}) as unknown as AccountInfo;
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

/** The predefined XML entities: no answer has a DTD. */
export const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Element names that may repeat: the parser always gives them as arrays. */
export const REPEATED_ELEMENTS: ReadonlySet<string> = new Set(['folder', 'file', 'dir', 'email', 'path']);
