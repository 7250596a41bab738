import type { ReactNode } from 'react';
import { Navigate, useLocation, type Location } from 'react-router';
import { session, type SessionEnd } from '../api/session';
import { useSession } from '../hooks/use-session';

/** What the login page is told: where to return to, and why the user is there. */
export interface LoginState {
  readonly from?: Pick<Location, 'pathname' | 'search' | 'hash'>;
  readonly reason?: SessionEnd | null;
}

/** Without a session, sends the user to /login, which brings them back here afterwards (after a logout, home). */
export function RequireAuth({ children }: { readonly children: ReactNode }) {
  const current = useSession();
  const location = useLocation();
  if (!current) {
    const { pathname, search, hash } = location;
    const reason = session.lastEnd();
    // After an explicit logout the next login starts at home; otherwise it returns here.
    const state: LoginState = reason === 'logout' ? { reason } : { from: { pathname, search, hash }, reason };
    return <Navigate to="/login" replace state={state} />;
  }
  return children;
}
