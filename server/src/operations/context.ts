/**
 * What every operation receives: the services it may use, who is calling, and its parameters typed
 * from the catalog. The protocol layer builds these; operations never see HTTP or XML.
 */
import type { CallCaches } from './caches';
import type { Kysely } from 'kysely';
import type { Config } from '../config';
import type { Operation, OperationName, WireType } from '../catalog/operations';
import type { AccountInfo, EmailDelivery, FileItem, FolderItem, Item, ItemSource, PathDir } from '../catalog/results';
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
  /** The raw token: keys sealed for this session (signing key, unlocks) are derived from it. */
  readonly token: string;
  /** The account's version read by the call's token check, which the call's checks use (account-reads.ts). */
  readonly accountVersion?: number;
}

export interface Services {
  readonly db: Kysely<Database>;
  readonly config: Config;
  readonly now: () => Date;
  /** Signs download URLs, seals extraction codes (storage/secret.ts). */
  readonly secret: Buffer;
  /** Every scrypt runs through this bound (crypto/hash-queue.ts). */
  readonly passwordHashes: HashQueue;
  /** What the call path keeps in memory (caches.ts), built once per app. */
  readonly caches: CallCaches;
  /** Wakes the e-mail sender once messages are queued; absent where none runs (the CLI, some tests). */
  readonly nudgeMailSender?: () => void;
  /** Wakes the search indexer once files await indexing (a Copy); absent where none runs (the CLI, some tests). */
  readonly nudgeSearchIndexer?: () => void;
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
  /** The request's Accept-Language, when it has one: share e-mails are written in it. */
  readonly acceptLanguage?: string;
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

/** Get*EmailShareInfo: the item (with its share), then one `<email/>` per recipient, oldest first. */
export interface EmailShareInfo {
  readonly kind: 'emailShareInfo';
  readonly count: number;
  readonly item: Item;
  readonly emails: ItemSource<EmailDelivery>;
}

/** GetAccountInfo. */
export interface AccountResult {
  readonly kind: 'account';
  readonly account: AccountInfo;
}

/** What operations return; the protocol layer renders each kind (server/src/protocol/asmx/results.ts). */
export type OpResult = TokenIssued | TokenRefused | Empty | PlainString | Listing | ItemResult | UrlResult | EmailShareInfo | AccountResult;

/** The context of an operation whose catalog entry asks for a token: its caller cannot be null. */
export type AuthenticatedContext = CallContext<Caller>;

/** A handler's context follows its catalog entry: anonymous operations get no caller, the others always one. */
export type Handler<Name extends OperationName> = (
  ctx: Extract<Operation, { name: Name }>['auth'] extends 'none' ? CallContext<null> : AuthenticatedContext,
  params: ParamsOf<Name>,
) => Promise<OpResult>;
