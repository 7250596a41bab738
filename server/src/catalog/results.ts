/**
 * The result documents (DECISIONS.md §2) as data: elements, attributes in written order, enumerated values. The server's
 * item types derive from it and `npm run generate` writes the client's types and parsers. Pure data, no imports.
 */

/** The sort keys of every listing (the `order` parameter). */
export const SORT_KEYS = ['name', 'time', 'size', 'share', 'link'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

/** The states of one recipient of an e-mail share. */
export const EMAIL_STATUSES = ['queued', 'sent', 'failed'] as const;

/** How a value is written: a decimal number, text, 0/1, or ISO 8601 UTC to the second. */
export type AttributeType = 'int' | 'string' | 'flag' | 'time' | 'emailStatus';

/**
 * - required: a reader refuses the element without it
 * - always:   always written; a reader takes 0, '' or false in its absence
 * - optional: written only when it applies
 */
export type Presence = 'required' | 'always' | 'optional';

export interface AttributeSpec {
  readonly name: string;
  readonly type: AttributeType;
  readonly presence: Presence;
  /** The one item element that has it. */
  readonly only?: 'folder' | 'file';
  /** What a listing adds to its items, as one object: the bin's `bin`, GetShareFiles' `share`, GetLinkFiles' `link`. */
  readonly group?: 'bin' | 'share' | 'link';
  readonly doc: string;
}

const a = <const N extends string, const T extends AttributeType, const P extends Presence>(name: N, type: T, presence: P, doc: string) =>
  ({ name, type, presence, doc }) as const;

/** The attributes of `<folder/>` and `<file/>`, in the order they are written. */
export const itemAttributes = [
  a('id', 'int', 'required', 'The item id.'),
  a('dir', 'int', 'always', "Parent folder id; 0 is the account's root."),
  a('name', 'string', 'required', 'The name.'),
  { ...a('ext', 'string', 'always', 'Lowercase extension without the dot; "" if none.'), only: 'file' },
  a('size', 'int', 'always', 'Bytes; for a folder the total of the files beneath it.'),
  { ...a('hash', 'string', 'always', 'SHA-256 of the content, lowercase hex.'), only: 'file' },
  a('time', 'time', 'always', 'Last modification.'),
  a('shared', 'flag', 'always', 'Whether it is shared.'),
  a('linked', 'flag', 'always', 'Whether it has a direct link.'),
  a('encrypted', 'flag', 'always', 'Whether it is encrypted.'),
  a('tip', 'string', 'optional', 'The password hint, only when encrypted.'),
  { ...a('progress', 'int', 'optional', 'Percent done of a background encryption or decryption of the folder.'), only: 'folder' },
  a('path', 'string', 'optional', 'Absolute path (`/A/B/x.txt`), where the operation gives paths.'),
  { ...a('deleted', 'time', 'always', 'When it was deleted.'), group: 'bin' },
  { ...a('from', 'string', 'always', 'The original parent path, `/A/B` ("/" for the root).'), group: 'bin' },
  { ...a('purge', 'time', 'always', 'When the retention sweep removes it for good.'), group: 'bin' },
  { ...a('code', 'string', 'always', 'The share code.'), group: 'share' },
  { ...a('url', 'string', 'always', 'The share page URL.'), group: 'share' },
  { ...a('downpwd', 'string', 'always', 'The extraction code; "" when open.'), group: 'share' },
  { ...a('downValue', 'int', 'always', 'Most downloads the share allows; 0 = no limit.'), group: 'share' },
  { ...a('downloads', 'int', 'always', 'Downloads so far.'), group: 'share' },
  { ...a('description', 'string', 'always', 'Shown on the share page.'), group: 'share' },
  { ...a('image', 'string', 'always', "The share's cover image URL."), group: 'share' },
  // DECISIONS.md §2 names both a share's and a link's address `url`: an item is in one listing only.
  { ...a('url', 'string', 'always', 'The direct link.'), group: 'link' },
  { ...a('hits', 'int', 'always', 'Downloads through the link so far.'), group: 'link' },
] as const satisfies readonly AttributeSpec[];

/** The other elements of the result documents, each with its attributes in written order. */
export const resultElements = {
  /** Login and APILogin: `<token uid key expires>TOKEN</token>`. */
  token: [a('uid', 'int', 'required', 'The account id.'), a('key', 'string', 'required', 'The signing key.'), a('expires', 'time', 'always', 'When the token expires.')],
  /** GetFilesWhitPath: `<path value><dir/>…</path>`, root first. */
  path: [a('value', 'string', 'always', 'The absolute path, `/A/B`.')],
  dir: [a('id', 'int', 'required', 'The folder id.'), a('name', 'string', 'always', 'Its name.')],
  /** GetAccountInfo: `<account name used quota />`. */
  account: [
    a('name', 'string', 'required', 'The account name.'),
    a('used', 'int', 'always', "Bytes of the account's files, the recycle bin's included; every copy counts in full."),
    a('quota', 'int', 'always', 'The most bytes the account may use.'),
  ],
  /** Get*EmailShareInfo: one per recipient. */
  email: [
    a('to', 'string', 'always', 'The address.'),
    a('time', 'time', 'always', 'When the message was sent; for queued and failed ones, when it was queued.'),
    a('status', 'emailStatus', 'always', 'queued, sent or failed.'),
    a('error', 'string', 'optional', 'The last delivery error, while queued for a retry and once failed.'),
  ],
} as const satisfies Record<string, readonly AttributeSpec[]>;

// ---- The server's types, derived -------------------------------------------------------------------

/** The value the server holds for an attribute of each type. */
type ServerValue<T extends AttributeType> = T extends 'int'
  ? number
  : T extends 'flag'
    ? boolean
    : T extends 'time'
      ? Date
      : T extends 'emailStatus'
        ? (typeof EMAIL_STATUSES)[number]
        : string;

type Fields<A extends AttributeSpec> = {
  readonly [S in A as S['presence'] extends 'optional' ? never : S['name']]: ServerValue<S['type']>;
} & { readonly [S in A as S['presence'] extends 'optional' ? S['name'] : never]?: ServerValue<S['type']> };

type ItemAttribute = (typeof itemAttributes)[number];
type Own<K extends 'folder' | 'file'> = Exclude<ItemAttribute, { group: string } | { only: Exclude<'folder' | 'file', K> }>;
type Group<G> = Fields<Extract<ItemAttribute, { group: G }>>;

/** What the recycle bin adds to an item deleted directly. */
export type BinAttributes = Group<'bin'>;
/** Attributes a shared item adds in listings (DECISIONS.md §2). */
export type ShareAttributes = Group<'share'>;
export type LinkAttributes = Group<'link'>;

type ItemOf<K extends 'folder' | 'file'> = Fields<Own<K>> & {
  readonly type: K;
  readonly bin?: BinAttributes;
  readonly share?: ShareAttributes;
  readonly link?: LinkAttributes;
};

export type FolderItem = ItemOf<'folder'>;
export type FileItem = ItemOf<'file'>;
export type Item = FolderItem | FileItem;

/** One recipient of an e-mail share: `<email to time status error/>`. */
export type EmailDelivery = Fields<(typeof resultElements.email)[number]>;
export type PathDir = Fields<(typeof resultElements.dir)[number]>;
export type AccountInfo = Fields<(typeof resultElements.account)[number]>;

/** Items may come from a database cursor: a listing of 100,000 items is never held whole. */
export type ItemSource<T> = Iterable<T> | AsyncIterable<T>;

/** Items read a batch at a time (streamed listings), iterable by item or by batch: one await per batch, not per item. */
export interface BatchedItemSource<T> extends AsyncIterable<T> {
  batches(): AsyncIterable<readonly T[]>;
}

export function isBatched<T>(items: ItemSource<T>): items is BatchedItemSource<T> {
  return typeof (items as Partial<BatchedItemSource<T>>).batches === 'function';
}
