import type { FileItem } from '../../api/results';
import { useI18n } from '../../i18n';
import { formatSize, formatTime } from '../../lib/format';
import { Button } from '../ui/button';

/** A file's name, size, time and path; with a note and a Download button where there is no preview. */
export function DetailsPanel({
  file,
  folder,
  note,
  onDownload,
}: {
  readonly file: FileItem;
  readonly folder?: string;
  readonly note?: string;
  readonly onDownload?: () => void;
}) {
  const { t, language } = useI18n();
  const path = file.path ?? (folder === undefined ? undefined : `${folder.replace(/\/$/, '')}/${file.name}`);
  const rows: [string, string][] = [
    [t.detailsName, file.name],
    [t.detailsSize, formatSize(file.size, language)],
    [t.detailsTime, formatTime(file.time, language)],
    ...(path ? [[t.detailsPath, path] as [string, string]] : []),
  ];
  return (
    <section aria-label={t.details} className="m-auto w-full max-w-md space-y-4 p-4">
      {note && <p role="status">{note}</p>}
      <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
        {rows.map(([term, value]) => (
          <div key={term} className="contents">
            <dt className="text-gray-400">{term}</dt>
            <dd className="break-all">{value}</dd>
          </div>
        ))}
      </dl>
      {onDownload && (
        <Button icon="download" onClick={onDownload}>
          {t.download}
        </Button>
      )}
    </section>
  );
}
