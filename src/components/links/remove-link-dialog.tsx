/** Asks before removing direct links (FileUnlink): whoever has a link loses the file at once. */
import { useRemoveLinks } from '../../api/links';
import type { FileItem } from '../../api/results';
import { useI18n } from '../../i18n';
import { ConfirmDialog } from '../dialogs/confirm-dialog';

export function RemoveLinkDialog({
  files,
  onClose,
  onRemoved,
}: {
  readonly files: readonly Pick<FileItem, 'id' | 'name'>[];
  readonly onClose: () => void;
  /** After the service removed them (the dialog closes itself then). */
  readonly onRemoved?: () => void;
}) {
  const { t } = useI18n();
  const remove = useRemoveLinks();
  const what = t.linksFiles(files.length, files[0]?.name);
  return (
    <ConfirmDialog
      title={t.linksRemoveTitle(what)}
      description={t.linksRemoveExplain}
      confirmLabel={t.linksRemove(files.length)}
      busyLabel={t.linksRemoving}
      mutation={remove}
      variables={files}
      done={t.linksRemoved(what)}
      onDone={onRemoved}
      onClose={onClose}
    />
  );
}
