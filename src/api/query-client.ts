import { QueryClient } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { isApiError } from './errors';
import { session } from './session';

/** Tries of a read refused while the service's database or store is out (503 service-unavailable), after the first. */
export const OUTAGE_RETRIES = 3;
const OUTAGE_DELAY_SECONDS = 5;

/** A passing outage: the refusal with reason service-unavailable, or an HTTP 503 (a plain route, a proxy). Other 503s stay refusals. */
export function isPassingOutage(error: unknown): boolean {
  if (!isApiError(error)) return false;
  return (error.code === 'Unavailable' && error.details.reason === 'service-unavailable') || (error.code === 'Protocol' && error.status === 503);
}

/** Only an unreachable service or a passing outage is worth retrying: any other refusal answers the same way again. */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (isPassingOutage(error)) return failureCount < OUTAGE_RETRIES;
  return isApiError(error, 'Network') && failureCount < 2;
}

/** An outage's retry waits what the service asked (retryAfter); the rest back off as react-query does by default. */
export function retryDelay(failureCount: number, error: unknown): number {
  if (isPassingOutage(error)) return ((isApiError(error) && error.retryAfter) || OUTAGE_DELAY_SECONDS) * 1000;
  return Math.min(1000 * 2 ** failureCount, 30_000);
}

export const queryClient = new QueryClient({
  defaultOptions: {
    // Mutations are never tried again: one refused for an outage may have been done all the same.
    queries: { retry: shouldRetry, retryDelay, staleTime: 30_000 },
    mutations: { retry: false },
  },
});

const retryingOutage = () => queryClient.getQueryCache().getAll().some((query) => query.state.fetchStatus === 'fetching' && isPassingOutage(query.state.fetchFailureReason));
const subscribeToQueries = (onChange: () => void) => queryClient.getQueryCache().subscribe(onChange);

/** Whether a read is being tried again because the service is temporarily unavailable (the notice says so). */
export function useRetryingOutage(): boolean {
  return useSyncExternalStore(subscribeToQueries, retryingOutage);
}

// Cached data belongs to one session: a logout, an expired token or another login starts afresh.
let cachedFor = session.get()?.token;
session.subscribe(() => {
  const token = session.get()?.token;
  if (token !== cachedFor) queryClient.clear();
  cachedFor = token;
});
