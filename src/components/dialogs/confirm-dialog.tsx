import type { UseMutationResult } from '@tanstack/react-query';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { InlineError } from '../error-panel';
import { useI18n } from '../../i18n';
import { notify } from '../../lib/notices';

/** Asks before something that cannot be undone (`mutation` on `variables`); Cancel has the focus. Done: the notice `done`, then closed. */
export function ConfirmDialog<V>({
  title,
  description,
  confirmLabel,
  busyLabel,
  mutation,
  variables,
  done,
  onDone,
  onClose,
}: {
  readonly title: string;
  readonly description: string;
  readonly confirmLabel: string;
  readonly busyLabel: string;
  readonly mutation: UseMutationResult<unknown, Error, V>;
  readonly variables: V;
  readonly done: string;
  /** After the dialog has closed. */
  readonly onDone?: () => void;
  readonly onClose: () => void;
}) {
  const { t } = useI18n();
  const onConfirm = () =>
    mutation.mutate(variables, {
      onSuccess: () => {
        notify('info', done);
        onClose();
        onDone?.();
      },
    });
  return (
    <Dialog role="alertdialog" title={title} description={<p>{description}</p>} onClose={onClose}>
      {mutation.error !== null && <InlineError error={mutation.error} />}
      <DialogActions>
        <Button variant="secondary" onClick={onClose} data-autofocus="">
          {t.cancel}
        </Button>
        <Button variant="danger" onClick={onConfirm} busy={mutation.isPending} busyLabel={busyLabel}>
          {confirmLabel}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
