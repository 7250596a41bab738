import { Link } from 'react-router';
import { useDocumentTitle } from '../hooks/use-document-title';
import { useI18n } from '../i18n';

export function NotFoundPage() {
  const { t } = useI18n();
  useDocumentTitle(t.pageNotFound);
  return (
    <main className="mx-auto max-w-xl space-y-3 px-4 py-12">
      <h1 className="text-2xl font-semibold">{t.pageNotFound}</h1>
      <p>{t.pageNotFoundText}</p>
      <p>
        <Link to="/" className="text-blue-700 underline dark:text-blue-300">
          {t.goToFiles}
        </Link>
      </p>
    </main>
  );
}
