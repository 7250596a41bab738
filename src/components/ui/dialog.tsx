/** A modal on the native <dialog> (inert page behind, Escape, focus returned); the keymap sees it open (lib/dialogs.ts) and stays quiet. */
import { useEffect, useId, useRef, type KeyboardEvent, type ReactNode, type RefObject } from 'react';
import { useI18n } from '../../i18n';
import { registerOpenDialog } from '../../lib/dialogs';
import { Button } from './button';

export interface DialogProps {
  readonly title: string;
  /** Text that explains the dialog (aria-describedby). */
  readonly description?: ReactNode;
  readonly onClose: () => void;
  readonly children?: ReactNode;
  /** Wider dialogs, for the folder picker. */
  readonly wide?: boolean;
  readonly role?: 'dialog' | 'alertdialog';
}

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * Shows a <dialog> as a modal while mounted: the page behind inert, the keymap quiet (lib/dialogs.ts), the focus on its
 * data-autofocus element (else its first control) and back where it was after; Escape calls the latest `onClose`.
 */
export function useModal(onClose: () => void): RefObject<HTMLDialogElement | null> {
  const ref = useRef<HTMLDialogElement>(null);
  const close = useRef(onClose);
  close.current = onClose;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const previous = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const unregister = registerOpenDialog();
    if (!dialog.open) dialog.showModal();
    // Autofocus: the element marked data-autofocus, else the first field or button.
    const first = dialog.querySelector<HTMLElement>('[data-autofocus]') ?? dialog.querySelector<HTMLElement>(FOCUSABLE);
    first?.focus();
    const onCancel = (event: Event) => {
      event.preventDefault();
      close.current();
    };
    dialog.addEventListener('cancel', onCancel);
    return () => {
      dialog.removeEventListener('cancel', onCancel);
      if (dialog.open) dialog.close();
      unregister();
      if (previous?.isConnected) previous.focus();
    };
  }, []);
  return ref;
}

export function Dialog({ title, description, onClose, children, wide = false, role }: DialogProps) {
  const ref = useModal(onClose);
  const titleId = useId();
  const descriptionId = useId();

  const onKeyDown = (event: KeyboardEvent<HTMLDialogElement>) => {
    if (event.key !== 'Tab') return;
    const focusable = [...(ref.current?.querySelectorAll<HTMLElement>(FOCUSABLE) ?? [])].filter((element) => element.offsetParent !== null);
    if (focusable.length === 0) return;
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  };

  return (
    <dialog
      ref={ref}
      role={role}
      aria-labelledby={titleId}
      aria-describedby={description ? descriptionId : undefined}
      aria-modal="true"
      onKeyDown={onKeyDown}
      className={`m-auto w-[calc(100%-2rem)] ${wide ? 'max-w-xl' : 'max-w-md'} rounded-lg border border-gray-200 bg-white p-0 text-gray-900 shadow-xl dark:border-gray-700 dark:bg-gray-900 dark:text-gray-100`}
    >
      <div className="space-y-4 p-5">
        <h2 id={titleId} className="text-lg font-semibold break-words">
          {title}
        </h2>
        {description && (
          <div id={descriptionId} className="text-sm text-gray-700 dark:text-gray-300">
            {description}
          </div>
        )}
        {children}
      </div>
    </dialog>
  );
}

/** The buttons at the bottom of a dialog, the main action last (and first on phones, on top); with `onCancel`, Cancel (or `cancelLabel`) before them. */
export function DialogActions({ onCancel, cancelLabel, children }: { readonly onCancel?: () => void; readonly cancelLabel?: string; readonly children?: ReactNode }) {
  const { t } = useI18n();
  return (
    <div className="flex flex-col-reverse gap-2 pt-2 sm:flex-row sm:justify-end">
      {onCancel && (
        <Button variant="secondary" onClick={onCancel}>
          {cancelLabel ?? t.cancel}
        </Button>
      )}
      {children}
    </div>
  );
}
