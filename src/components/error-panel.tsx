import type { ReactNode } from 'react';
import { useI18n } from '../i18n';
import { describeError } from './error-text';
import { Button } from './ui/button';

export interface ErrorPanelProps {
  readonly error: unknown;
  /** What failed, for the sentence: t.subjectFolder. */
  readonly subject?: string;
  readonly onRetry?: () => void;
  readonly retrying?: boolean;
}

/** A failed call, said plainly with the service's message, and a way to try again. */
export function ErrorPanel({ error, subject, onRetry, retrying }: ErrorPanelProps) {
  const { t } = useI18n();
  const { title, message } = describeError(error, t, subject);
  return (
    <div
      role="alert"
      className="rounded-md border border-red-300 bg-red-50 p-4 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      <p className="font-semibold">{title}</p>
      <p className="mt-1 text-sm break-words">{message}</p>
      {onRetry && (
        <Button variant="secondary" className="mt-3" onClick={onRetry} busy={retrying} busyLabel={t.tryingAgain}>
          {t.tryAgain}
        </Button>
      )}
    </div>
  );
}

/** What went wrong inside a dialog, announced. */
export function DialogAlert({ children }: { readonly children: ReactNode }) {
  return (
    <p
      role="alert"
      className="rounded-md border border-red-300 bg-red-50 p-3 text-sm break-words text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      {children}
    </p>
  );
}

/** A failed action inside a dialog: the service's text, announced. */
export function InlineError({ error, subject }: { readonly error: unknown; readonly subject?: string }) {
  const { t } = useI18n();
  const { title, message } = describeError(error, t, subject);
  return <DialogAlert>{title === t.errRefusedTitle ? message : `${title}. ${message}`}</DialogAlert>;
}
