import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { cachedItemName, registerUnlockHost, useUnlockRequest, type ItemLock } from '../../api/encryption';
import { useI18n } from '../../i18n';
import { Dialog } from '../ui/dialog';
import { UnlockForm } from './unlock-form';

/** The unlock form in a dialog, for a download: the locked file, or the locked folder it is in. */
export function UnlockDialog({ lock, onUnlocked, onCancel }: { readonly lock: ItemLock; readonly onUnlocked: () => void; readonly onCancel: () => void }) {
  const { t } = useI18n();
  const client = useQueryClient();
  const name = cachedItemName(client, lock);
  return (
    <Dialog title={name ? t.unlockNamed(name) : lock.type === 'folder' ? t.unlockFolderTitle : t.unlockFileTitle} onClose={onCancel}>
      <UnlockForm
        lock={lock}
        explain={lock.type === 'folder' ? t.unlockFolderToDownload : t.unlockFileToDownload}
        onUnlocked={onUnlocked}
        onCancel={onCancel}
      />
    </Dialog>
  );
}

/** Shows the unlock requests of code outside React (requestUnlock), one at a time. */
export function UnlockRequests() {
  const request = useUnlockRequest();
  useEffect(() => registerUnlockHost(), []);
  if (!request) return null;
  const { lock } = request;
  return (
    <UnlockDialog
      key={`${lock.type}${lock.id}`}
      lock={lock}
      onUnlocked={() => request.answer('unlocked')}
      onCancel={() => request.answer('cancelled')}
    />
  );
}
