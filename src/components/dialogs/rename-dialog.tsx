import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { Item } from '../../api/results';
import { useI18n } from '../../i18n';
import { nameStemLength } from '../../lib/items';
import { checkName, type NameProblem } from '../../api/name-check';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { TextField } from '../ui/field';
import { NameProblemNotice } from './name-problem-notice';

/** The rename is optimistic (api/files.ts): the dialog closes at once, and a refusal brings the old name back with a notice. */
export function RenameDialog({
  item,
  onRename,
  onClose,
}: {
  readonly item: Item;
  readonly onRename: (item: Item, name: string) => void;
  readonly onClose: () => void;
}) {
  const { t } = useI18n();
  const [name, setName] = useState(item.name);
  const [problem, setProblem] = useState<NameProblem | null>(null);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    // The name without its extension is selected, ready to be typed over.
    input.current?.setSelectionRange(0, nameStemLength(item));
  }, [item]);

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return;
    const found = name === item.name ? null : checkName(name);
    if (found) {
      setProblem(found);
      input.current?.focus();
      return;
    }
    onClose();
    if (name !== item.name) onRename(item, name);
  };

  return (
    <Dialog title={t.renameTitle(item.name)} onClose={onClose}>
      <form onSubmit={onSubmit} className="space-y-4">
        <TextField
          ref={input}
          label={t.newName}
          value={name}
          onChange={(event) => {
            setName(event.target.value);
            setProblem(null);
          }}
          required
          maxLength={255}
          autoComplete="off"
          data-autofocus=""
          aria-invalid={problem ? true : undefined}
        />
        {problem && <NameProblemNotice problem={problem} />}
        <DialogActions>
          <Button variant="secondary" onClick={onClose}>
            {t.cancel}
          </Button>
          <Button type="submit" disabled={!name.trim()}>
            {t.rename}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
