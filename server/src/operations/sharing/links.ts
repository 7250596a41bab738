/**
 * Direct links (docs/protocol.md §17): FileLink, FileUnlink, and what `/l/{code}/{name}` serves. FileUnlink works on
 * locked files: taking a file off the public web must never need a password.
 */
import { lockAccountTree } from '../../storage/db/repositories/items-repository';
import { countLinkHit, deleteLink, findLinkTarget, insertLink } from '../../storage/db/repositories/links-repository';
import type { AuthenticatedContext, Empty, ParamsOf, Services, UrlResult } from '../context';
import { storedPlaintext, type Downloadable } from '../content/downloads';
import { lockedRefusal, notFound } from '../errors';
import { requireFile, itemIdOf } from '../tree/id-lists';
// A link code is made and checked as a share code is: 128 random bits, base64url.
import { newShareCode, SHARE_CODE_FORMAT } from './shares';

/** The public URL of a link, as GetLinkFiles lists it. */
export function linkUrl(baseUrl: string, code: string, fileName: string): string {
  return `${baseUrl}/l/${code}/${encodeURIComponent(fileName)}`;
}

export async function fileLink(ctx: AuthenticatedContext, params: ParamsOf<'FileLink'>): Promise<UrlResult> {
  const accountId = ctx.caller.uid;
  const { db, now } = ctx.services;
  const fileId = itemIdOf(params.fid);
  return db.transaction().execute(async (tx) => {
    // The account's row lock: a concurrent move to the bin cannot slip between the check and the insert.
    await lockAccountTree(tx, accountId);
    const file = await findLinkTarget(tx, { accountId, fileId });
    if (!file) throw notFound('file-not-found', 'file not found');
    const { lock } = file;
    if (lock) throw lockedRefusal(lock, `${lock.type === 'file' ? 'the file is encrypted' : 'the file is in an encrypted folder'}: decrypt it to link it`, 'owner');
    const code = file.link && file.linked ? file.link.code : await insertLink(tx, { accountId, fileId, code: newShareCode(), at: now() });
    return { kind: 'url', url: linkUrl(ctx.baseUrl, code, file.name) };
  });
}

export async function fileUnlink(ctx: AuthenticatedContext, params: ParamsOf<'FileUnlink'>): Promise<Empty> {
  const accountId = ctx.caller.uid;
  const { db } = ctx.services;
  return db.transaction().execute(async (tx) => {
    await lockAccountTree(tx, accountId);
    const file = await requireFile(tx, accountId, params.fid);
    await deleteLink(tx, accountId, file.id);
    return { kind: 'empty' };
  });
}

/** Inclusive offsets as the protocol layer chose them; undefined = the whole file. */
export type ServedRange = { readonly start: number; readonly end: number } | undefined;

export type LinkLookup =
  | {
      readonly kind: 'found';
      readonly file: Downloadable;
      /** Call when a GET is about to send bytes: counts a hit when it starts a transfer. */
      readonly recordTransfer: (range: ServedRange) => Promise<void>;
    }
  | { readonly kind: 'notFound' }
  | { readonly kind: 'locked' };

/** What a link code serves now: its file while it is live and not locked. */
export async function openLinkedFile(services: Services, code: string): Promise<LinkLookup> {
  if (!SHARE_CODE_FORMAT.test(code)) return { kind: 'notFound' };
  const file = await findLinkTarget(services.db, { code });
  if (!file || !file.link) return { kind: 'notFound' };
  if (file.lock) return { kind: 'locked' };
  const linkId = file.link.id;
  return {
    kind: 'found',
    file: storedPlaintext(services, file),
    recordTransfer: async (range) => {
      if (startsTransfer(range)) await countLinkHit(services.db, linkId);
    },
  };
}

/** Whether a GET answered with `range` starts a download: a segmented download counts once. */
export function startsTransfer(range: ServedRange): boolean {
  return range === undefined || range.start === 0;
}
