import { Link } from 'react-router';
import { useDocumentTitle } from '../hooks/use-document-title';

export function NotFoundPage() {
  useDocumentTitle('Page not found');
  return (
    <main className="mx-auto max-w-xl space-y-3 px-4 py-12">
      <h1 className="text-2xl font-semibold">Page not found</h1>
      <p>There is nothing at this address.</p>
      <p>
        <Link to="/" className="text-blue-700 underline dark:text-blue-300">
          Go to your files
        </Link>
      </p>
    </main>
  );
}
