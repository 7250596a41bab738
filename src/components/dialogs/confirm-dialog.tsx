import type { UseMutationResult } from '@tanstack/react-query';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { InlineError } from '../error-panel';
import { useI18n } from '../../i18n';
import { notify } from '../../lib/notices';

/**
 * Asks before `mutation` on `variables`; done, says `done` (a notice, or a function that says it) and closes. Something that
 * cannot be undone is an alert with the focus on Cancel; an `undoable` one (to the bin) is a dialog with the focus on the action.
 */
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
  undoable = false,
}: {
  readonly title: string;
  readonly description: string;
  readonly confirmLabel: string;
  readonly busyLabel: string;
  readonly mutation: UseMutationResult<unknown, Error, V>;
  readonly variables: V;
  readonly done: string | (() => void);
  /** After the dialog has closed. */
  readonly onDone?: () => void;
  readonly onClose: () => void;
  readonly undoable?: boolean;
}) {
  const { t } = useI18n();
  const onConfirm = () =>
    mutation.mutate(variables, {
      onSuccess: () => {
        if (typeof done === 'string') notify('info', done);
        else done();
        onClose();
        onDone?.();
      },
    });
  return (
    <Dialog role={undoable ? 'dialog' : 'alertdialog'} title={title} description={<p>{description}</p>} onClose={onClose}>
      {mutation.error !== null && <InlineError error={mutation.error} />}
      <DialogActions>
        <Button variant="secondary" onClick={onClose} data-autofocus={undoable ? undefined : ''}>
          {t.cancel}
        </Button>
        <Button variant="danger" onClick={onConfirm} busy={mutation.isPending} busyLabel={busyLabel} data-autofocus={undoable ? '' : undefined}>
          {confirmLabel}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
