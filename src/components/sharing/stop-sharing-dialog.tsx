import { useUnshareItems } from '../../api/shares';
import type { Item } from '../../api/results';
import { useI18n } from '../../i18n';
import { ConfirmDialog } from '../dialogs/confirm-dialog';

/** Unshare, asked first: the links stop working at once, and cannot be brought back. */
export function StopSharingDialog({
  items,
  onClose,
  onStopped,
}: {
  readonly items: readonly Item[];
  readonly onClose: () => void;
  readonly onStopped?: () => void;
}) {
  const { t } = useI18n();
  const unshare = useUnshareItems();
  const what = t.itemsPhrase(items.length, items[0]?.name);
  return (
    <ConfirmDialog
      title={t.sharingStopTitle(what)}
      description={t.sharingStopExplain}
      confirmLabel={t.sharingStop}
      busyLabel={t.sharingStopping}
      mutation={unshare}
      variables={items}
      done={t.sharingStopped(what)}
      onDone={onStopped}
      onClose={onClose}
    />
  );
}
