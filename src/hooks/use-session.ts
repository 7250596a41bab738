import { useSyncExternalStore } from 'react';
import { session, type Session } from '../api/session';

/** The current session; re-renders on login, logout and an expired token. */
export function useSession(): Session | null {
  return useSyncExternalStore(session.subscribe, session.get);
}
