/** The typed client: one method per catalog operation, derived from the generated descriptors (nothing written per operation). */
import { ApiError } from './errors';
import { operations, type OperationDescriptor, type ResultKind } from './generated/operations';
import { resultParsers, type ResultOf } from './results';
import { createTransport, type CallOptions, type Transport } from './transport';
import { getLanguage } from '../i18n';

type Operations = typeof operations;

type ParamsOf<D> = D extends OperationDescriptor<infer P, ResultKind, string> ? P : never;
type ResultKindOf<D> = D extends OperationDescriptor<unknown, infer R, string> ? R : never;

/** Operations without caller parameters (Logout, RecycleEmpty) may be called with none. */
export type ApiMethod<D> = {} extends ParamsOf<D>
  ? (params?: ParamsOf<D>, options?: CallOptions) => Promise<ResultOf<ResultKindOf<D>>>
  : (params: ParamsOf<D>, options?: CallOptions) => Promise<ResultOf<ResultKindOf<D>>>;

export type Api = {
  readonly [K in keyof Operations as Operations[K]['method']]: ApiMethod<Operations[K]>;
};

export function createApi(transport: Transport): Api {
  const api: Record<string, (params?: object, options?: CallOptions) => Promise<unknown>> = {};
  for (const descriptor of Object.values(operations) as OperationDescriptor[]) {
    if (descriptor.result === 'listing' || descriptor.result === 'pathListing') {
      // Listings are read as they stream in (a folder may hold 100,000 items).
      const needsPath = descriptor.result === 'pathListing';
      api[descriptor.method] = async (params = {}, options) => {
        const listing = await transport.listing(descriptor, params as Record<string, unknown>, options);
        if (needsPath && !listing.path) throw new ApiError('Protocol', "The service's answer is not understood: the listing has no <path>.");
        return listing;
      };
      continue;
    }
    const parse = resultParsers[descriptor.result] as (element: Readonly<Record<string, unknown>>) => unknown;
    api[descriptor.method] = async (params = {}, options) =>
      parse(await transport.call(descriptor, params as Record<string, unknown>, options));
  }
  return api as unknown as Api;
}

export const transport: Transport = createTransport({ language: getLanguage });
export const api: Api = createApi(transport);
