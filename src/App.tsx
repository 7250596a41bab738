import { QueryClientProvider } from '@tanstack/react-query';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { AppLayout } from './components/app-layout';
import { queryClient } from './api/query-client';
import { FolderPage } from './pages/folder-page';
import { LoginPage } from './pages/login-page';
import { NotFoundPage } from './pages/not-found-page';

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
 * - /s/:code          the public share page (no login; ?dir=…&order=…&desc=…, ?pwd=… once)
 */
// The pages people land on (a folder, the login) come with the first load; every other page is a
// chunk of its own, fetched when it is first visited (the router keeps the old page until then).
export const router = createBrowserRouter([
  { path: '/login', element: <LoginPage /> },
  { path: '/s/:code', lazy: () => import('./pages/share-page').then((page) => ({ Component: page.SharePage })) },
  {
    element: <AppLayout />,
    children: [
      { index: true, element: <FolderPage /> },
      { path: 'folder/:id', element: <FolderPage /> },
      { path: 'search', lazy: () => import('./pages/search-page').then((page) => ({ Component: page.SearchPage })) },
      { path: 'recent', lazy: () => import('./pages/recent-page').then((page) => ({ Component: page.RecentPage })) },
      { path: 'bin', lazy: () => import('./pages/recycle-bin-page').then((page) => ({ Component: page.RecycleBinPage })) },
      { path: 'links', lazy: () => import('./pages/links-page').then((page) => ({ Component: page.LinksPage })) },
      { path: 'shares', lazy: () => import('./pages/shares-page').then((page) => ({ Component: page.SharesPage })) },
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
