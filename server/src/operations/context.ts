/**
 * What every operation receives: the services it may use, who is calling, and its parameters typed
 * from the catalog. The protocol layer builds these; operations never see HTTP or XML.
 */
import type { CallCaches } from './caches';
import type { Kysely } from 'kysely';
import type { Config } from '../config';
import type { Operation, OperationName, WireType } from '../catalog/operations';
import type { EmailDelivery, FileItem, FolderItem, Item, ItemSource, PathDir } from '../catalog/results';
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
   * Wakes the e-mail sender (operations/sharing/mail-queue.ts) once messages are queued, so that they go
   * out at once rather than at its next round; absent where no sender runs (the CLI, some tests).
   */
  readonly nudgeMailSender?: () => void;
}

// The item model lives in the catalog (below storage, which reads items): re-exported for operations.
export type { BatchedItemSource, BinAttributes, EmailDelivery, FileItem, FolderItem, Item, ItemSource, ShareAttributes } from '../catalog/results';
export { isBatched } from '../catalog/results';

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

/** `<result code="0" count="N">`, the path (GetFilesWhitPath), then all folders, then all files. */
export interface Listing {
  readonly kind: 'listing';
  readonly count: number;
  /** Set when a search stopped at its limit. */
  readonly truncated?: boolean;
  /** The folder's own path, root first (GetFilesWhitPath): `<path value><dir id name/>…</path>`. */
  readonly path?: { readonly value: string; readonly dirs: readonly PathDir[] };
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

/** What operations return; the protocol layer renders each kind (server/src/protocol/asmx/results.ts). */
export type OpResult = TokenIssued | TokenRefused | Empty | PlainString | Listing | ItemResult | UrlResult | EmailShareInfo;

/** The context of an operation whose catalog entry asks for a token: its caller cannot be null. */
export type AuthenticatedContext = CallContext<Caller>;

/** A handler's context follows its catalog entry: anonymous operations get no caller, the others always one. */
export type Handler<Name extends OperationName> = (
  ctx: Extract<Operation, { name: Name }>['auth'] extends 'none' ? CallContext<null> : AuthenticatedContext,
  params: ParamsOf<Name>,
) => Promise<OpResult>;
