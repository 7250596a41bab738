/** Asks what to do with an incoming name the folder already holds: Replace, Keep both, Skip, and "Apply to all". */
import { useState, useSyncExternalStore } from 'react';
import { useI18n } from '../../i18n';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { currentQuestion, subscribeToQuestions, type ConflictAnswer, type ConflictChoice, type NameConflict } from './name-conflicts';

export function NameConflictDialog({ conflict, onAnswer }: { readonly conflict: NameConflict; readonly onAnswer: (answer: ConflictAnswer) => void }) {
  const { t } = useI18n();
  const [all, setAll] = useState(false);
  const answer = (choice: ConflictChoice) => onAnswer({ choice, all });
  const others = conflict.remaining - 1;
  return (
    <Dialog
      role="alertdialog"
      title={t.conflictTitle(conflict.name)}
      description={<p>{t.conflictExplain(conflict.existing.type === 'folder', conflict.kind === 'folder')}</p>}
      onClose={() => onAnswer(null)}
    >
      {others > 0 && (
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" checked={all} onChange={(event) => setAll(event.currentTarget.checked)} className="size-4" />
          {t.conflictApplyAll(others)}
        </label>
      )}
      <DialogActions>
        <Button variant="ghost" onClick={() => onAnswer(null)}>
          {t.cancel}
        </Button>
        <Button variant="secondary" onClick={() => answer('skip')}>
          {t.conflictSkip}
        </Button>
        <Button variant="secondary" onClick={() => answer('keepBoth')} data-autofocus="">
          {t.conflictKeepBoth}
        </Button>
        <Button onClick={() => answer('replace')}>{t.conflictReplace}</Button>
      </DialogActions>
    </Dialog>
  );
}

/** Mounted once in the signed-in layout (UploadRoot): shows the conflict questions of uploads and moves, one at a time. */
export function NameConflictHost() {
  const question = useSyncExternalStore(subscribeToQuestions, currentQuestion);
  return question ? <NameConflictDialog key={question.id} conflict={question.conflict} onAnswer={question.answer} /> : null;
}
