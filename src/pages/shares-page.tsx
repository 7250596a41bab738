/** /shares: everything the account has shared, with link actions; the service sorts, the order is in the address. */
import { useQuery } from '@tanstack/react-query';
import { useMemo, useRef, useState } from 'react';
import { Link } from 'react-router';
import { itemsOf, type SortKey } from '../api/files';
import type { Item } from '../api/results';
import { SHARES_SORT, shareQueries } from '../api/shares';
import { ListToolbar } from '../components/file-browser/sort-control';
import { EmptyState } from '../components/file-list/empty-state';
import { ListingStates } from '../components/file-list/listing-states';
import { ShareDialog } from '../components/sharing/share-dialog';
import { SharesList } from '../components/sharing/shares-list';
import { StopSharingDialog } from '../components/sharing/stop-sharing-dialog';
import { PageHeading } from '../components/page-heading';
import { FilterField } from '../components/ui/filter-field';
import { useDocumentTitle } from '../hooks/use-document-title';
import { useFilterParam } from '../hooks/use-filter-param';
import { useSortParam } from '../hooks/use-sort-param';
import { useI18n } from '../i18n';
import { filterByName } from '../lib/name-filter';

/** "Shared" and "Link" sort nothing here: every item is shared. */
const SORT_KEYS: readonly SortKey[] = ['name', 'time', 'size'];

export function SharesPage() {
  const { t } = useI18n();
  useDocumentTitle(t.sharingPageTitle);
  const { sort, setSort } = useSortParam(SHARES_SORT, SORT_KEYS);
  const shares = useQuery({ ...shareQueries.list(sort), placeholderData: (previous) => previous });
  const all = itemsOf(shares.data);
  const [filter, setFilter] = useFilterParam();
  const items = useMemo(() => filterByName(all, filter), [all, filter]);
  const [editing, setEditing] = useState<Item | null>(null);
  const [stopping, setStopping] = useState<Item | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  return (
    <section aria-labelledby="shares-title" className="flex min-h-0 flex-1 flex-col gap-3">
      <PageHeading id="shares-title" title={t.sharingPageTitle} hint={t.sharingPageHint} updating={shares.isFetching && !shares.isPending} headingRef={heading} />

      {all.length > 0 && (
        <ListToolbar sort={sort} setSort={setSort} keys={SORT_KEYS}>
          <FilterField label={t.filterByName} value={filter} onChange={setFilter} />
          <p className="text-sm text-gray-700 dark:text-gray-300" aria-live="polite">
            {t.sharingPageCount(items.length)}
          </p>
        </ListToolbar>
      )}

      <ListingStates
        query={shares}
        subject={t.sharingPageSubject}
        empty={
          all.length === 0 && (
            <EmptyState icon="share" title={t.sharingPageEmpty}>
              <p>{t.sharingPageEmptyHint}</p>
              <p className="mt-2">
                <Link to="/" className="text-blue-800 underline underline-offset-2 dark:text-blue-200">
                  {t.goToFiles}
                </Link>
              </p>
            </EmptyState>
          )
        }
      >
        {items.length === 0 ? (
          <p className="text-sm text-gray-700 dark:text-gray-300">{t.filterNoMatch(all.length)}</p>
        ) : (
          <SharesList items={items} label={t.sharingPageListLabel} onEdit={setEditing} onStop={setStopping} />
        )}
      </ListingStates>

      {editing && <ShareDialog items={[editing]} onClose={() => setEditing(null)} />}
      {stopping && (
        <StopSharingDialog
          items={[stopping]}
          onClose={() => setStopping(null)}
          // Its card is gone, and with it the button that had the focus.
          onStopped={() => requestAnimationFrame(() => heading.current?.focus())}
        />
      )}
    </section>
  );
}
