/** Addresses typed or pasted become removable chips (the service's rules, lib/email-addresses.ts); what cannot be added stays in the field, saying why. */
import { useCallback, useId, useRef, useState, type ChangeEvent, type ClipboardEvent, type KeyboardEvent, type Ref } from 'react';
import { useI18n, type Messages } from '../../i18n';
import { addRecipients, addressKey, firstInvalidAddress, hasSeparator, splitAddressList, type AddressProblem } from '../../lib/email-addresses';
import { Icon } from '../ui/icons';

interface RecipientsState {
  readonly recipients: readonly string[];
  /** The field's text: what is being typed, or what could not be added. */
  readonly draft: string;
  /** Set once a commit left something in the field: from then on the field says what is wrong with it. */
  readonly checked: boolean;
  readonly missing: boolean;
  /** What the last action did, for screen readers (polite). */
  readonly announcement: string;
}

const EMPTY: RecipientsState = { recipients: [], draft: '', checked: false, missing: false, announcement: '' };

export interface Recipients {
  readonly state: RecipientsState;
  readonly limit: number;
  readonly setDraft: (draft: string) => void;
  /** Turns `text` (the field's new text) into recipients; what cannot be added stays as the draft. */
  readonly commit: (text: string) => void;
  readonly remove: (address: string) => void;
  /** Commits the draft; null when something stays in the field or there is nobody (the field then says why). */
  readonly take: () => readonly string[] | null;
  readonly clear: () => void;
}

/** The field's state. A ref mirrors it, so that Send right after a blur sees the blur's commit. */
export function useRecipients(limit: number, t: Messages): Recipients {
  const [state, setState] = useState<RecipientsState>(EMPTY);
  const current = useRef(state);
  const update = useCallback((next: RecipientsState) => {
    current.current = next;
    setState(next);
  }, []);

  const commitText = useCallback(
    (text: string): RecipientsState => {
      const before = current.current;
      const result = addRecipients(before.recipients, text, limit);
      const messages: string[] = [];
      if (result.added.length > 0) messages.push(t.emailRecipientsAdded(result.added.length));
      if (result.duplicates.length > 0) messages.push(t.emailDuplicates(result.duplicates.join(', ')));
      const invalid = result.invalid[0];
      if (invalid) messages.push(invalidText(t, invalid.address, invalid.problem));
      else if (result.overflow.length > 0) messages.push(t.emailTooMany(limit));
      const next: RecipientsState = {
        recipients: result.recipients,
        draft: result.draft,
        checked: result.draft !== '',
        missing: false,
        announcement: messages.join(' '),
      };
      update(next);
      return next;
    },
    [limit, t, update],
  );

  return {
    state,
    limit,
    setDraft: (draft) => update({ ...current.current, draft, missing: false, ...(draft === '' ? { checked: false } : {}) }),
    commit: (text) => void commitText(text),
    remove: (address) => {
      const before = current.current;
      update({
        ...before,
        recipients: before.recipients.filter((recipient) => addressKey(recipient) !== addressKey(address)),
        announcement: t.emailRecipientRemoved(address),
      });
    },
    take: () => {
      const after = current.current.draft !== '' ? commitText(current.current.draft) : current.current;
      if (after.draft !== '') return null;
      if (after.recipients.length === 0) {
        update({ ...after, missing: true, announcement: t.emailNoRecipients });
        return null;
      }
      return after.recipients;
    },
    clear: () => update(EMPTY),
  };
}

function invalidText(t: Messages, address: string, problem: AddressProblem): string {
  const reasons: Readonly<Record<AddressProblem, string>> = {
    control: t.emailProblemControl,
    'too-long': t.emailProblemTooLong,
    'no-at': t.emailProblemNoAt,
    'no-local': t.emailProblemNoLocal,
    'no-domain': t.emailProblemNoDomain,
    'local-too-long': t.emailProblemLocalTooLong,
    'local-characters': t.emailProblemLocalCharacters,
    domain: t.emailProblemDomain,
    'domain-no-dot': t.emailProblemDomainNoDot,
  };
  return t.emailInvalid(address, reasons[problem]);
}

/** What is wrong with the field now: checked as the user corrects it. */
function fieldProblem(t: Messages, recipients: Recipients): string | null {
  const { state, limit } = recipients;
  if (state.missing) return t.emailNoRecipients;
  if (!state.checked) return null;
  const invalid = firstInvalidAddress(state.draft);
  if (invalid) return invalidText(t, invalid.address, invalid.problem);
  if (state.recipients.length >= limit && splitAddressList(state.draft).length > 0) return t.emailTooMany(limit);
  return null;
}

export function RecipientsField({
  recipients,
  disabled = false,
  inputRef,
}: {
  readonly recipients: Recipients;
  readonly disabled?: boolean;
  readonly inputRef?: Ref<HTMLInputElement>;
}) {
  const { t } = useI18n();
  const inputId = useId();
  const hintId = useId();
  const errorId = useId();
  const ownInput = useRef<HTMLInputElement | null>(null);
  const { state, limit } = recipients;
  const problem = fieldProblem(t, recipients);

  const setInput = (element: HTMLInputElement | null) => {
    ownInput.current = element;
    if (typeof inputRef === 'function') inputRef(element);
    else if (inputRef) inputRef.current = element;
  };

  const onChange = (event: ChangeEvent<HTMLInputElement>) => {
    const value = event.target.value;
    // A separator typed at the end ends an address (on phones, keydown does not tell which key it was).
    const typed = value.startsWith(state.draft) ? value.slice(state.draft.length) : '';
    if (typed !== '' && /[,;\s]$/.test(typed)) recipients.commit(value);
    else recipients.setDraft(value);
  };

  const onPaste = (event: ClipboardEvent<HTMLInputElement>) => {
    const pasted = event.clipboardData.getData('text/plain');
    // One address is pasted as text; a list (which may hold line breaks an input would drop) is added at once.
    if (!hasSeparator(pasted.trim())) return;
    event.preventDefault();
    const input = event.currentTarget;
    const start = input.selectionStart ?? state.draft.length;
    const end = input.selectionEnd ?? start;
    recipients.commit(`${state.draft.slice(0, start)}${pasted}${state.draft.slice(end)}`);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter') {
      // Enter adds what was typed; it never sends (that takes the Send button).
      event.preventDefault();
      if (state.draft.trim()) recipients.commit(state.draft);
    } else if (event.key === 'Backspace' && state.draft === '' && state.recipients.length > 0) {
      event.preventDefault();
      recipients.remove(state.recipients[state.recipients.length - 1]);
    }
  };

  const onBlur = () => {
    if (state.draft !== '') recipients.commit(state.draft);
  };

  return (
    <div>
      <label htmlFor={inputId} className="block text-sm font-medium">
        {t.emailRecipientsLabel}
      </label>
      {/* A click on the box, outside a chip, puts the cursor in the field. */}
      <div
        className={`mt-1 flex min-h-11 flex-wrap items-center gap-1.5 rounded-md border bg-white px-2 py-1.5 focus-within:outline-2 focus-within:outline-blue-600 dark:bg-gray-800 ${
          problem ? 'border-red-700 dark:border-red-400' : 'border-gray-400 focus-within:border-blue-600 dark:border-gray-500'
        }`}
        onClick={(event) => {
          if (event.target === event.currentTarget) ownInput.current?.focus();
        }}
      >
        {state.recipients.length > 0 && (
          <ul aria-label={t.emailRecipientsList} className="flex min-w-0 flex-wrap gap-1.5">
            {state.recipients.map((address) => (
              <li
                key={addressKey(address)}
                className="flex max-w-full items-center gap-1 rounded-2xl bg-blue-50 py-0.5 pr-1 pl-2.5 text-sm text-blue-950 dark:bg-blue-950 dark:text-blue-50"
              >
                <span className="min-w-0 break-all">{address}</span>
                <button
                  type="button"
                  disabled={disabled}
                  onClick={() => {
                    recipients.remove(address);
                    ownInput.current?.focus();
                  }}
                  aria-label={t.emailRemoveRecipient(address)}
                  className="rounded-full p-1 hover:bg-blue-100 focus-visible:outline-2 focus-visible:outline-blue-600 disabled:opacity-60 dark:hover:bg-blue-900"
                >
                  <Icon name="close" className="size-3.5" />
                </button>
              </li>
            ))}
          </ul>
        )}
        <input
          ref={setInput}
          id={inputId}
          type="text"
          inputMode="email"
          autoComplete="off"
          autoCapitalize="none"
          autoCorrect="off"
          spellCheck={false}
          enterKeyHint="enter"
          disabled={disabled}
          value={state.draft}
          onChange={onChange}
          onPaste={onPaste}
          onKeyDown={onKeyDown}
          onBlur={onBlur}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${errorId} ${hintId}` : hintId}
          placeholder={state.recipients.length === 0 ? t.emailRecipientsPlaceholder : undefined}
          data-autofocus=""
          className="min-w-40 flex-1 bg-transparent px-1 py-1 text-base text-gray-900 outline-none placeholder:text-gray-600 dark:text-gray-100 dark:placeholder:text-gray-400"
        />
      </div>
      {problem && (
        <p id={errorId} className="mt-1 flex gap-1.5 text-sm break-words text-red-800 dark:text-red-300">
          <Icon name="warning" className="mt-0.5 size-4" />
          <span>{problem}</span>
        </p>
      )}
      <p id={hintId} className="mt-1 flex flex-wrap justify-between gap-x-3 text-xs text-gray-700 dark:text-gray-300">
        <span>{t.emailRecipientsHint}</span>
        <span>{t.emailRecipientsCount(state.recipients.length, limit)}</span>
      </p>
      {/* What the last action did (added, merged, removed, refused), said once. */}
      <p role="status" className="sr-only">
        {state.announcement}
      </p>
    </div>
  );
}
