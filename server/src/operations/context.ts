/**
 * What every operation receives: the services it may use, who is calling, and its parameters typed
 * from the catalog. The protocol layer builds these; operations never see HTTP or XML.
 */
import type { CallCaches } from './caches';
import type { Kysely } from 'kysely';
import type { Config } from '../config';
import type { Operation, OperationName, WireType } from '../catalog/operations';
import type { Database } from '../storage/db/schema';
import type { HashQueue } from './crypto/hash-queue';

/** The value an operation receives for a parameter of each wire type. Strings may be null (xsi:nil or absent in SOAP). */
export type WireValue<T extends WireType> = T extends 'long'
  ? bigint
  : T extends 'int'
    ? number
    : T extends 'string'
      ? string | null
      : Buffer | null;

export type ParamsOf<Name extends OperationName> = {
  readonly [P in Extract<Operation, { name: Name }>['params'][number] as P['name']]: WireValue<P['type']>;
};

/** An authenticated caller: the account and the token the call came with. */
export interface Caller {
  readonly uid: number;
  readonly tokenId: number;
  /** The raw token: keys wrapped for this session (signing key, unlocked items) are derived from it. */
  readonly token: string;
  /**
   * The account's version as read when the call's token was checked: the checks of the call use
   * what was kept at it (account-reads.ts). Absent for a caller made outside a call's token check.
   */
  readonly accountVersion?: number;
}

export interface Services {
  readonly db: Kysely<Database>;
  readonly config: Config;
  readonly now: () => Date;
  /** The server secret (storage/secret.ts): signs download URLs, seals extraction codes. */
  readonly secret: Buffer;
  /** Every password hash (scrypt) runs through this bound (crypto/hash-queue.ts, passwordHashQueue(config)). */
  readonly passwordHashes: HashQueue;
  /** What the call path keeps in memory (caches.ts callCaches(config)), built once per app. */
  readonly caches: CallCaches;
  /**
   * Wakes the e-mail sender (operations/mail-queue.ts) once messages are queued, so that they go
   * out at once rather than at its next round; absent where no sender runs (the CLI, some tests).
   */
  readonly nudgeMailSender?: () => void;
}

export interface CallContext<C extends Caller | null = Caller | null> {
  readonly services: Services;
  /** Who is calling: checked by dispatch wherever the catalog entry asks for a token; null for anonymous calls. */
  readonly caller: C;
  /** The client's address, for throttling. */
  readonly clientAddress: string;
  /** Absolute base URL for links in results: FSS_PUBLIC_URL, or the request's own host. */
  readonly baseUrl: string;
}

/** A successful login: rendered as <token uid key expires>TOKEN</token>. */
export interface TokenIssued {
  readonly kind: 'token';
  readonly token: string;
  readonly uid: number;
  readonly key: string;
  readonly expires: Date;
}

/** A refused login: rendered as <token>0</token>, with the reason and retryAfter when throttled. */
export interface TokenRefused {
  readonly kind: 'tokenRefused';
  readonly reason?: 'invalid' | 'throttled';
  readonly retryAfter?: number;
}

export interface Empty {
  readonly kind: 'empty';
}

export interface PlainString {
  readonly kind: 'string';
  readonly value: string;
}

/** Attributes a shared item adds in listings (DECISIONS.md §2). */
export interface ShareAttributes {
  readonly code: string;
  readonly url: string;
  readonly downpwd: string;
  readonly downValue: number;
  readonly downloads: number;
  readonly description: string;
  readonly image: string;
}

/** What the recycle bin adds to an item deleted directly. */
export interface BinAttributes {
  readonly deleted: Date;
  /** The original parent path, `/A/B` ("/" for the root). */
  readonly from: string;
  /** When the retention sweep removes it for good. */
  readonly purge: Date;
}

interface ItemCommon {
  readonly id: number;
  /** Parent folder id; 0 is the root. */
  readonly dir: number;
  readonly name: string;
  readonly size: number;
  /** Last modification. */
  readonly time: Date;
  readonly shared: boolean;
  readonly linked: boolean;
  readonly encrypted: boolean;
  /** The password tip, only when encrypted. */
  readonly tip?: string;
  /** Absolute path (`/A/B/x.txt`), where the operation gives paths. */
  readonly path?: string;
  readonly bin?: BinAttributes;
  readonly share?: ShareAttributes;
  readonly link?: { readonly url: string; readonly hits: number };
}

export interface FolderItem extends ItemCommon {
  readonly type: 'folder';
  /** Percent done of a background encryption or decryption job running for the folder. */
  readonly progress?: number;
}

export interface FileItem extends ItemCommon {
  readonly type: 'file';
  readonly ext: string;
  readonly hash: string;
}

export type Item = FolderItem | FileItem;

/** Items may come from a database cursor: a listing of 100,000 items is never held whole. */
export type ItemSource<T> = Iterable<T> | AsyncIterable<T>;

/**
 * Items read from the database a batch at a time (the streamed listings): iterated item by item
 * like any source, or by batches, which is how the protocol layer writes them, so that a listing of
 * 100,000 items takes an await per batch of rows rather than one per item.
 */
export interface BatchedItemSource<T> extends AsyncIterable<T> {
  batches(): AsyncIterable<readonly T[]>;
}

export function isBatched<T>(items: ItemSource<T>): items is BatchedItemSource<T> {
  return typeof (items as Partial<BatchedItemSource<T>>).batches === 'function';
}

/** `<result code="0" count="N">`, the path (GetFilesWhitPath), then all folders, then all files. */
export interface Listing {
  readonly kind: 'listing';
  readonly count: number;
  /** Set when a search stopped at its limit. */
  readonly truncated?: boolean;
  /** The folder's own path, root first (GetFilesWhitPath): `<path value><dir id name/>…</path>`. */
  readonly path?: { readonly value: string; readonly dirs: ReadonlyArray<{ readonly id: number; readonly name: string }> };
  readonly folders: ItemSource<FolderItem>;
  readonly files: ItemSource<FileItem>;
}

/** One item: FileAdd, FolderAdd, FolderRename, FileRename. */
export interface ItemResult {
  readonly kind: 'item';
  readonly item: Item;
}

/** A URL: FileDownload (short-lived, with expires), FileLink (permanent). */
export interface UrlResult {
  readonly kind: 'url';
  readonly url: string;
  readonly expires?: Date;
}

/** One recipient of an e-mail share: `<email to time status error/>`. */
export interface EmailDelivery {
  readonly to: string;
  /** When the message was sent; for queued and failed ones, when it was queued. */
  readonly time: Date;
  readonly status: 'queued' | 'sent' | 'failed';
  /** The last delivery error, while queued for a retry and once failed. */
  readonly error?: string;
}

/**
 * Get*EmailShareInfo: `<result code="0" count="N">`, the item (with its share attributes when it
 * is shared), then one `<email/>` per recipient, oldest first.
 */
export interface EmailShareInfo {
  readonly kind: 'emailShareInfo';
  /** The number of `<email/>` elements. */
  readonly count: number;
  readonly item: Item;
  readonly emails: ItemSource<EmailDelivery>;
}

/** What operations return; the protocol layer renders each kind (server/src/protocol/results.ts). */
export type OpResult = TokenIssued | TokenRefused | Empty | PlainString | Listing | ItemResult | UrlResult | EmailShareInfo;

/** The context of an operation whose catalog entry asks for a token: its caller cannot be null. */
export type AuthenticatedContext = CallContext<Caller>;

/** A handler's context follows its catalog entry: anonymous operations get no caller, the others always one. */
export type Handler<Name extends OperationName> = (
  ctx: Extract<Operation, { name: Name }>['auth'] extends 'none' ? CallContext<null> : AuthenticatedContext,
  params: ParamsOf<Name>,
) => Promise<OpResult>;
