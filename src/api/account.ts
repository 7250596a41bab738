/** GetAccountInfo: the account's bytes used and quota, for the meter and for refusing uploads that cannot fit. */
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './client';
import { queryClient } from './query-client';
import type { AccountInfo } from './results';

export const accountInfoQuery = queryOptions({
  queryKey: ['account', 'info'] as const,
  queryFn: ({ signal }) => api.getAccountInfo({}, { signal }),
  staleTime: 30_000,
});

export const useAccountInfo = () => useQuery(accountInfoQuery);

/** Uploads, deletions and the bin change what is used: read again when next shown. */
export const invalidateAccountInfo = () => queryClient.invalidateQueries({ queryKey: accountInfoQuery.queryKey });

/** The bytes left, as last read (fetched now if never read); undefined when it cannot be known. */
export async function bytesLeft(): Promise<number | undefined> {
  const info: AccountInfo | undefined = await queryClient.fetchQuery(accountInfoQuery).catch(() => undefined);
  return info && Math.max(0, info.quota - info.used);
}
