/**
 * FileAdd (DECISIONS.md §6): the record of a file whose bytes are already with the service —
 * from an upload this account completed, or content it already owns ("instant upload").
 */
import type { CallContext, ItemResult, ParamsOf } from './context';
import { unauthorized } from './errors';
import { addFileRecord, inTreeTransaction } from './file-records';
import { claimContent } from './uploads';

export async function fileAdd(ctx: CallContext, params: ParamsOf<'FileAdd'>): Promise<ItemResult> {
  if (!ctx.caller) throw unauthorized();
  const accountId = ctx.caller.uid;
  const { services } = ctx;
  const sha256 = params.hash ?? '';
  const item = await inTreeTransaction(services.db, (tx) =>
    addFileRecord(tx, services, accountId, {
      name: params.name ?? '',
      ext: params.ext ?? '',
      size: params.size,
      folderId: params.dirid,
      sha256,
      claimContent: (tx) => claimContent(tx, services, accountId, sha256, params.size),
    }),
  );
  return { kind: 'item', item };
}
