import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { cachedItemName, insideFolderOf, useDecryptItem } from '../../api/encryption';
import type { Item } from '../../api/results';
import { useI18n } from '../../i18n';
import { passwordProblem } from '../../lib/encryption-rules';
import { notify } from '../../lib/notices';
import { InlineError } from '../error-panel';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { Icon } from '../ui/icons';
import { PasswordField, usePasswordRefusal } from './password-field';

/** The name of the folder an item sits in, from its path ("/A/B/x.txt" → "B"), when the listing gives paths. */
function parentNameFromPath(item: Item): string | undefined {
  const parts = item.path?.split('/').filter(Boolean);
  return parts && parts.length >= 2 ? parts[parts.length - 2] : undefined;
}

/**
 * Decrypt of one encrypted item, with its password. An item inside an encrypted folder cannot
 * be decrypted on its own: the service answers 409 with that folder's id, and the dialog says
 * which folder to decrypt instead.
 */
export function DecryptDialog({ item, onClose }: { readonly item: Item; readonly onClose: () => void }) {
  const { t } = useI18n();
  const client = useQueryClient();
  const decrypt = useDecryptItem();
  const [password, setPassword] = useState('');
  const [lengthError, setLengthError] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  const refusal = usePasswordRefusal(decrypt.error);

  // A wrong password: back to the field, its text selected for typing again.
  useEffect(() => {
    if (!refusal.wrong) return;
    field.current?.focus();
    field.current?.select();
  }, [decrypt.error, refusal.wrong]);

  const outerFolder = insideFolderOf(decrypt.error);
  const outerName =
    outerFolder === undefined
      ? undefined
      : (cachedItemName(client, { type: 'folder', id: outerFolder }) ?? (outerFolder === item.dir ? parentNameFromPath(item) : undefined));

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (decrypt.isPending || refusal.blocked) return;
    if (passwordProblem(password)) {
      setLengthError(true);
      field.current?.focus();
      return;
    }
    setLengthError(false);
    decrypt.mutate(
      { item, password },
      {
        onSuccess: () => {
          notify('info', t.decryptedNotice(item.name));
          onClose();
        },
      },
    );
  };

  return (
    <Dialog
      title={t.decryptTitle(item.name)}
      onClose={onClose}
      description={<p>{item.kind === 'folder' ? t.decryptExplainFolder : t.decryptExplainFile}</p>}
    >
      <form onSubmit={onSubmit} noValidate className="space-y-4">
        <PasswordField
          ref={field}
          label={t.passwordLabel}
          value={password}
          onChange={(event) => setPassword(event.target.value)}
          autoComplete="current-password"
          required
          data-autofocus=""
          error={lengthError ? t.passwordLength : refusal.wrong ? refusal.message : null}
          help={item.tip ? t.passwordHintIs(item.tip) : undefined}
        />
        {decrypt.isError &&
          !refusal.wrong &&
          (refusal.message ? (
            <p role="alert" className="text-sm text-red-700 dark:text-red-300">
              {refusal.message}
            </p>
          ) : outerFolder !== undefined ? (
            <p role="alert" className="rounded-md border border-amber-400 bg-amber-50 p-3 text-sm text-amber-950 dark:border-amber-600 dark:bg-amber-950 dark:text-amber-100">
              {outerName ? t.decryptInsideFolder(item.name, outerName) : t.decryptInsideSomeFolder(item.name)}
            </p>
          ) : (
            <InlineError error={decrypt.error} />
          ))}
        {/* Announced: the field's own error text is read when focus returns to it, this says it at once. */}
        {refusal.wrong && (
          <p key={decrypt.submittedAt} role="alert" className="sr-only">
            {refusal.message}
          </p>
        )}
        <DialogActions>
          <Button variant="secondary" onClick={onClose}>
            {t.cancel}
          </Button>
          <Button type="submit" busy={decrypt.isPending} busyLabel={t.decrypting} disabled={refusal.blocked}>
            <Icon name="unlock" className="size-4" />
            {t.decryptAction}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
