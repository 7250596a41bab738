import type { Item } from '../../api/results';
import { useDeleteItems, useRestoreItems, useRetentionDays } from '../../api/recycle-bin';
import { useI18n } from '../../i18n';
import { notify } from '../../lib/notices';
import { InlineError } from '../error-panel';
import { notifyBinned } from '../file-browser/undo';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';

/** To the recycle bin (saying how long it keeps items), or permanently, which is said plainly and asked for again. */
export function DeleteDialog({
  items,
  permanent,
  onClose,
}: {
  readonly items: readonly Item[];
  readonly permanent: boolean;
  readonly onClose: () => void;
}) {
  const { t } = useI18n();
  const remove = useDeleteItems();
  const restore = useRestoreItems();
  const days = useRetentionDays(!permanent);
  const what = t.itemsPhrase(items.length, items[0]?.name);

  const onConfirm = () => {
    remove.mutate(
      { items, permanent },
      {
        onSuccess: () => {
          if (permanent) notify('info', t.deletedForever(what));
          else notifyBinned(t, items, t.movedToBin(what), restore.mutateAsync);
          onClose();
        },
      },
    );
  };

  return (
    <Dialog
      role={permanent ? 'alertdialog' : 'dialog'}
      title={permanent ? t.deletePermanentTitle(what) : t.deleteTitle(what)}
      description={<p>{permanent ? t.deletePermanentExplain : t.deleteExplain(days)}</p>}
      onClose={onClose}
    >
      {remove.isError && <InlineError error={remove.error} />}
      <DialogActions>
        <Button variant="secondary" onClick={onClose} data-autofocus={permanent ? '' : undefined}>
          {t.cancel}
        </Button>
        <Button
          variant="danger"
          onClick={onConfirm}
          busy={remove.isPending}
          busyLabel={t.deleting}
          data-autofocus={permanent ? undefined : ''}
        >
          {permanent ? t.deletePermanently : t.moveToBin}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
