import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { InlineError } from '../error-panel';
import { useI18n } from '../../i18n';

/** Asks before something that cannot be undone; Cancel has the focus. */
export function ConfirmDialog({
  title,
  description,
  confirmLabel,
  busyLabel,
  busy,
  error,
  onConfirm,
  onClose,
}: {
  readonly title: string;
  readonly description: string;
  readonly confirmLabel: string;
  readonly busyLabel: string;
  readonly busy: boolean;
  readonly error?: unknown;
  readonly onConfirm: () => void;
  readonly onClose: () => void;
}) {
  const { t } = useI18n();
  return (
    <Dialog role="alertdialog" title={title} description={<p>{description}</p>} onClose={onClose}>
      {error !== undefined && error !== null && <InlineError error={error} />}
      <DialogActions>
        <Button variant="secondary" onClick={onClose} data-autofocus="">
          {t.cancel}
        </Button>
        <Button variant="danger" onClick={onConfirm} busy={busy} busyLabel={busyLabel}>
          {confirmLabel}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
