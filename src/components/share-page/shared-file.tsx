import { shareProblem, useShareDownload } from '../../api/share-service';
import type { FileItem } from '../../api/results';
import { useI18n } from '../../i18n';
import { formatSize } from '../../lib/format';
import { notify } from '../../lib/notices';
import { InlineError } from '../error-panel';
import { Button } from '../ui/button';
import { Icon } from '../ui/icons';
import { useSharePreviewSource } from '../viewer/preview-sources';
import { useViewer } from '../viewer/use-viewer';

/** ShareOpen is refetched before the button is free, so the downloads left are current and a reached limit shows. */
export function SharedFileDownload({ code, downpwd, file }: { readonly code: string; readonly downpwd: string; readonly file: FileItem }) {
  const { t, language } = useI18n();
  const download = useShareDownload(code, downpwd);
  const problem = download.error ? shareProblem(download.error) : null;

  const start = () =>
    download.mutate(file, {
      onSuccess: () => notify('info', t.sharePageDownloadStarted(file.name)),
    });
  const viewer = useViewer([file], useSharePreviewSource(code, downpwd, start));

  return (
    <div className="space-y-3 pt-1">
      <Button className="min-h-12 w-full text-base!" onClick={start} busy={download.isPending} busyLabel={t.sharePageDownloadPreparing}>
        <Icon name="download" className="size-5" />
        {t.sharePageDownloadWithSize(formatSize(file.size, language))}
      </Button>
      <Button variant="secondary" className="min-h-12 w-full text-base!" onClick={() => viewer.open(file)}>
        <Icon name="eye" className="size-5" />
        {t.preview}
      </Button>
      {viewer.element}
      {problem && problem.kind !== 'download-limit' && <InlineError error={download.error} subject={t.sharePageSubjectFile} />}
    </div>
  );
}
