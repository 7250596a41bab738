import { Outlet } from 'react-router';
import { useI18n } from '../i18n';
import { AppHeader } from './app-header';
import { Notices } from './notices';
import { RequireAuth } from './require-auth';
import { UploadRoot } from './uploads/upload-root';

/** The signed-in frame, exactly the screen's height: pages scroll their lists inside it, which is what lets them be virtualized. */
export function AppLayout() {
  const { t } = useI18n();
  return (
    <RequireAuth>
      <div className="flex h-dvh flex-col">
        <a
          href="#main"
          className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-10 focus:rounded focus:bg-blue-600 focus:px-3 focus:py-2 focus:text-white"
        >
          {t.skipToContent}
        </a>
        <AppHeader />
        <main id="main" tabIndex={-1} className="mx-auto flex min-h-0 w-full max-w-6xl flex-1 flex-col px-3 py-3 outline-none sm:px-6">
          <Outlet />
        </main>
      </div>
      <Notices />
      <UploadRoot />
    </RequireAuth>
  );
}
