/**
 * NamesTaken (docs/protocol.md §10.9): which of the names a client is about to upload or move into a folder are taken
 * there, so that it can ask replace / keep both / skip before sending a byte. One indexed query, however big the folder.
 */
import { listFilesAmong, listFoldersAmong } from '../../storage/db/repositories/listings-repository';
import { findItemsWithKeys } from '../../storage/db/repositories/names-taken-repository';
import type { AuthenticatedContext, Listing, ParamsOf } from '../context';
import { invalidArgument } from '../errors';
import { itemIdOf } from './id-lists';
import { checkFolder } from './listings';
import { nameKey, validName } from './names';

/** The most names one call may ask about. */
export const NAMES_TAKEN_LIMIT = 1_000;

/** "/" separates the names: no valid name holds it. Empty entries are skipped; every other one must be a valid name (400). */
export function parseNames(text: string | null, maxLength: number): string[] {
  const names = (text ?? '').split('/').filter((entry) => entry !== '');
  if (names.length === 0) throw invalidArgument('ids-empty', 'names is empty: give at least one name');
  if (names.length > NAMES_TAKEN_LIMIT) throw invalidArgument('too-many-ids', `names holds more than ${NAMES_TAKEN_LIMIT} names`);
  return names.map((name) => validName(name, maxLength, 'names'));
}

/** The folder is checked first, as a listing checks it (404, 423 while locked), then the names (400). */
export async function namesTaken(ctx: AuthenticatedContext, params: ParamsOf<'NamesTaken'>): Promise<Listing> {
  const { uid } = ctx.caller;
  const folderId = Number(params.dirid) === 0 ? 0 : itemIdOf(params.dirid);
  await checkFolder(ctx, uid, folderId);
  const keys = [...new Set(parseNames(params.names, ctx.services.config.limits.maxNameLength).map(nameKey))];
  const { db } = ctx.services;
  const { folderIds, fileIds } = await findItemsWithKeys(db, uid, folderId, keys);
  const order = { key: 'name', descending: false } as const;
  const [folders, files] = [await listFoldersAmong(db, uid, folderIds, order), await listFilesAmong(db, uid, fileIds, order)];
  return { kind: 'listing', count: folders.length + files.length, folders, files };
}
