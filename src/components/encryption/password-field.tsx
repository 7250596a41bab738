/** The masked password field with a show button (for checking on a phone), and what a refused password (403, 429) means. */
import {
  forwardRef,
  useEffect,
  useId,
  useRef,
  useState,
  type ChangeEvent,
  type InputHTMLAttributes,
  type ReactNode,
} from 'react';
import { isApiError } from '../../api/errors';
import { useI18n, type Messages } from '../../i18n';
import { passwordProblem } from '../../lib/encryption-rules';
import { describeError, durationText } from '../error-text';
import { InlineError } from '../error-panel';
import { inputClass } from '../ui/field';
import { Icon } from '../ui/icons';

export interface PasswordFieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'type' | 'children'> {
  readonly label: string;
  /** Shown under the field, and read with it (aria-describedby). */
  readonly help?: ReactNode;
  /** What is wrong with the value: shown under the field, and the field is marked invalid. */
  readonly error?: string | null;
  /** More elements that describe the field (the strength meter). */
  readonly describedBy?: string;
}

export const PasswordField = forwardRef<HTMLInputElement, PasswordFieldProps>(function PasswordField(
  { label, help, error, describedBy, id, className = '', ...rest },
  ref,
) {
  const { t } = useI18n();
  const generated = useId();
  const fieldId = id ?? generated;
  const helpId = `${fieldId}-help`;
  const errorId = `${fieldId}-error`;
  const [visible, setVisible] = useState(false);
  const described = [error ? errorId : null, help ? helpId : null, describedBy ?? null].filter(Boolean).join(' ') || undefined;
  return (
    <div>
      <label htmlFor={fieldId} className="block text-sm font-medium">
        {label}
      </label>
      <div className="relative">
        <input
          ref={ref}
          id={fieldId}
          type={visible ? 'text' : 'password'}
          spellCheck={false}
          autoCapitalize="off"
          autoCorrect="off"
          aria-invalid={error ? true : undefined}
          aria-describedby={described}
          className={`${inputClass} pr-11 ${className}`}
          {...rest}
        />
        {/* The name is in the content, not aria-label, so that it does not also label the input. */}
        <button
          type="button"
          aria-pressed={visible}
          aria-controls={fieldId}
          onClick={() => setVisible((shown) => !shown)}
          className="absolute inset-y-0 right-0 mt-1 flex w-10 items-center justify-center rounded-r-md text-gray-700 hover:text-gray-950 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-blue-600 dark:text-gray-300 dark:hover:text-white"
        >
          <Icon name={visible ? 'eyeOff' : 'eye'} className="size-5" />
          <span className="sr-only">{t.showPassword}</span>
        </button>
      </div>
      {error && (
        <p id={errorId} className="mt-1 text-sm text-red-700 dark:text-red-300">
          {error}
        </p>
      )}
      {help && (
        <p id={helpId} className="mt-1 text-sm text-gray-700 dark:text-gray-300">
          {help}
        </p>
      )}
    </div>
  );
});

export interface PasswordRefusal {
  /** What to say, or null when the error is not about the password (show it some other way). */
  readonly message: string | null;
  /** A wrong password (403): the field gets the focus back. */
  readonly wrong: boolean;
  /** Too many password attempts (429: wrong ones, or too many passwords being checked at once): no use trying until the wait is over. */
  readonly blocked: boolean;
}

function refusalText(error: unknown, t: Messages): Omit<PasswordRefusal, 'blocked'> & { readonly waitSeconds: number } {
  if (isApiError(error, 'Forbidden')) return { message: t.wrongPassword, wrong: true, waitSeconds: 0 };
  if (isApiError(error, 'TooManyAttempts')) {
    const seconds = error.retryAfter ?? 60;
    // Too many wrong passwords, or too many being checked at once (server-busy): told by the reason.
    const message = error.reason === 'server-busy' ? describeError(error, t).message : t.tooManyPasswords(durationText(seconds, t));
    return { message, wrong: false, waitSeconds: seconds };
  }
  return { message: null, wrong: false, waitSeconds: 0 };
}

/** A wrong password (403), or too many (429, with the service's wait; the button stays disabled until it is over). */
export function usePasswordRefusal(error: unknown): PasswordRefusal {
  const { t } = useI18n();
  const { message, wrong, waitSeconds } = refusalText(error, t);
  // The error whose wait is over: until then, this error blocks.
  const [waited, setWaited] = useState<unknown>(null);
  useEffect(() => {
    if (waitSeconds <= 0) return;
    const timer = setTimeout(() => setWaited(error), waitSeconds * 1000);
    return () => clearTimeout(timer);
  }, [error, waitSeconds]);
  return { message, wrong, blocked: waitSeconds > 0 && waited !== error };
}

/** What a form needs of the mutation that sends the password. */
interface PasswordMutation {
  readonly error: unknown;
  readonly isPending: boolean;
  readonly submittedAt: number;
}

/** After a wrong password, the focus goes back to the field with its text selected for typing again. */
export function usePasswordEntry(mutation: PasswordMutation) {
  const { t } = useI18n();
  const [password, setPassword] = useState('');
  const [lengthError, setLengthError] = useState(false);
  const ref = useRef<HTMLInputElement>(null);
  const refusal = usePasswordRefusal(mutation.error);

  useEffect(() => {
    if (!refusal.wrong) return;
    ref.current?.focus();
    ref.current?.select();
  }, [mutation.error, refusal.wrong]);

  /** Whether to send now: not while sending or blocked; a password of the wrong length is said in the field instead. */
  const readyToSend = (): boolean => {
    if (mutation.isPending || refusal.blocked) return false;
    if (passwordProblem(password)) {
      setLengthError(true);
      ref.current?.focus();
      return false;
    }
    setLengthError(false);
    return true;
  };

  const field = {
    ref,
    value: password,
    onChange: (event: ChangeEvent<HTMLInputElement>) => setPassword(event.target.value),
    error: lengthError ? t.passwordLength : refusal.wrong ? refusal.message : null,
  };
  return { password, refusal, readyToSend, field };
}

/** A wrong password is announced at once: the field's own error is read only when focus returns to it. */
export function PasswordRefusalNotice({
  mutation,
  refusal,
  other,
}: {
  readonly mutation: PasswordMutation;
  readonly refusal: PasswordRefusal;
  readonly other?: ReactNode;
}) {
  if (refusal.wrong) {
    return (
      <p key={mutation.submittedAt} role="alert" className="sr-only">
        {refusal.message}
      </p>
    );
  }
  if (mutation.error == null) return null;
  if (refusal.message) {
    return (
      <p role="alert" className="text-sm text-red-700 dark:text-red-300">
        {refusal.message}
      </p>
    );
  }
  return other ?? <InlineError error={mutation.error} />;
}
