import { QueryClientProvider } from '@tanstack/react-query';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { AppLayout } from './components/app-layout';
import { queryClient } from './lib/query-client';
import { FolderPage } from './pages/folder-page';
import { LoginPage } from './pages/login-page';
import { NotFoundPage } from './pages/not-found-page';

/**
 * Client routes. None of them starts with a service path (/…Service.asmx, /upload, /d/, /l/,
 * /files/): the server answers those itself and serves the app for everything else.
 */
export const router = createBrowserRouter([
  { path: '/login', element: <LoginPage /> },
  {
    element: <AppLayout />,
    children: [
      { index: true, element: <FolderPage /> },
      { path: 'folder/:id', element: <FolderPage /> },
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
