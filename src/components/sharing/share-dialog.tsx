// The share dialog (docs/sharing.md §2, §4): shares the items or updates their shares, then shows their links;
// on shared items it shows the current settings, from GetShareFiles when the listing lacks them.
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { hasShareDetails, useShareDetails, useShareItems, useUploadShareImage } from '../../api/shares';
import type { Item } from '../../api/results';
import { useI18n, type Messages } from '../../i18n';
import {
  DESCRIPTION_MAX,
  characterCount,
  extractionCodeProblem,
  generateExtractionCode,
  parseDownloadLimit,
  type ExtractionCodeProblem,
} from '../../lib/extraction-code';
import { itemKey } from '../../lib/items';
import { ErrorPanel } from '../error-panel';
import { Button, Spinner } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { inputClass } from '../ui/field';
import { Icon } from '../ui/icons';
import { CoverImageField } from './cover-image-field';
import { ExtractionCodeField, type CodeMode } from './extraction-code-field';
import { ShareError } from './share-error';
import { ShareLinkPanel } from './share-link-panel';
import { StopSharingDialog } from './stop-sharing-dialog';

export function ShareDialog({ items, onClose }: { readonly items: readonly Item[]; readonly onClose: () => void }) {
  const { t } = useI18n();
  const details = useShareDetails(items);
  const [stopping, setStopping] = useState<readonly Item[] | null>(null);
  const what = t.itemsPhrase(items.length, items[0]?.name);

  return (
    <>
      <Dialog title={t.sharingTitle(what)} description={<p>{t.sharingExplain}</p>} onClose={onClose} wide>
        {details.items ? (
          <ShareForm items={details.items} onClose={onClose} onStop={setStopping} />
        ) : (
          <>
            {details.error ? (
              <ErrorPanel error={details.error} subject={t.sharingPageSubject} onRetry={details.refetch} />
            ) : (
              <p role="status" className="flex items-center gap-2 text-sm">
                <Spinner /> {t.sharingLoading}
              </p>
            )}
            <DialogActions onCancel={onClose} cancelLabel={details.error ? t.close : undefined} />
          </>
        )}
      </Dialog>
      {/* Beside the dialog, not in it: its keys (Tab, Escape) are its own. */}
      {stopping && <StopSharingDialog items={stopping} onClose={() => setStopping(null)} onStopped={onClose} />}
    </>
  );
}

interface FormStart {
  readonly mode: CodeMode;
  readonly typed: string;
  readonly limit: string;
  readonly description: string;
  /** Some items are shared and their settings differ from what the form starts with. */
  readonly mixed: boolean;
}

/** The items' shared settings when all alike, else a new share's defaults (a generated code, no limit), as the netdisks do. */
function formStart(shares: readonly Item[]): FormStart {
  const shared = shares.filter((share) => share.shared);
  const [first] = shared;
  const alike =
    first !== undefined &&
    shared.every(
      (share) =>
        (share.downpwd ?? '') === (first.downpwd ?? '') &&
        (share.downValue ?? 0) === (first.downValue ?? 0) &&
        (share.description ?? '') === (first.description ?? ''),
    );
  if (alike && shared.length === shares.length) {
    return {
      mode: first.downpwd ? 'custom' : 'none',
      typed: first.downpwd ?? '',
      limit: first.downValue ? String(first.downValue) : '',
      description: first.description ?? '',
      mixed: false,
    };
  }
  return { mode: 'generated', typed: '', limit: '', description: '', mixed: shared.length > 0 };
}

const codeProblemText = (t: Messages, problem: ExtractionCodeProblem): string =>
  ({ empty: t.sharingCodeEmpty, 'too-short': t.sharingCodeTooShort, 'too-long': t.sharingCodeTooLong, control: t.sharingCodeControl })[problem];

function ShareForm({
  items,
  onClose,
  onStop,
}: {
  readonly items: readonly Item[];
  readonly onClose: () => void;
  readonly onStop: (shares: readonly Item[]) => void;
}) {
  const { t } = useI18n();
  const [start] = useState(() => formStart(items));
  const [current, setCurrent] = useState<readonly Item[]>(items);
  const [mode, setMode] = useState<CodeMode>(start.mode);
  const [typed, setTyped] = useState(start.typed);
  const [generated, setGenerated] = useState(() => generateExtractionCode());
  const [limit, setLimit] = useState(start.limit);
  const [description, setDescription] = useState(start.description);
  const [cover, setCover] = useState<File | null>(null);
  const [submitted, setSubmitted] = useState(false);
  const [outcome, setOutcome] = useState<'shared' | 'saved' | null>(null);
  const share = useShareItems();
  const upload = useUploadShareImage();

  const form = useRef<HTMLFormElement>(null);
  const codeInput = useRef<HTMLInputElement>(null);
  const limitInput = useRef<HTMLInputElement>(null);
  const descriptionInput = useRef<HTMLTextAreaElement>(null);
  const copyButtons = useRef<HTMLDivElement>(null);
  const limitId = useId();
  const limitHintId = useId();
  const limitErrorId = useId();
  const descriptionId = useId();
  const countId = useId();

  const shares = current.filter(hasShareDetails);
  const allShared = shares.length === current.length;
  const single = current.length === 1 ? current[0] : undefined;
  const code = mode === 'none' ? '' : mode === 'generated' ? generated : typed;
  const codeProblem = mode === 'custom' ? extractionCodeProblem(typed) : null;
  const parsedLimit = parseDownloadLimit(limit);
  const descriptionLength = characterCount(description);
  const descriptionTooLong = descriptionLength > DESCRIPTION_MAX;
  const downloads = single?.downloads ?? 0;
  const closesShare = parsedLimit.ok && parsedLimit.value > 0 && single?.shared && parsedLimit.value <= downloads;

  // The dialog focuses [data-autofocus] on opening; a form that appears later (after a lookup) does so itself.
  useEffect(() => {
    form.current?.closest('dialog')?.querySelector<HTMLElement>('[data-autofocus]')?.focus();
  }, []);

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (codeProblem) return codeInput.current?.focus();
    if (!parsedLimit.ok) return limitInput.current?.focus();
    if (descriptionTooLong) return descriptionInput.current?.focus();
    share.reset();
    upload.reset();
    const firstShare = shares.length === 0;
    let next: readonly Item[];
    try {
      const result = await share.mutateAsync({
        items: current,
        settings: { downpwd: code, downValue: parsedLimit.value, description },
      });
      const byKey = new Map<string, Item>([...result.folders, ...result.files].map((item) => [itemKey(item), item]));
      next = current.map((item) => byKey.get(itemKey(item)) ?? item);
      setCurrent(next);
    } catch {
      return; // Said by the error below the form.
    }
    // Only now: the service gives a cover to a share that exists, never to an unshared file (409).
    if (cover && single?.type === 'file') {
      try {
        const image = await upload.mutateAsync({ fid: single.id, image: cover });
        setCurrent(next.map((item) => (item.type === 'file' && item.id === single.id ? { ...item, image } : item)));
        setCover(null);
      } catch {
        // Said below the form; the share itself is saved.
      }
    }
    setOutcome(firstShare ? 'shared' : 'saved');
  };

  // A new share: focus its link to copy, in an effect after the commit (under load the render may come after the next frame).
  useEffect(() => {
    if (outcome === 'shared') copyButtons.current?.querySelector('button')?.focus();
  }, [outcome]);

  const busy = share.isPending || upload.isPending;
  const limitError = !parsedLimit.ok && (submitted || limit.trim() !== '') ? t.sharingLimitInvalid : undefined;

  return (
    <form ref={form} onSubmit={(event) => void onSubmit(event)} onChange={() => setOutcome(null)} noValidate className="space-y-4">
      {shares.length > 0 && <ShareLinkPanel shares={shares} copyRef={copyButtons} />}
      <p role="status" className="text-sm font-medium text-green-800 empty:hidden dark:text-green-300">
        {outcome === 'shared' ? t.sharingDone : outcome === 'saved' ? t.sharingSaved : ''}
      </p>
      {start.mixed && (
        <p className="flex gap-2 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-50">
          <Icon name="warning" className="mt-0.5 size-4" />
          {t.sharingMixedNote}
        </p>
      )}

      <ExtractionCodeField
        mode={mode}
        onMode={setMode}
        typed={typed}
        onTyped={setTyped}
        generated={generated}
        onRegenerate={() => {
          setGenerated(generateExtractionCode());
          setOutcome(null);
        }}
        error={submitted && codeProblem ? codeProblemText(t, codeProblem) : undefined}
        inputRef={codeInput}
        autoFocusChoice={shares.length === 0}
      />

      <div>
        <label htmlFor={limitId} className="block text-sm font-medium">
          {t.sharingLimit}
        </label>
        <input
          ref={limitInput}
          id={limitId}
          type="number"
          inputMode="numeric"
          min={0}
          step={1}
          value={limit}
          onChange={(event) => setLimit(event.target.value)}
          placeholder={t.sharingNoLimit}
          aria-invalid={limitError ? true : undefined}
          aria-describedby={limitError ? `${limitErrorId} ${limitHintId}` : limitHintId}
          className={`${inputClass} max-w-40`}
        />
        {limitError && (
          <p id={limitErrorId} className="mt-1 text-sm text-red-800 dark:text-red-300">
            {limitError}
          </p>
        )}
        <p id={limitHintId} className="mt-1 text-sm text-gray-700 dark:text-gray-300">
          {t.sharingLimitHint}
          {closesShare && <span className="mt-1 block text-amber-900 dark:text-amber-200">{t.sharingLimitReachedWarning(downloads)}</span>}
        </p>
      </div>

      <div>
        <label htmlFor={descriptionId} className="block text-sm font-medium">
          {t.sharingDescription}
        </label>
        <textarea
          ref={descriptionInput}
          id={descriptionId}
          value={description}
          onChange={(event) => setDescription(event.target.value)}
          rows={3}
          aria-invalid={descriptionTooLong ? true : undefined}
          aria-describedby={countId}
          className={`${inputClass} resize-y`}
        />
        <p
          id={countId}
          className={`mt-1 flex flex-wrap justify-between gap-x-3 text-sm ${descriptionTooLong ? 'text-red-800 dark:text-red-300' : 'text-gray-700 dark:text-gray-300'}`}
        >
          <span>{descriptionTooLong ? t.sharingDescriptionTooLong(DESCRIPTION_MAX) : t.sharingDescriptionHint}</span>
          <span className="tabular-nums">{t.sharingDescriptionCount(descriptionLength, DESCRIPTION_MAX)}</span>
        </p>
      </div>

      {single?.type === 'file' && <CoverImageField current={single.image ?? ''} shared={hasShareDetails(single)} file={cover} onFile={setCover} />}

      {share.isError && <ShareError error={share.error} items={current} />}
      {upload.isError && <ShareError error={upload.error} items={current} lead={t.sharingCoverFailed} />}

      <DialogActions>
        {shares.length > 0 && (
          <button
            type="button"
            onClick={() => onStop(shares)}
            className="inline-flex items-center justify-center gap-2 rounded-md border border-red-300 bg-white px-4 py-2 text-sm font-medium text-red-800 hover:bg-red-50 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 sm:mr-auto dark:border-red-800 dark:bg-gray-900 dark:text-red-300 dark:hover:bg-red-950"
          >
            <Icon name="shareStop" className="size-4" />
            {t.sharingStop}
          </button>
        )}
        <Button variant="secondary" onClick={onClose}>
          {shares.length > 0 ? t.close : t.cancel}
        </Button>
        <Button type="submit" busy={busy} busyLabel={allShared && shares.length > 0 ? t.sharingSaving : t.sharingSharing}>
          {allShared && shares.length > 0 ? t.sharingSave : t.sharingShare}
        </Button>
      </DialogActions>
    </form>
  );
}
