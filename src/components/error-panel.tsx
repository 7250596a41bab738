import { describeError } from '../lib/error-text';
import { Button } from './ui/button';

export interface ErrorPanelProps {
  readonly error: unknown;
  /** What failed, for the sentence: "this folder". */
  readonly subject?: string;
  readonly onRetry?: () => void;
  readonly retrying?: boolean;
}

/** A failed call, said plainly, with a way to try again. */
export function ErrorPanel({ error, subject, onRetry, retrying }: ErrorPanelProps) {
  const { title, message } = describeError(error, subject);
  return (
    <div
      role="alert"
      className="rounded-md border border-red-300 bg-red-50 p-4 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      <p className="font-semibold">{title}</p>
      <p className="mt-1 text-sm break-words">{message}</p>
      {onRetry && (
        <Button variant="secondary" className="mt-3" onClick={onRetry} busy={retrying} busyLabel="Trying again…">
          Try again
        </Button>
      )}
    </div>
  );
}
