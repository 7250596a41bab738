import { useUnshareItems } from '../../api/shares';
import type { Item } from '../../api/results';
import { useI18n } from '../../i18n';
import { notify } from '../../lib/notices';
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
      busy={unshare.isPending}
      error={unshare.error}
      onClose={onClose}
      onConfirm={() =>
        unshare.mutate(items, {
          onSuccess: () => {
            notify('info', t.sharingStopped(what));
            onClose();
            onStopped?.();
          },
        })
      }
    />
  );
}
