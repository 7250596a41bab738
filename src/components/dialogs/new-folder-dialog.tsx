import { useState, type FormEvent } from 'react';
import { useCreateFolder } from '../../api/files';
import type { FolderItem } from '../../api/results';
import { useI18n } from '../../i18n';
import { checkName, type NameProblem } from '../../api/name-check';
import { notify } from '../../lib/notices';
import { InlineError } from '../error-panel';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { TextField } from '../ui/field';
import { NameProblemNotice } from './name-problem-notice';

/** A taken name shows the service's message and keeps the dialog; a name the rule refuses is never sent. */
export function NewFolderDialog({
  dir,
  onClose,
  onCreated,
}: {
  readonly dir: number;
  readonly onClose: () => void;
  readonly onCreated?: (folder: FolderItem) => void;
}) {
  const { t } = useI18n();
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<NameProblem | null>(null);
  const create = useCreateFolder();

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim() || create.isPending) return;
    const found = checkName(name);
    if (found) {
      setProblem(found);
      return;
    }
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
  };

  return (
    <Dialog title={t.newFolder} onClose={onClose}>
      <form onSubmit={onSubmit} className="space-y-4">
        <TextField
          label={t.folderName}
          value={name}
          onChange={(event) => {
            setName(event.target.value);
            setProblem(null);
          }}
          required
          maxLength={255}
          autoComplete="off"
          data-autofocus=""
          aria-invalid={problem !== null || create.isError || undefined}
        />
        {problem ? <NameProblemNotice problem={problem} /> : create.isError && <InlineError error={create.error} />}
        <DialogActions>
          <Button variant="secondary" onClick={onClose}>
            {t.cancel}
          </Button>
          <Button type="submit" busy={create.isPending} busyLabel={t.creating} disabled={!name.trim()}>
            {t.create}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
