import { useId, useRef, useState, type FormEvent } from 'react';
import { useEncryptItem } from '../../api/encryption';
import type { Item } from '../../api/results';
import { useI18n, type Messages } from '../../i18n';
import { passwordProblem, TIP_MAX_LENGTH, tipProblem, type TipProblem } from '../../lib/encryption-rules';
import { notify } from '../../lib/notices';
import { InlineError } from '../error-panel';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { inputClass } from '../ui/field';
import { Icon } from '../ui/icons';
import { PasswordField } from './password-field';
import { PasswordStrengthMeter } from './password-strength-meter';

type Field = 'password' | 'confirm' | 'tip';

interface Problems {
  readonly password: string | null;
  readonly confirm: string | null;
  readonly tip: string | null;
}

const tipMessage = (problem: TipProblem, t: Messages) => (problem === 'length' ? t.tipTooLong(TIP_MAX_LENGTH) : t.tipContainsPassword);

function problemsOf(password: string, confirm: string, tip: string, t: Messages): Problems {
  const tipIssue = tipProblem(tip, password);
  return {
    password: passwordProblem(password) ? t.passwordLength : null,
    confirm: confirm !== password ? t.passwordMismatch : null,
    tip: tipIssue ? tipMessage(tipIssue, t) : null,
  };
}

/** The service's rules (4–64 characters; a hint of at most 100 without the password) are checked here first, next to the fields. */
export function EncryptDialog({ item, onClose }: { readonly item: Item; readonly onClose: () => void }) {
  const { t } = useI18n();
  const encrypt = useEncryptItem();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [tip, setTip] = useState('');
  // A field's problem shows once the user has left it, or tried to submit.
  const [touched, setTouched] = useState<ReadonlySet<Field>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const meterId = useId();
  const tipId = useId();
  const fields = { password: useRef<HTMLInputElement>(null), confirm: useRef<HTMLInputElement>(null), tip: useRef<HTMLInputElement>(null) };

  const problems = problemsOf(password, confirm, tip, t);
  const shown = (field: Field) => (submitted || touched.has(field) ? problems[field] : null);
  const touch = (field: Field) => setTouched((current) => (current.has(field) ? current : new Set([...current, field])));

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (encrypt.isPending) return;
    setSubmitted(true);
    const first = (['password', 'confirm', 'tip'] as const).find((field) => problems[field] !== null);
    if (first) {
      fields[first].current?.focus();
      return;
    }
    encrypt.mutate(
      { item, password, tip },
      {
        onSuccess: () => {
          notify('info', t.encryptedNotice(item.name));
          onClose();
        },
      },
    );
  };

  const tipError = shown('tip');
  return (
    <Dialog
      title={t.encryptTitle(item.name)}
      onClose={onClose}
      description={
        <div className="space-y-3">
          <p>{item.type === 'folder' ? t.encryptExplainFolder : t.encryptExplainFile}</p>
          <p className="flex gap-2 rounded-md border border-amber-400 bg-amber-50 p-3 font-medium text-amber-950 dark:border-amber-600 dark:bg-amber-950 dark:text-amber-100">
            <Icon name="warning" className="mt-0.5 size-5" />
            <span>{t.encryptWarning}</span>
          </p>
        </div>
      }
    >
      <form onSubmit={onSubmit} noValidate className="space-y-4">
        <div className="space-y-2">
          <PasswordField
            ref={fields.password}
            label={t.passwordLabel}
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            onBlur={() => touch('password')}
            autoComplete="new-password"
            required
            data-autofocus=""
            error={shown('password')}
            describedBy={meterId}
          />
          <PasswordStrengthMeter id={meterId} password={password} />
        </div>
        <PasswordField
          ref={fields.confirm}
          label={t.confirmPasswordLabel}
          value={confirm}
          onChange={(event) => setConfirm(event.target.value)}
          onBlur={() => touch('confirm')}
          autoComplete="new-password"
          required
          error={shown('confirm')}
        />
        <div>
          <label htmlFor={tipId} className="block text-sm font-medium">
            {t.tipLabel}
          </label>
          <input
            ref={fields.tip}
            id={tipId}
            value={tip}
            onChange={(event) => setTip(event.target.value)}
            onBlur={() => touch('tip')}
            autoComplete="off"
            aria-invalid={tipError ? true : undefined}
            aria-describedby={`${tipId}-help${tipError ? ` ${tipId}-error` : ''}`}
            className={inputClass}
          />
          {tipError && (
            <p id={`${tipId}-error`} className="mt-1 text-sm text-red-700 dark:text-red-300">
              {tipError}
            </p>
          )}
          <p id={`${tipId}-help`} className="mt-1 text-sm text-gray-700 dark:text-gray-300">
            {t.tipHelp(TIP_MAX_LENGTH)}
          </p>
        </div>
        {encrypt.isError && <InlineError error={encrypt.error} />}
        <DialogActions onCancel={onClose}>
          <Button icon="lock" type="submit" busy={encrypt.isPending} busyLabel={t.encrypting}>
            {t.encryptAction}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
