/** Search folder and file names in the whole account (folders first); the keyword is in the address (?q=), written once typing pauses. */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { DEFAULT_SORT, fileQueries, itemsOf } from '../api/files';
import { FileResults } from '../components/file-browser/file-results';
import { EmptyState } from '../components/file-list/empty-state';
import { ListingStates } from '../components/file-list/listing-states';
import { PageHeading } from '../components/page-heading';
import { inputClass } from '../components/ui/field';
import { Spinner } from '../components/ui/button';
import { useDebouncedValue } from '../hooks/use-debounced-value';
import { useDocumentTitle } from '../hooks/use-document-title';
import { useReplacedParam } from '../hooks/use-filter-param';
import { useSortParam } from '../hooks/use-sort-param';
import { useI18n } from '../i18n';

/** FSS_MAX_KEYWORD_LENGTH: the service refuses longer keywords. */
const MAX_KEYWORD = 100;
const DEBOUNCE_MS = 300;

export function SearchPage() {
  const { t } = useI18n();
  const [addressKeyword, setAddressKeyword] = useReplacedParam('q');
  const [text, setText] = useState(addressKeyword);
  const settled = useDebouncedValue(text, DEBOUNCE_MS);
  const { sort, setSort, sortBy } = useSortParam(DEFAULT_SORT);
  const inputId = useId();
  const hintId = useId();

  // Back and forward change the address: the field follows (but not when the typing wrote it).
  const written = useRef(addressKeyword);
  useEffect(() => {
    if (addressKeyword === written.current) return;
    written.current = addressKeyword;
    setText(addressKeyword);
  }, [addressKeyword]);
  useEffect(() => {
    if (settled === written.current) return;
    written.current = settled;
    setAddressKeyword(settled);
  }, [settled, setAddressKeyword]);

  const keyword = addressKeyword;
  const tooLong = [...keyword].length > MAX_KEYWORD;
  const search = useQuery({
    ...fileQueries.search(keyword, sort),
    enabled: keyword.length > 0 && !tooLong,
    placeholderData: (previous) => previous,
  });
  useDocumentTitle(keyword ? t.searchResultsFor(keyword) : t.search);
  const items = itemsOf(search.data);

  return (
    <section aria-labelledby="search-title" className="flex min-h-0 flex-1 flex-col gap-3">
      <PageHeading id="search-title" title={t.search} />
      <form role="search" onSubmit={(event) => event.preventDefault()} className="max-w-xl">
        <label htmlFor={inputId} className="block text-sm font-medium">
          {t.searchLabel}
        </label>
        <div className="relative">
          <input
            id={inputId}
            type="search"
            value={text}
            onChange={(event) => setText(event.target.value)}
            placeholder={t.searchPlaceholder}
            aria-describedby={hintId}
            autoComplete="off"
            spellCheck={false}
            autoFocus
            className={inputClass}
          />
          {search.isFetching && (
            <span className="absolute top-1/2 right-3 -translate-y-1/2 text-gray-600">
              <Spinner />
            </span>
          )}
        </div>
        <p id={hintId} className="mt-1 text-sm text-gray-700 dark:text-gray-300">
          {tooLong ? t.searchTooLong : t.searchHint}
        </p>
      </form>

      {keyword && !tooLong && (
        <ListingStates query={search} subject={t.subjectSearch} empty={items.length === 0 && <EmptyState icon="search" title={t.searchNoResults(keyword)} />}>
          <h2 className="sr-only">{t.searchResultsFor(keyword)}</h2>
          <FileResults
            items={items}
            label={t.searchResultsFor(keyword)}
            sort={sort}
            setSort={setSort}
            sortBy={sortBy}
            footer={search.data?.truncated ? <span>{t.searchTruncated}</span> : null}
          />
        </ListingStates>
      )}
    </section>
  );
}
