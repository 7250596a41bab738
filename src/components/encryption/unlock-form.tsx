import { useQueryClient } from '@tanstack/react-query';
import { useId, type FormEvent } from 'react';
import { cachedItemName, useUnlockItem, type ItemLock } from '../../api/encryption';
import { useI18n } from '../../i18n';
import { Button } from '../ui/button';
import { Icon } from '../ui/icons';
import { PasswordField, PasswordRefusalNotice, usePasswordEntry } from './password-field';

/** What the user tried to open: the folder of the page, or the file to download. */
export interface OpenedItem {
  readonly type: 'folder' | 'file';
  readonly id: number;
}

export interface UnlockFormProps {
  /** What the service said is locked: the item itself, or the root-most locked folder above it. */
  readonly lock: ItemLock;
  readonly opened?: OpenedItem;
  /** After the Unlock, once the listings have been fetched again. */
  readonly onUnlocked: () => void;
  readonly onCancel?: () => void;
  /** What the form is for, when the caller knows better than "to open it". */
  readonly explain?: string;
}

/** Unlock for this session: names the locked folder when it is above the one opened, and shows the hint. */
export function UnlockForm({ lock, opened, onUnlocked, onCancel, explain: given }: UnlockFormProps) {
  const { t } = useI18n();
  const client = useQueryClient();
  const unlock = useUnlockItem({ onUnlocked });
  const { password, refusal, readyToSend, field } = usePasswordEntry(unlock);
  const explainId = useId();

  // The 423 names the root-most locked item: a folder above the one opened, maybe.
  const lockedAbove = opened !== undefined && (opened.type !== lock.type || opened.id !== lock.id);
  let explain = given ?? t.unlockExplain;
  if (!given && lockedAbove) {
    const name = cachedItemName(client, lock);
    explain = name ? t.lockedByFolder(name) : t.lockedBySomeFolder;
  }

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!readyToSend()) return;
    unlock.mutate({ lock, password });
  };

  return (
    <form onSubmit={onSubmit} noValidate className="space-y-4">
      <div id={explainId} className="space-y-2 text-sm text-gray-800 dark:text-gray-200">
        <p>{explain}</p>
        {lock.tip && (
          <p className="rounded-md bg-gray-100 px-3 py-2 break-words text-gray-900 dark:bg-gray-800 dark:text-gray-100">
            {t.passwordHintIs(lock.tip)}
          </p>
        )}
      </div>
      <PasswordField
        {...field}
        label={t.passwordLabel}
        autoComplete="current-password"
        required
        data-autofocus=""
        autoFocus
        help={t.unlockSessionHelp}
        describedBy={explainId}
      />
      <PasswordRefusalNotice mutation={unlock} refusal={refusal} />
      <div className="flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
        {onCancel && (
          <Button variant="secondary" onClick={onCancel}>
            {t.cancel}
          </Button>
        )}
        <Button icon="unlock" type="submit" busy={unlock.isPending} busyLabel={t.unlocking} disabled={refusal.blocked}>
          {t.unlockAction}
        </Button>
      </div>
    </form>
  );
}

/** In place of a locked folder's listing; its heading is announced when the prompt appears. */
export function LockedFolderPrompt({ lock, folder, onUnlocked }: { readonly lock: ItemLock; readonly folder: OpenedItem; readonly onUnlocked: () => void }) {
  const { t } = useI18n();
  const headingId = useId();
  return (
    <section
      aria-labelledby={headingId}
      data-testid="unlock-prompt"
      className="w-full max-w-md self-center rounded-lg border border-gray-200 bg-white p-5 shadow-sm dark:border-gray-700 dark:bg-gray-900"
    >
      <div className="mb-3 flex items-center gap-3">
        <span className="flex size-10 shrink-0 items-center justify-center rounded-full bg-amber-100 text-amber-800 dark:bg-amber-900 dark:text-amber-100">
          <Icon name="lock" className="size-6" />
        </span>
        <h2 id={headingId} className="text-lg font-semibold">
          {t.folderLocked}
        </h2>
      </div>
      {/* A new lock (another password further down) is a new form. */}
      <UnlockForm key={`${lock.type}${lock.id}`} lock={lock} opened={folder} onUnlocked={onUnlocked} />
    </section>
  );
}
