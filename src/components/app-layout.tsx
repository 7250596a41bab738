import { Outlet } from 'react-router';
import { AppHeader } from './app-header';
import { RequireAuth } from './require-auth';

/** The signed-in frame: a skip link, the header, and the page. */
export function AppLayout() {
  return (
    <RequireAuth>
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-10 focus:rounded focus:bg-blue-600 focus:px-3 focus:py-2 focus:text-white"
      >
        Skip to content
      </a>
      <AppHeader />
      <main id="main" tabIndex={-1} className="mx-auto max-w-5xl px-3 py-4 outline-none sm:px-6">
        <Outlet />
      </main>
    </RequireAuth>
  );
}
