import { useI18n } from '../../i18n';

/** Grey rows where a listing is about to appear; announced once as "Loading…". */
export function ListSkeleton({ rows = 8 }: { readonly rows?: number }) {
  const { t } = useI18n();
  return (
    <div aria-busy="true" className="overflow-hidden rounded-md border border-gray-200 bg-white dark:border-gray-800 dark:bg-gray-900">
      <p role="status" className="sr-only">
        {t.loading}
      </p>
      {Array.from({ length: rows }, (_, index) => (
        <div key={index} aria-hidden="true" className="flex h-12 items-center gap-3 border-b border-gray-100 px-3 dark:border-gray-800">
          <span className="size-6 animate-pulse rounded bg-gray-200 dark:bg-gray-700" />
          <span className="h-3 animate-pulse rounded bg-gray-200 dark:bg-gray-700" style={{ width: `${30 + ((index * 37) % 45)}%` }} />
          <span className="ml-auto hidden h-3 w-16 animate-pulse rounded bg-gray-200 sm:block dark:bg-gray-700" />
          <span className="hidden h-3 w-32 animate-pulse rounded bg-gray-200 md:block dark:bg-gray-700" />
        </div>
      ))}
    </div>
  );
}

/** A grey line where a heading or breadcrumbs are about to appear. */
export function LineSkeleton({ className = 'w-48' }: { readonly className?: string }) {
  return <span aria-hidden="true" className={`inline-block h-4 animate-pulse rounded bg-gray-200 dark:bg-gray-700 ${className}`} />;
}
