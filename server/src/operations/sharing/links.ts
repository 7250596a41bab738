/**
 * Direct links (DECISIONS.md §12, extensions §16): FileLink, FileUnlink, and what a link's URL
 * `{base}/l/{code}/{name}` serves (protocol/files/links.ts).
 *
 * - FileLink gives one of the caller's live files a permanent public URL. The code is 128 random
 *   bits, base64url (22 characters), and is the only secret: anyone with the URL gets the bytes.
 *   It is made once: FileLink on a file that has a link answers the same URL again. The name
 *   segment is for people and browsers; the file is found by the code alone, so a renamed file's
 *   old URL keeps working (GetLinkFiles shows the current name).
 * - Encrypted files cannot be linked: 423 with the id and tip of what locks the file (the file, or
 *   an encrypted folder above it). A file encrypted after it was linked keeps its link row, and
 *   the URL answers 423 until it is decrypted.
 * - FileUnlink removes the link; the code is never reused, so the old URL stays dead even if the
 *   file is linked again. FileUnlink on a live file of the caller that has no link is a success
 *   (code 0): the caller asked for "no link", and that is the state. It works on locked files too:
 *   taking a file off the public web must never need a password.
 * - A file in the bin (or beneath a folder in the bin) is private at once: its URL answers 404,
 *   as for an unknown code; FileLink and FileUnlink answer 404 for it as for any id that is not a
 *   live file of the caller. A restore brings the URL back; a permanent deletion removes the link.
 * - Hits count transfers, not requests: a GET answered with the whole file (200) or with a range
 *   that starts at byte 0 (206) counts once. HEAD, 304, 416 and the continuation ranges of a
 *   resumed or segmented download do not, so a download manager fetching one file in 8 parts
 *   counts as one hit. The count is one atomic UPDATE, made when the bytes are about to go out.
 */
import { randomBytes } from 'node:crypto';
import { lockAccountTree } from '../../storage/db/repositories/items-repository';
import { countLinkHit, deleteLink, findLinkTarget, insertLink } from '../../storage/db/repositories/links-repository';
import type { AuthenticatedContext, Empty, ParamsOf, Services, UrlResult } from '../context';
import { storedPlaintext, type Downloadable } from '../content/downloads';
import { lockedRefusal, notFound } from '../errors';
import { requireFile, itemIdOf } from '../tree/id-lists';

/** 128 random bits. */
const CODE_BYTES = 16;
/** What a code looks like: base64url of CODE_BYTES bytes, unpadded. */
const CODE_FORMAT = /^[A-Za-z0-9_-]{22}$/;

/** The public URL of a link: the same form GetLinkFiles lists (operations/tree/listings.ts publicUrls). */
export function linkUrl(baseUrl: string, code: string, fileName: string): string {
  return `${baseUrl}/l/${code}/${encodeURIComponent(fileName)}`;
}

export function newLinkCode(): string {
  return randomBytes(CODE_BYTES).toString('base64url');
}

export async function fileLink(ctx: AuthenticatedContext, params: ParamsOf<'FileLink'>): Promise<UrlResult> {
  const accountId = ctx.caller.uid;
  const { db, now } = ctx.services;
  const fileId = itemIdOf(params.fid);
  return db.transaction().execute(async (tx) => {
    // The account's row lock: a concurrent move to the bin cannot slip between the check and the insert.
    await lockAccountTree(tx, accountId);
    const file = await findLinkTarget(tx, { accountId, fileId });
    if (!file) throw notFound('file not found');
    // 423 with the id and tip of the encrypted item (DECISIONS.md §3, §11).
    const { lock } = file;
    if (lock) throw lockedRefusal(lock, `${lock.type === 'file' ? 'the file is encrypted' : 'the file is in an encrypted folder'}: decrypt it to link it`, 'owner');
    const code = file.link && file.linked ? file.link.code : await insertLink(tx, { accountId, fileId, code: newLinkCode(), at: now() });
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

/** A range of bytes as the protocol layer chose it (inclusive offsets); undefined = the whole file. */
export type ServedRange = { readonly start: number; readonly end: number } | undefined;

export type LinkLookup =
  | {
      readonly kind: 'found';
      readonly file: Downloadable;
      /** Call when a GET is about to send bytes (200 or 206): counts a hit when it starts a transfer. */
      readonly recordTransfer: (range: ServedRange) => Promise<void>;
    }
  | { readonly kind: 'notFound' }
  | { readonly kind: 'locked' };

/** What a link code serves now: its file while it is live and not locked. */
export async function openLinkedFile(services: Services, code: string): Promise<LinkLookup> {
  if (!CODE_FORMAT.test(code)) return { kind: 'notFound' };
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

/** Whether a GET answered with `range` is the start of a download (see the top of this file). */
export function startsTransfer(range: ServedRange): boolean {
  return range === undefined || range.start === 0;
}
