// The dialogs that ask for one name (new folder, rename): a name the rule refuses is said here and never sent.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useCreateFolder } from '../../api/files';
import type { FolderItem, Item } from '../../api/results';
import { useI18n } from '../../i18n';
import { nameStemLength } from '../../lib/items';
import { checkName, type NameProblem } from '../../api/name-check';
import { notify } from '../../lib/notices';
import { DialogAlert, InlineError } from '../error-panel';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { TextField } from '../ui/field';

interface NameDialogProps {
  readonly title: string;
  readonly label: string;
  /** The name the field starts with; submitting it unchanged is not checked. */
  readonly initial: string;
  /** The part of `initial` selected at first. */
  readonly selected?: number;
  readonly submitLabel: string;
  readonly busyLabel?: string;
  readonly busy?: boolean;
  readonly error?: unknown;
  readonly onName: (name: string) => void;
  readonly onClose: () => void;
}

function NameDialog({ title, label, initial, selected, submitLabel, busyLabel, busy = false, error, onName, onClose }: NameDialogProps) {
  const { t } = useI18n();
  const [name, setName] = useState(initial);
  const [problem, setProblem] = useState<NameProblem | null>(null);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (selected !== undefined) input.current?.setSelectionRange(0, selected);
  }, [selected]);

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim() || busy) return;
    const found = name === initial ? null : checkName(name);
    if (found) {
      setProblem(found);
      input.current?.focus();
      return;
    }
    onName(name);
  };

  const failed = error !== undefined && error !== null;
  return (
    <Dialog title={title} onClose={onClose}>
      <form onSubmit={onSubmit} className="space-y-4">
        <TextField
          ref={input}
          label={label}
          value={name}
          onChange={(event) => {
            setName(event.target.value);
            setProblem(null);
          }}
          required
          maxLength={255}
          autoComplete="off"
          data-autofocus=""
          aria-invalid={problem !== null || failed || undefined}
        />
        {problem ? <DialogAlert>{t.nameProblem(problem)}</DialogAlert> : failed && <InlineError error={error} />}
        <DialogActions onCancel={onClose}>
          <Button type="submit" busy={busy} busyLabel={busyLabel} disabled={!name.trim()}>
            {submitLabel}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}

/** A taken name shows the service's message and keeps the dialog. */
export function NewFolderDialog({ dir, onClose, onCreated }: { readonly dir: number; readonly onClose: () => void; readonly onCreated?: (folder: FolderItem) => void }) {
  const { t } = useI18n();
  const create = useCreateFolder();
  const onName = (name: string) =>
    create.mutate(
      { dir, name },
      {
        onSuccess: (folder) => {
          notify('info', t.folderCreated(folder.name));
          onCreated?.(folder);
          onClose();
        },
      },
    );
  return (
    <NameDialog
      title={t.newFolder}
      label={t.folderName}
      initial=""
      submitLabel={t.create}
      busy={create.isPending}
      busyLabel={t.creating}
      error={create.error}
      onName={onName}
      onClose={onClose}
    />
  );
}

/** The rename is optimistic (api/files.ts): the dialog closes at once, and a refusal brings the old name back with a notice. */
export function RenameDialog({ item, onRename, onClose }: { readonly item: Item; readonly onRename: (item: Item, name: string) => void; readonly onClose: () => void }) {
  const { t } = useI18n();
  const onName = (name: string) => {
    onClose();
    if (name !== item.name) onRename(item, name);
  };
  // The name without its extension is selected, ready to be typed over.
  return (
    <NameDialog
      title={t.renameTitle(item.name)}
      label={t.newName}
      initial={item.name}
      selected={nameStemLength(item)}
      submitLabel={t.rename}
      onName={onName}
      onClose={onClose}
    />
  );
}
