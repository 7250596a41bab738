/** FileAdd: the record of a file whose bytes the service already has (a completed upload, or content the account owns). */
import type { AuthenticatedContext, ItemResult, ParamsOf } from '../context';
import { encryptIfAddedToEncryptedFolder } from '../encryption/encryption';
import { kickEncryptionJobs } from '../encryption/encryption-jobs';
import { addFileRecord, inTreeTransaction } from '../tree/file-records';
import { claimContent } from './uploads';

export async function fileAdd(ctx: AuthenticatedContext, params: ParamsOf<'FileAdd'>): Promise<ItemResult> {
  const accountId = ctx.caller.uid;
  const { services } = ctx;
  const sha256 = params.hash ?? '';
  const caller = ctx.caller;
  let encrypting = false;
  const item = await inTreeTransaction(services.db, async (tx) => {
    const file = await addFileRecord(tx, services, accountId, {
      name: params.name ?? '',
      ext: params.ext ?? '',
      size: params.size,
      folderId: params.dirid,
      sha256,
      claimContent: (tx, folderId) => claimContent(tx, services, accountId, sha256, params.size, folderId),
    });
    // Into an encrypted folder: 423 unless unlocked; then encrypted in the background, unless its upload already was.
    encrypting = await encryptIfAddedToEncryptedFolder(tx, services, caller, file);
    return file;
  });
  if (encrypting) kickEncryptionJobs(services);
  return { kind: 'item', item };
}
