import { QueryClientProvider } from '@tanstack/react-query';
import { lazy, Suspense } from 'react';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { AppLayout } from './components/app-layout';
import { queryClient } from './lib/query-client';
import { FolderPage } from './pages/folder-page';
import { LoginPage } from './pages/login-page';
import { NotFoundPage } from './pages/not-found-page';
import { RecentPage } from './pages/recent-page';
import { RecycleBinPage } from './pages/recycle-bin-page';
import { LinksPage } from './pages/links-page';
import { SearchPage } from './pages/search-page';
import { SharesPage } from './pages/shares-page';

/**
 * Client routes. None of them starts with a service path (/…Service.asmx, /upload, /d/, /l/,
 * /files/): the server answers those itself and serves the app for everything else.
 *
 * - /login
 * - /                 the root folder;  /folder/:id  a folder (?order=name|time|size|share|link&desc=0|1)
 * - /search?q=…       file names containing q
 * - /recent           files added in the last 30 days
 * - /bin              the recycle bin
 * - /links            files with a direct link (?order=name|time|size&desc=0|1)
 * - /shares           what the account has shared (?order=…&desc=…)
 * - /s/:code          the public share page (no login; ?dir=…&order=…&desc=…, ?pwd=… once), loaded on demand
 */
// The share page is a chunk of its own, fetched on its first visit: the file manager's first load does not carry it.
const SharePage = lazy(() => import('./pages/share-page').then((module) => ({ default: module.SharePage })));

export const router = createBrowserRouter([
  { path: '/login', element: <LoginPage /> },
  {
    path: '/s/:code',
    element: (
      <Suspense fallback={null}>
        <SharePage />
      </Suspense>
    ),
  },
  {
    element: <AppLayout />,
    children: [
      { index: true, element: <FolderPage /> },
      { path: 'folder/:id', element: <FolderPage /> },
      { path: 'search', element: <SearchPage /> },
      { path: 'recent', element: <RecentPage /> },
      { path: 'bin', element: <RecycleBinPage /> },
      { path: 'links', element: <LinksPage /> },
      { path: 'shares', element: <SharesPage /> },
    ],
  },
  { path: '*', element: <NotFoundPage /> },
]);

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}
