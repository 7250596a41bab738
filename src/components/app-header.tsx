import { Link } from 'react-router';
import { useLogout } from '../api/auth';
import { useSession } from '../hooks/use-session';
import { Button } from './ui/button';

export function AppHeader() {
  const current = useSession();
  const logout = useLogout();
  // Ending the session is enough: RequireAuth then takes the user to /login.
  const onLogout = () => logout.mutate();

  return (
    <header className="border-b border-gray-200 bg-white dark:border-gray-800 dark:bg-gray-900">
      <div className="mx-auto flex max-w-5xl items-center gap-3 px-3 py-2 sm:px-6">
        <Link
          to="/"
          className="rounded text-lg font-semibold focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600"
        >
          Files
        </Link>
        {current && (
          <div className="ml-auto flex min-w-0 items-center gap-3">
            <p className="min-w-0 truncate text-sm text-gray-600 dark:text-gray-300" title={current.account}>
              <span className="sr-only sm:not-sr-only">Signed in as </span>
              <span className="font-medium text-gray-900 dark:text-gray-100" data-testid="account-name">
                {current.account}
              </span>
            </p>
            <Button variant="secondary" onClick={onLogout} busy={logout.isPending} busyLabel="Logging out…" className="shrink-0">
              Log out
            </Button>
          </div>
        )}
      </div>
    </header>
  );
}
