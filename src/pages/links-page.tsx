/** /links: every linked file; hits change with every visitor's download, so the list is asked for again whenever shown. */
import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo, useRef, useState } from 'react';
import { LINKS_SORT, LINK_SORT_KEYS, linkQueries } from '../api/links';
import type { FileItem } from '../api/results';
import { ListToolbar } from '../components/file-browser/sort-control';
import { EmptyState } from '../components/file-list/empty-state';
import { ListingStates } from '../components/file-list/listing-states';
import { copyLinks } from '../components/links/copy-links';
import { LinkList } from '../components/links/link-list';
import { RemoveLinkDialog } from '../components/links/remove-link-dialog';
import { ToolButton } from '../components/ui/button';
import { PageHeading } from '../components/page-heading';
import { FilterField } from '../components/ui/filter-field';
import { useDocumentTitle } from '../hooks/use-document-title';
import { useFilterParam } from '../hooks/use-filter-param';
import { useSortParam } from '../hooks/use-sort-param';
import { useI18n } from '../i18n';
import { filterByName } from '../lib/name-filter';

const NO_FILES: readonly FileItem[] = [];

export function LinksPage() {
  const { t } = useI18n();
  useDocumentTitle(t.linksTitle);
  const { sort, setSort, sortBy } = useSortParam(LINKS_SORT);
  const links = useQuery({ ...linkQueries.list(sort), placeholderData: (previous) => previous });
  const all = links.data?.files ?? NO_FILES;
  const [filter, setFilter] = useFilterParam();
  const files = useMemo(() => filterByName(all, filter), [all, filter]);
  const [removing, setRemoving] = useState<{ readonly item: FileItem; readonly index: number } | null>(null);
  const [focusIndex, setFocusIndex] = useState<number | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  const onCopy = useCallback((item: FileItem) => void copyLinks(t, item.url ? [item.url] : []), [t]);
  const onRemove = useCallback((item: FileItem, index: number) => setRemoving({ item, index }), []);
  const onFocusPlaced = useCallback(() => setFocusIndex(null), []);

  return (
    <section aria-labelledby="links-title" className="flex min-h-0 flex-1 flex-col gap-3">
      <PageHeading id="links-title" title={t.linksTitle} hint={t.linksHint} updating={links.isFetching && !links.isPending} headingRef={heading} />

      {all.length > 0 && (
        <ListToolbar sort={sort} setSort={setSort} keys={LINK_SORT_KEYS}>
          <FilterField label={t.filterByName} value={filter} onChange={setFilter} />
          <ToolButton icon="reload" label={t.linksRefresh} wide onClick={() => void links.refetch()} disabled={links.isFetching} />
        </ListToolbar>
      )}

      <ListingStates
        query={links}
        subject={t.linksSubject}
        empty={
          all.length === 0 && (
            <EmptyState icon="directLink" title={t.linksEmpty}>
              {t.linksEmptyHint}
            </EmptyState>
          )
        }
      >
        {files.length === 0 ? (
          <p className="text-sm text-gray-700 dark:text-gray-300">{t.filterNoMatch(all.length)}</p>
        ) : (
          <>
            <LinkList
              items={files}
              sort={sort}
              onSort={sortBy}
              onCopy={onCopy}
              onRemove={onRemove}
              focusIndex={focusIndex}
              onFocusPlaced={onFocusPlaced}
            />
            <p className="text-sm text-gray-700 dark:text-gray-300">{t.linksCount(files.length)}</p>
          </>
        )}
      </ListingStates>

      {removing && (
        <RemoveLinkDialog
          files={[removing.item]}
          onClose={() => setRemoving(null)}
          onRemoved={() => {
            // The row goes away with its buttons: focus the row that takes its place, or the heading when the list is empty.
            if (files.length > 1) setFocusIndex(removing.index);
            else requestAnimationFrame(() => heading.current?.focus());
          }}
        />
      )}
    </section>
  );
}
