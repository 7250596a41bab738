/** Links made on opening (FileLink) or looked up (GetLinkFiles, so a link removed meanwhile is not made again); a file that fails says why. */
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { currentLinkUrls, useCreateLinks, type LinkOutcome } from '../../api/links';
import type { FileItem } from '../../api/results';
import { useI18n, type Messages } from '../../i18n';
import { Button, Spinner } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { inputClass } from '../ui/field';
import { copyLinks } from './copy-links';
import { linkErrorText } from './link-error';
import { LinkOpenAnchor } from './link-open-anchor';
import { RemoveLinkDialog } from './remove-link-dialog';

export type LinkDialogMode = 'create' | 'show';

type EntryState =
  | { readonly state: 'pending' }
  | { readonly state: 'linked'; readonly url: string }
  | { readonly state: 'failed'; readonly error: unknown }
  /** Shown, but its link was removed meanwhile (in another tab, or here). */
  | { readonly state: 'none' }
  | { readonly state: 'removed' };

type Entry = EntryState & { readonly file: FileItem };

const fromOutcome = (outcome: LinkOutcome): Entry =>
  'url' in outcome ? { file: outcome.file, state: 'linked', url: outcome.url } : { file: outcome.file, state: 'failed', error: outcome.error };

export function LinkDialog({
  files,
  mode,
  foldersLeftOut = 0,
  onClose,
}: {
  readonly files: readonly FileItem[];
  readonly mode: LinkDialogMode;
  /** Folders of the selection, which cannot be linked: said, not silently dropped. */
  readonly foldersLeftOut?: number;
  readonly onClose: () => void;
}) {
  const { t } = useI18n();
  const client = useQueryClient();
  const create = useCreateLinks();
  const [entries, setEntries] = useState<readonly Entry[]>(() => files.map((file) => ({ file, state: 'pending' })));
  const [removing, setRemoving] = useState<FileItem | null>(null);
  // Button takes no ref: the dialog's buttons are found by their data attributes in here.
  const bodyRef = useRef<HTMLDivElement>(null);
  const started = useRef(false);
  const button = (name: 'done' | 'copy') => bodyRef.current?.querySelector<HTMLButtonElement>(`[data-link-${name}]`) ?? null;

  const setEntry = (file: FileItem, next: EntryState) =>
    setEntries((current) => current.map((entry) => (entry.file.id === file.id ? { ...next, file } : entry)));

  const link = (targets: readonly FileItem[]) =>
    create.mutate({ files: targets, onOutcome: (outcome) => setEntry(outcome.file, fromOutcome(outcome)) });

  useEffect(() => {
    // Once: React's development double effects must not ask twice.
    if (started.current) return;
    started.current = true;
    if (mode === 'create') {
      link(files);
      return;
    }
    currentLinkUrls(
      client,
      files.map((file) => file.id),
    ).then(
      (urls) => setEntries(files.map((file) => ({ file, ...(urls.has(file.id) ? { state: 'linked', url: urls.get(file.id)! } : { state: 'none' }) }))),
      (error: unknown) => setEntries(files.map((file) => ({ file, state: 'failed', error }))),
    );
    // The files and the mode are those of the dialog as it was opened.
  }, []);

  const pending = entries.filter((entry) => entry.state === 'pending').length;
  const urls = entries.flatMap((entry) => (entry.state === 'linked' ? [entry.url] : []));

  // Once the links are there, the keyboard starts on the first Copy (unless the user went elsewhere).
  const loaded = pending === 0;
  useEffect(() => {
    if (!loaded) return;
    const active = document.activeElement;
    if (active === button('done') || active === document.body || active === null) button('copy')?.focus();
  }, [loaded]);

  const single = files.length === 1;
  const title = t.linksDialogTitle(t.linksFiles(files.length, files[0]?.name));
  const description = (
    <>
      <p>{t.linksExplain}</p>
      {foldersLeftOut > 0 && <p className="mt-1">{t.linksFoldersLeftOut(foldersLeftOut)}</p>}
    </>
  );

  return (
    <Dialog title={title} description={description} onClose={onClose} wide>
      <div ref={bodyRef} className="space-y-4">
      {!loaded && (
        <p role="status" className="flex items-center gap-2 text-sm text-gray-700 dark:text-gray-300">
          <Spinner />
          {mode === 'create' ? t.linksCreating(files.length - pending, files.length) : t.linksLoading}
        </p>
      )}
      <ul className={`space-y-3 ${single ? '' : 'max-h-[50dvh] overflow-y-auto pr-1'}`}>
        {entries.map((entry) => (
          <LinkEntryView
            key={entry.file.id}
            entry={entry}
            single={single}
            onRemove={() => setRemoving(entry.file)}
            onCreate={() => {
              setEntry(entry.file, { state: 'pending' });
              link([entry.file]);
            }}
            t={t}
          />
        ))}
      </ul>
      <DialogActions>
        {urls.length > 1 && (
          <Button icon="copyText" variant="secondary" onClick={() => void copyLinks(t, urls)}>
            {t.linksCopyAll}
          </Button>
        )}
        <Button data-link-done="" variant={single ? 'secondary' : 'primary'} onClick={onClose}>
          {t.linksDone}
        </Button>
      </DialogActions>
      </div>
      {removing && (
        <RemoveLinkDialog
          files={[removing]}
          onClose={() => setRemoving(null)}
          onRemoved={() => {
            setEntry(removing, { state: 'removed' });
            // The Remove button is gone with the link: focus stays in the dialog, on Done.
            requestAnimationFrame(() => button('done')?.focus());
          }}
        />
      )}
    </Dialog>
  );
}

function LinkEntryView({
  entry,
  single,
  onRemove,
  onCreate,
  t,
}: {
  readonly entry: Entry;
  readonly single: boolean;
  readonly onRemove: () => void;
  readonly onCreate: () => void;
  readonly t: Messages;
}) {
  const fieldId = useId();
  const [copied, setCopied] = useState(false);
  const { file } = entry;
  // Notices are behind the modal dialog: the button says it too, and so does a status in here.
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(timer);
  }, [copied]);
  const name = (
    <span className={single ? 'sr-only' : 'block truncate text-sm font-medium'} title={file.name}>
      {file.name}
    </span>
  );

  if (entry.state !== 'linked') {
    const text = entry.state === 'failed' ? linkErrorText(entry.error, t, file.name) : { pending: t.loading, removed: t.linksRemovedHere, none: t.linksGone }[entry.state];
    const tone = entry.state === 'failed' ? 'text-red-800 dark:text-red-200' : 'text-gray-700 dark:text-gray-300';
    return (
      <li className="min-w-0">
        {name}
        <p className={`text-sm break-words ${tone}`} role={entry.state === 'failed' ? 'alert' : undefined}>
          {text}
        </p>
        {(entry.state === 'none' || entry.state === 'removed') && (
          <Button icon="directLink" variant="secondary" compact className="mt-1" onClick={onCreate}>
            {t.linksCreate}
          </Button>
        )}
      </li>
    );
  }

  return (
    <li className="min-w-0">
      <label htmlFor={fieldId} className={single ? 'block text-sm font-medium' : 'block min-w-0'}>
        <span className="sr-only">{t.linksFieldLabel(file.name)}</span>
        {single ? <span aria-hidden="true">{t.linksColLink}</span> : <span aria-hidden="true">{name}</span>}
      </label>
      <input
        id={fieldId}
        readOnly
        value={entry.url}
        onFocus={(event) => event.currentTarget.select()}
        className={`${inputClass} font-mono text-sm`}
        spellCheck={false}
      />
      <div className="mt-2 flex flex-wrap gap-2">
        <Button
          icon={copied ? 'check' : 'copyText'}
          data-link-copy=""
          variant={single ? 'primary' : 'secondary'}
          compact
          onClick={() => void copyLinks(t, [entry.url], document.getElementById(fieldId) as HTMLInputElement | null).then(setCopied)}
          aria-label={single ? undefined : t.linksCopyFor(file.name)}
        >
          {copied ? t.linksCopiedShort : t.linksCopy(1)}
        </Button>
        <LinkOpenAnchor url={entry.url} label={t.linksOpen} name={single ? undefined : t.linksOpenFor(file.name)} />
        <Button icon="directUnlink" variant="ghost" compact className="text-red-700 dark:text-red-300" onClick={onRemove} aria-label={single ? undefined : t.linksRemoveFor(file.name)}>
          {t.linksRemove(1)}
        </Button>
      </div>
      <p role="status" className="sr-only">
        {copied ? t.linksCopied(1) : ''}
      </p>
    </li>
  );
}
