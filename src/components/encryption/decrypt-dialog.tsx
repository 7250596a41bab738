import { useQueryClient } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { cachedItemName, insideFolderOf, useDecryptItem } from '../../api/encryption';
import type { Item } from '../../api/results';
import { useI18n } from '../../i18n';
import { notify } from '../../lib/notices';
import { Button } from '../ui/button';
import { Dialog, DialogActions } from '../ui/dialog';
import { PasswordField, PasswordRefusalNotice, usePasswordEntry } from './password-field';

/** The name of the folder an item sits in, from its path ("/A/B/x.txt" → "B"), when the listing gives paths. */
function parentNameFromPath(item: Item): string | undefined {
  const parts = item.path?.split('/').filter(Boolean);
  return parts && parts.length >= 2 ? parts[parts.length - 2] : undefined;
}

/** An item inside an encrypted folder cannot be decrypted alone (409): the dialog names the folder to decrypt instead. */
export function DecryptDialog({ item, onClose }: { readonly item: Item; readonly onClose: () => void }) {
  const { t } = useI18n();
  const client = useQueryClient();
  const decrypt = useDecryptItem();
  const { password, refusal, readyToSend, field } = usePasswordEntry(decrypt);

  const outerFolder = insideFolderOf(decrypt.error);
  const outerName =
    outerFolder === undefined
      ? undefined
      : (cachedItemName(client, { type: 'folder', id: outerFolder }) ?? (outerFolder === item.dir ? parentNameFromPath(item) : undefined));

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!readyToSend()) return;
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
      description={<p>{item.type === 'folder' ? t.decryptExplainFolder : t.decryptExplainFile}</p>}
    >
      <form onSubmit={onSubmit} noValidate className="space-y-4">
        <PasswordField
          {...field}
          label={t.passwordLabel}
          autoComplete="current-password"
          required
          data-autofocus=""
          help={item.tip ? t.passwordHintIs(item.tip) : undefined}
        />
        <PasswordRefusalNotice
          mutation={decrypt}
          refusal={refusal}
          other={
            outerFolder === undefined ? undefined : (
              <p role="alert" className="rounded-md border border-amber-400 bg-amber-50 p-3 text-sm text-amber-950 dark:border-amber-600 dark:bg-amber-950 dark:text-amber-100">
                {outerName ? t.decryptInsideFolder(item.name, outerName) : t.decryptInsideSomeFolder(item.name)}
              </p>
            )
          }
        />
        <DialogActions onCancel={onClose}>
          <Button icon="unlock" type="submit" busy={decrypt.isPending} busyLabel={t.decrypting} disabled={refusal.blocked}>
            {t.decryptAction}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
