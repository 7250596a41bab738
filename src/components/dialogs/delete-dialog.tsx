import type { Item } from '../../api/results';
import { useDeleteItems, useRestoreItems, useRetentionDays } from '../../api/recycle-bin';
import { useI18n } from '../../i18n';
import { notifyBinned } from '../file-browser/undo';
import { ConfirmDialog } from './confirm-dialog';

/** To the recycle bin (saying how long it keeps items), or permanently, which is said plainly and asked for again. */
export function DeleteDialog({ items, permanent, onClose }: { readonly items: readonly Item[]; readonly permanent: boolean; readonly onClose: () => void }) {
  const { t } = useI18n();
  const remove = useDeleteItems();
  const restore = useRestoreItems();
  const days = useRetentionDays(!permanent);
  const what = t.itemsPhrase(items.length, items[0]?.name);
  return (
    <ConfirmDialog
      title={permanent ? t.deletePermanentTitle(what) : t.deleteTitle(what)}
      description={permanent ? t.deletePermanentExplain : t.deleteExplain(days)}
      confirmLabel={permanent ? t.deletePermanently : t.moveToBin}
      busyLabel={t.deleting}
      mutation={remove}
      variables={{ items, permanent }}
      done={permanent ? t.deletedForever(what) : () => notifyBinned(t, items, t.movedToBin(what), restore.mutateAsync)}
      onClose={onClose}
      undoable={!permanent}
    />
  );
}
