import type { ReactNode, Ref } from 'react';
import { useI18n } from '../../i18n';
import { Preferences } from '../app-header';
import { Notices } from '../notices';

/** The public share page's frame (no login), the screen's height so a shared folder's list scrolls inside it like the file manager's. */
export function ShareFrame({ children, mainRef }: { readonly children: ReactNode; readonly mainRef?: Ref<HTMLElement> }) {
  const { t } = useI18n();
  return (
    <>
      <div className="flex h-dvh flex-col">
        <a
          href="#main"
          className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-10 focus:rounded focus:bg-blue-600 focus:px-3 focus:py-2 focus:text-white"
        >
          {t.skipToContent}
        </a>
        <header className="border-b border-gray-200 bg-white dark:border-gray-800 dark:bg-gray-900">
          <div className="mx-auto flex max-w-5xl items-center gap-3 px-3 py-2 sm:px-6">
            <p className="text-lg font-semibold">{t.appName}</p>
            <div className="ml-auto">
              <Preferences />
            </div>
          </div>
        </header>
        <main
          id="main"
          ref={mainRef}
          tabIndex={-1}
          className="mx-auto flex min-h-0 w-full max-w-5xl flex-1 flex-col overflow-y-auto px-3 py-4 outline-none sm:px-6"
        >
          {children}
        </main>
      </div>
      <Notices />
    </>
  );
}
