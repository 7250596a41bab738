/**
 * What every operation receives: the services it may use, who is calling, and its parameters typed
 * from the catalog. The protocol layer builds these; operations never see HTTP or XML.
 */
import type { Kysely } from 'kysely';
import type { Config } from '../config';
import type { Operation, OperationName, WireType } from '../catalog/operations';
import type { Database } from '../storage/db/schema';

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
}

export interface Services {
  readonly db: Kysely<Database>;
  readonly config: Config;
  readonly now: () => Date;
}

export interface CallContext {
  readonly services: Services;
  /** Set for operations whose catalog entry asks for a token; null for anonymous ones. */
  readonly caller: Caller | null;
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

/** What operations return; the protocol layer renders each kind (server/src/protocol/results.ts). */
export type OpResult = TokenIssued | TokenRefused | Empty | PlainString;

export type Handler<Name extends OperationName> = (ctx: CallContext, params: ParamsOf<Name>) => Promise<OpResult>;
