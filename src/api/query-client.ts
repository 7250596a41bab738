import { QueryClient } from '@tanstack/react-query';
import { isApiError } from './errors';
import { session } from './session';

/** Only an unreachable service is worth retrying: a refusal answers the same way again. */
function shouldRetry(failureCount: number, error: unknown): boolean {
  return isApiError(error, 'Network') && failureCount < 2;
}

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: { retry: shouldRetry, staleTime: 30_000 },
    mutations: { retry: false },
  },
});

// Cached data belongs to one session: a logout, an expired token or another login starts afresh.
let cachedFor = session.get()?.token;
session.subscribe(() => {
  const token = session.get()?.token;
  if (token !== cachedFor) queryClient.clear();
  cachedFor = token;
});
