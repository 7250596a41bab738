import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useI18n } from '../../i18n';
import { durationText } from '../error-text';
import { Button } from '../ui/button';
import { inputClass } from '../ui/field';
import { ShareState } from './share-state';
import { useCountdown } from './use-countdown';

export type GateProblem =
  | { readonly kind: 'wrong' }
  /** `until`: epoch ms when the service takes attempts again. */
  | { readonly kind: 'throttled'; readonly retryAfter: number; readonly until: number };

/** A wrong code keeps the field, selected for typing over; while the service refuses attempts (429) Open waits and says how long. */
export function CodeGate({
  initialCode,
  checking,
  problem,
  attempt,
  onSubmit,
}: {
  readonly initialCode: string;
  readonly checking: boolean;
  readonly problem: GateProblem | null;
  /** Changes with every answer to an attempt: the field takes the focus again. */
  readonly attempt: number;
  readonly onSubmit: (code: string) => void;
}) {
  const { t } = useI18n();
  const [code, setCode] = useState(initialCode);
  const field = useRef<HTMLInputElement>(null);
  const fieldId = useId();
  const helpId = useId();
  const problemId = useId();
  const wait = useCountdown(problem?.kind === 'throttled' ? problem.until : null);
  const blocked = problem?.kind === 'throttled' && wait > 0;

  useEffect(() => {
    if (problem?.kind !== 'wrong') return;
    field.current?.focus();
    field.current?.select();
  }, [problem, attempt]);

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (checking || blocked || code === '') return;
    onSubmit(code);
  };

  const describedBy = [helpId, problem ? problemId : ''].filter(Boolean).join(' ');

  return (
    <ShareState icon="key" title={t.sharePageCodeHeading}>
      <p id={helpId}>{t.sharePageCodeExplain}</p>
      <form onSubmit={submit} className="mt-4 w-full space-y-3 text-left" noValidate>
        {problem && (
          <div
            id={problemId}
            role="alert"
            className={`rounded-md border p-3 text-sm ${
              problem.kind === 'wrong'
                ? 'border-red-300 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100'
                : 'border-amber-300 bg-amber-50 text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100'
            }`}
          >
            {problem.kind === 'wrong' ? (
              <>
                <p className="font-semibold">{t.sharePageCodeWrongTitle}</p>
                <p className="mt-1">{t.sharePageCodeWrongText}</p>
              </>
            ) : (
              <>
                <p className="font-semibold">{t.sharePageThrottledTitle}</p>
                <p className="mt-1">{blocked ? t.sharePageThrottledWait(durationText(problem.retryAfter, t)) : t.sharePageThrottledReady}</p>
              </>
            )}
          </div>
        )}
        <div>
          <label htmlFor={fieldId} className="block text-sm font-medium">
            {t.sharePageCodeLabel}
          </label>
          <div className="flex flex-col gap-2 sm:flex-row">
            <input
              id={fieldId}
              ref={field}
              name="extraction-code"
              value={code}
              onChange={(event) => setCode(event.target.value)}
              className={`${inputClass} sm:flex-1`}
              autoComplete="off"
              autoCapitalize="none"
              autoCorrect="off"
              spellCheck={false}
              autoFocus
              required
              aria-invalid={problem?.kind === 'wrong' ? true : undefined}
              aria-describedby={describedBy}
            />
            <Button type="submit" className="mt-1 min-h-10.5 sm:min-w-28" busy={checking} busyLabel={t.sharePageCodeChecking} disabled={blocked || code === ''}>
              {blocked ? t.sharePageCodeWait(wait) : t.sharePageCodeOpen}
            </Button>
          </div>
        </div>
      </form>
    </ShareState>
  );
}
