import { useId, useRef, type Ref } from 'react';
import { useI18n } from '../../i18n';
import { EXTRACTION_CODE_MAX } from '../../lib/extraction-code';
import { Button } from '../ui/button';
import { inputClass } from '../ui/field';

/** None (an open link), a code the owner types, or one generated for them. */
export type CodeMode = 'none' | 'custom' | 'generated';

const MODES: readonly CodeMode[] = ['none', 'generated', 'custom'];

/** None, generated (read-only, with "New code") or typed. */
export function ExtractionCodeField({
  mode,
  onMode,
  typed,
  onTyped,
  generated,
  onRegenerate,
  error,
  inputRef,
  autoFocusChoice = false,
}: {
  readonly mode: CodeMode;
  readonly onMode: (mode: CodeMode) => void;
  readonly typed: string;
  readonly onTyped: (code: string) => void;
  readonly generated: string;
  readonly onRegenerate: () => void;
  /** What is wrong with the typed code, once it should be said. */
  readonly error?: string;
  readonly inputRef?: Ref<HTMLInputElement>;
  /** The checked choice takes the focus when the dialog opens. */
  readonly autoFocusChoice?: boolean;
}) {
  const { t } = useI18n();
  const name = useId();
  const inputId = useId();
  const hintId = useId();
  const errorId = useId();
  const own = useRef<HTMLInputElement | null>(null);
  const labels: Record<CodeMode, string> = { none: t.sharingCodeNone, generated: t.sharingCodeGenerated, custom: t.sharingCodeCustom };

  const setInput = (element: HTMLInputElement | null) => {
    own.current = element;
    if (typeof inputRef === 'function') inputRef(element);
    else if (inputRef) inputRef.current = element;
  };

  const choose = (next: CodeMode) => {
    onMode(next);
    // Choosing to type a code goes straight to its field.
    if (next === 'custom') requestAnimationFrame(() => own.current?.focus());
  };

  return (
    <fieldset className="space-y-2">
      <legend className="text-sm font-medium">{t.sharingCodeLegend}</legend>
      <div className="flex flex-wrap gap-x-4 gap-y-1">
        {MODES.map((value) => (
          <label key={value} className="inline-flex items-center gap-2 py-1 text-sm">
            <input
              type="radio"
              name={name}
              value={value}
              checked={mode === value}
              onChange={() => choose(value)}
              data-autofocus={autoFocusChoice && mode === value ? '' : undefined}
              className="size-4 accent-blue-600 dark:accent-blue-400"
            />
            {labels[value]}
          </label>
        ))}
      </div>
      {mode === 'none' ? (
        <p className="text-sm text-gray-700 dark:text-gray-300">{t.sharingCodeNoneHint}</p>
      ) : (
        <div>
          <label htmlFor={inputId} className="sr-only">
            {t.sharingCodeLegend}
          </label>
          <div className="flex items-start gap-2">
            <input
              ref={setInput}
              id={inputId}
              type="text"
              value={mode === 'generated' ? generated : typed}
              readOnly={mode === 'generated'}
              onChange={(event) => onTyped(event.target.value)}
              onFocus={mode === 'generated' ? (event) => event.currentTarget.select() : undefined}
              // Room for a code of 32 characters that are not all ASCII; the rule itself counts characters.
              maxLength={EXTRACTION_CODE_MAX * 2}
              autoComplete="off"
              autoCapitalize="off"
              autoCorrect="off"
              spellCheck={false}
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? `${errorId} ${hintId}` : hintId}
              className={`${inputClass} max-w-64 font-mono`}
            />
            {mode === 'generated' && (
              <Button variant="secondary" className="mt-1 shrink-0 self-stretch" onClick={onRegenerate}>
                {t.sharingNewCode}
              </Button>
            )}
          </div>
          {error && (
            <p id={errorId} className="mt-1 text-sm text-red-800 dark:text-red-300">
              {error}
            </p>
          )}
          <p id={hintId} className="mt-1 text-sm text-gray-700 dark:text-gray-300">
            {t.sharingCodeHint}
          </p>
        </div>
      )}
    </fieldset>
  );
}
