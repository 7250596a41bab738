/** Recent uploads: the newest 500 files added in the last 30 days (GetNewUploadFiles), with their folders. */
import { useQuery } from '@tanstack/react-query';
import { RECENT_SORT, fileQueries, itemsOf } from '../api/files';
import { FileResults } from '../components/file-browser/file-results';
import { EmptyState } from '../components/file-list/empty-state';
import { ListingStates } from '../components/file-list/listing-states';
import { PageHeading } from '../components/page-heading';
import { useDocumentTitle } from '../hooks/use-document-title';
import { useSortParam } from '../hooks/use-sort-param';
import { useI18n } from '../i18n';

export function RecentPage() {
  const { t } = useI18n();
  useDocumentTitle(t.recentUploads);
  const { sort, setSort, sortBy } = useSortParam(RECENT_SORT);
  const recent = useQuery({ ...fileQueries.recent(sort), placeholderData: (previous) => previous });
  const items = itemsOf(recent.data);

  return (
    <section aria-labelledby="recent-title" className="flex min-h-0 flex-1 flex-col gap-3">
      <PageHeading id="recent-title" title={t.recentUploads} hint={t.recentHint} />
      <ListingStates query={recent} subject={t.subjectRecent} empty={items.length === 0 && <EmptyState icon="clock" title={t.recentEmpty} />}>
        <FileResults items={items} label={t.recentUploads} sort={sort} setSort={setSort} sortBy={sortBy} />
      </ListingStates>
    </section>
  );
}
