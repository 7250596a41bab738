import { QueryClientProvider } from '@tanstack/react-query';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { AppLayout } from './components/app-layout';
import { queryClient } from './api/query-client';
import { FolderPage, prefetchFolder } from './pages/folder-page';
import { LoginPage } from './pages/login-page';
import { NotFoundPage } from './pages/not-found-page';

// None of the routes starts with a service path (/…Service.asmx, /upload, /d/, /l/, /files/): the server answers those itself.
// Landing pages (a folder, the login) come with the first load; the rest are chunks fetched on first visit.
export const router = createBrowserRouter([
  { path: '/login', element: <LoginPage /> },
  { path: '/s/:code', lazy: () => import('./pages/share-page').then((page) => ({ Component: page.SharePage })) },
  {
    element: <AppLayout />,
    children: [
      { index: true, element: <FolderPage />, loader: prefetchFolder },
      { path: 'folder/:id', element: <FolderPage />, loader: prefetchFolder },
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
