import { isApiError } from '../../api/errors';
import type { Item } from '../../api/results';
import { useI18n, type Messages } from '../../i18n';
import { DialogAlert } from '../error-panel';
import { describeError, type ErrorText } from '../error-text';

/** An encrypted item (423) cannot be shared even unlocked, so "unlock it first" would mislead: name the item or the folder above it. */
export function shareErrorText(error: unknown, t: Messages, items: readonly Item[]): ErrorText {
  if (isApiError(error, 'Locked')) {
    // Folder and file ids are separate counts (and ShareImageUpload's refusal names none): ours only if flagged encrypted itself.
    const { id, type } = error.details;
    const locked = items.find((item) => item.encrypted && (id === undefined || item.id === id) && (type === undefined || item.type === type));
    return { title: t.sharingLockedTitle, message: locked ? t.sharingLocked(locked.name) : t.sharingLockedAbove };
  }
  return describeError(error, t, t.itemsPhrase(items.length, items[0]?.name));
}

/** A failed share, unshare or upload inside the dialog, announced. */
export function ShareError({ error, items, lead }: { readonly error: unknown; readonly items: readonly Item[]; readonly lead?: string }) {
  const { t } = useI18n();
  const { title, message } = shareErrorText(error, t, items);
  return (
    <DialogAlert>
      {lead && <span className="block font-medium">{lead}</span>}
      {title === t.errRefusedTitle ? message : `${title}. ${message}`}
    </DialogAlert>
  );
}
