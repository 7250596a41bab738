import { QueryClientProvider } from '@tanstack/react-query';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { AppLayout } from './components/app-layout';
import { queryClient } from './lib/query-client';
import { FolderPage } from './pages/folder-page';
import { LoginPage } from './pages/login-page';
import { NotFoundPage } from './pages/not-found-page';
import { RecentPage } from './pages/recent-page';
import { RecycleBinPage } from './pages/recycle-bin-page';
import { SearchPage } from './pages/search-page';

/**
 * Client routes. None of them starts with a service path (/…Service.asmx, /upload, /d/, /l/,
 * /files/): the server answers those itself and serves the app for everything else.
 *
 * - /login
 * - /                 the root folder;  /folder/:id  a folder (?order=name|time|size|share|link&desc=0|1)
 * - /search?q=…       file names containing q
 * - /recent           files added in the last 30 days
 * - /bin              the recycle bin
 */
export const router = createBrowserRouter([
  { path: '/login', element: <LoginPage /> },
  {
    element: <AppLayout />,
    children: [
      { index: true, element: <FolderPage /> },
      { path: 'folder/:id', element: <FolderPage /> },
      { path: 'search', element: <SearchPage /> },
      { path: 'recent', element: <RecentPage /> },
      { path: 'bin', element: <RecycleBinPage /> },
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
