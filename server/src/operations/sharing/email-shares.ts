/**
 * E-mail sharing (DECISIONS.md §10): FolderEmailShare, FileEmailShare (ext) and
 * Get*EmailShareInfo.
 *
 * - `to` holds 1 to maxEmailRecipients addresses, separated by `,` or `;`. Spaces and tabs around
 *   them are tolerated, empty entries skipped, and duplicates collapse case-insensitively (the
 *   first spelling is kept). Each address gets a practical check (parseRecipients); the first bad
 *   one is named in the 400. A line break or any other control character anywhere in `to` is a
 *   400 too, so nothing can be smuggled into a message header.
 * - The item must be the caller's live folder or file (404 otherwise, as everywhere) and neither it
 *   nor a folder above it encrypted (423 with the id and tip of the encrypted item).
 * - The item gets a share if it has none (shares.ts ensureShare); one message per recipient is
 *   queued, in the same transaction, and the sender (mail-queue.ts) is woken after the commit.
 * - Sending is limited per account, counted in the database (email_sends), so every instance
 *   sees the same count: at most maxEmailRecipientsPerHour recipients in any hour and
 *   maxEmailRecipientsPerDay in any 24 hours; beyond that 429 with retryAfter (seconds until the
 *   whole call would fit). A refused call counts nothing.
 * - The link in the message is built on FSS_PUBLIC_URL, stored with each message, so whichever
 *   instance sends it builds the same link. Never on the request's Host: that is whatever the
 *   caller sent, and a message under the service's own From would carry a link to any site. Without
 *   FSS_PUBLIC_URL the calls are refused, 503 with reason="public-url-unset", before anything else
 *   is checked or changed (the service logs "share e-mails off" once at start: app.ts).
 */
import { domainToASCII } from 'node:url';
import type { Kysely } from 'kysely';
import {
  countEmailsOfShare,
  emailSendsSince,
  emailsOfShare,
  insertQueuedEmails,
  recordEmailSend,
  type EmailRecord,
  type EmailSend,
} from '../../storage/db/repositories/emails-repository';
import { findSharesOf } from '../../storage/db/repositories/shares-repository';
import type { Database, ShareItemType } from '../../storage/db/schema';
import type { AuthenticatedContext, EmailDelivery, EmailShareInfo, Empty, Item, ParamsOf, Services } from '../context';
import { invalidArgument, tooManyAttempts, unavailable } from '../errors';
import { itemIdOf, requireFile, requireFolder } from '../tree/id-lists';
import { ensureShare, ownerShareAttributes, sealExtractionCode } from './shares';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Emails are read from the database in pages of this many, never held whole. */
const EMAILS_PAGE = 500;

/** The item of a call: its type and the id as sent (an id no item can have is simply not found). */
export interface ItemRef {
  readonly type: ShareItemType;
  readonly id: bigint | number;
}

// ---- Recipients ------------------------------------------------------------------------------------

/** RFC 5321: an address (the forward path without its brackets) is at most 254 octets. */
const MAX_ADDRESS_LENGTH = 254;
const MAX_LOCAL_LENGTH = 64;
const MAX_LABEL_LENGTH = 63;
/** RFC 5322 dot-atom of the local part: atext characters, dots only between them. */
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const SHOWN_LENGTH = 60;

/** An address as a message may quote it: control characters made visible, and cut when long. */
function shown(address: string): string {
  const visible = address.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
    c === '\r' ? '\\r' : c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return visible.length > SHOWN_LENGTH ? `${visible.slice(0, SHOWN_LENGTH)}…` : visible;
}

/**
 * Why `address` is not one we send to, or null when it is. Practical rather than complete: a
 * dot-atom local part of ASCII (no quoted strings, no comments), and a domain name of at least two
 * labels (internationalized names are accepted and checked in their ASCII form); no address
 * literals. Such addresses are what people type and what every mail server accepts.
 */
export function addressProblem(address: string): string | null {
  if (address.length > MAX_ADDRESS_LENGTH) return `is longer than ${MAX_ADDRESS_LENGTH} characters`;
  const at = address.lastIndexOf('@');
  if (at < 0) return 'has no @';
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local === '') return 'has nothing before the @';
  if (domain === '') return 'has no domain after the @';
  if (local.length > MAX_LOCAL_LENGTH) return `has more than ${MAX_LOCAL_LENGTH} characters before the @`;
  if (!LOCAL_PART.test(local)) return 'has characters before the @ that an address cannot have';
  // domainToASCII parses the domain as a URL host, which ends at / ? # \ and decodes %xx: an
  // internationalized domain may hold no ASCII but letters, digits, dots and hyphens, or
  // "bob@bücher.example/x" would be checked as bücher.example.
  const isAscii = /^[\x00-\x7f]*$/.test(domain);
  if (!isAscii && /[^\x80-\u{10ffff}A-Za-z0-9.-]/u.test(domain)) return 'has an invalid domain';
  const ascii = isAscii ? domain : domainToASCII(domain);
  if (ascii === '' || ascii.length > MAX_ADDRESS_LENGTH) return 'has an invalid domain';
  const labels = ascii.split('.');
  if (labels.length < 2) return 'has a domain without a dot';
  if (labels.some((label) => label.length > MAX_LABEL_LENGTH || !DOMAIN_LABEL.test(label))) return 'has an invalid domain';
  if (/^[0-9]+$/.test(labels.at(-1)!)) return 'has an invalid domain';
  return null;
}

/**
 * The distinct recipients of `to`, in the order given; 400 naming the first bad address, or when
 * there are none or more than `max`.
 */
export function parseRecipients(to: string | null, max: number): string[] {
  const text = to ?? '';
  if (CONTROL.test(text.replace(/\t/g, ' '))) {
    const bad = text.split(/[,;]/).find((entry) => CONTROL.test(entry.replace(/\t/g, ' '))) ?? text;
    throw invalidArgument(`"${shown(bad.replace(/^[ \t]+|[ \t]+$/g, ''))}" is not a valid e-mail address: it contains a line break or another control character`);
  }
  const recipients = new Map<string, string>();
  for (const entry of text.split(/[,;]/)) {
    const address = entry.replace(/^[ \t]+|[ \t]+$/g, '');
    if (address === '') continue;
    const problem = addressProblem(address);
    if (problem) throw invalidArgument(`"${shown(address)}" is not a valid e-mail address: it ${problem}`);
    const key = address.toLowerCase();
    if (!recipients.has(key)) recipients.set(key, address);
  }
  if (recipients.size === 0) throw invalidArgument('to holds no e-mail address');
  if (recipients.size > max) throw invalidArgument(`to holds ${recipients.size} e-mail addresses; at most ${max} are allowed`);
  return [...recipients.values()];
}

// ---- The sending limit -----------------------------------------------------------------------------

/**
 * Whole seconds until `adding` more recipients fit under `limit` in the window of `windowMs`
 * before each moment; 0 when they fit now. `sends` are oldest first.
 */
export function secondsUntilRoom(sends: readonly EmailSend[], adding: number, limit: number, windowMs: number, now: Date): number {
  const inWindow = sends.filter((send) => send.at.getTime() > now.getTime() - windowMs);
  let total = inWindow.reduce((sum, send) => sum + send.recipients, 0);
  if (total + adding <= limit) return 0;
  for (const send of inWindow) {
    total -= send.recipients;
    if (total + adding <= limit) return Math.max(1, Math.ceil((send.at.getTime() + windowMs - now.getTime()) / 1000));
  }
  return Math.ceil(windowMs / 1000);
}

async function checkSendingLimit(tx: Kysely<Database>, services: Services, accountId: number, adding: number): Promise<void> {
  const { maxEmailRecipientsPerHour: perHour, maxEmailRecipientsPerDay: perDay } = services.config.limits;
  if (adding > perHour || adding > perDay) {
    throw invalidArgument(`to holds ${adding} e-mail addresses; this account may e-mail at most ${Math.min(perHour, perDay)} at a time`);
  }
  const now = services.now();
  const sends = await emailSendsSince(tx, accountId, new Date(now.getTime() - DAY_MS));
  const hourWait = secondsUntilRoom(sends, adding, perHour, HOUR_MS, now);
  if (hourWait > 0) throw tooManyAttempts(`too many e-mail recipients: at most ${perHour} in an hour`, hourWait);
  const dayWait = secondsUntilRoom(sends, adding, perDay, DAY_MS, now);
  if (dayWait > 0) throw tooManyAttempts(`too many e-mail recipients: at most ${perDay} in a day`, dayWait);
}

// ---- The operations -------------------------------------------------------------------------------

/** Why share e-mails are refused when FSS_PUBLIC_URL is not set: the refusal's `reason`. */
export const PUBLIC_URL_UNSET = 'public-url-unset';

/**
 * The base of the links of share e-mails: FSS_PUBLIC_URL. 503 when it is not set: a request's Host
 * is chosen by whoever sends the request, and must not write links that leave with the service's From.
 */
export function mailLinkBase(services: Services): string {
  const base = services.config.publicUrl;
  if (base === undefined) {
    throw unavailable('this service cannot send share e-mails: its public address (FSS_PUBLIC_URL) is not set', PUBLIC_URL_UNSET);
  }
  return base;
}

/**
 * Queues one message per recipient for the item, sharing it first if it is not yet shared, all in
 * one transaction: 404 when the item is not a live item of the account, 423 when it or a folder
 * above it is encrypted (both from ensureShare), 429 beyond the sending limit; then nothing has
 * changed. `linkBase` is the base of the links, FSS_PUBLIC_URL (mailLinkBase).
 */
export async function emailShare(services: Services, accountId: number, ref: ItemRef, recipients: readonly string[], linkBase: string): Promise<void> {
  const { db, secret } = services;
  await db.transaction().execute(async (tx) => {
    // ensureShare takes the account's row lock first: concurrent calls of one account then count
    // their recipients one after another. A refusal below rolls the new share back too.
    const share = await ensureShare(tx, services, accountId, { type: ref.type, id: itemIdOf(ref.id) });
    await checkSendingLimit(tx, services, accountId, recipients.length);
    const now = services.now();
    await insertQueuedEmails(
      tx,
      recipients.map((recipient) => ({
        shareId: share.id,
        recipient,
        baseUrl: linkBase,
        extractionCodeSealed: share.downpwd === '' ? null : sealExtractionCode(secret, share.downpwd),
      })),
      now,
    );
    await recordEmailSend(tx, accountId, recipients.length, now, new Date(now.getTime() - DAY_MS));
  });
  services.nudgeMailSender?.();
}

export async function folderEmailShare(ctx: AuthenticatedContext, params: ParamsOf<'FolderEmailShare'>): Promise<Empty> {
  const accountId = ctx.caller.uid;
  // First: an installation that cannot send share e-mails says so, whatever else the call holds.
  const linkBase = mailLinkBase(ctx.services);
  const recipients = parseRecipients(params.to, ctx.services.config.limits.maxEmailRecipients);
  await emailShare(ctx.services, accountId, { type: 'folder', id: params.dirid }, recipients, linkBase);
  return { kind: 'empty' };
}

export async function fileEmailShare(ctx: AuthenticatedContext, params: ParamsOf<'FileEmailShare'>): Promise<Empty> {
  const accountId = ctx.caller.uid;
  // First: an installation that cannot send share e-mails says so, whatever else the call holds.
  const linkBase = mailLinkBase(ctx.services);
  const recipients = parseRecipients(params.to, ctx.services.config.limits.maxEmailRecipients);
  await emailShare(ctx.services, accountId, { type: 'file', id: params.fid }, recipients, linkBase);
  return { kind: 'empty' };
}

function toDelivery(email: EmailRecord): EmailDelivery {
  return {
    to: email.recipient,
    time: email.status === 'sent' && email.sentAt ? email.sentAt : email.createdAt,
    status: email.status,
    error: email.status !== 'sent' && email.lastError !== null ? email.lastError : undefined,
  };
}

/** The share's messages, oldest first, read page by page (a cursor is never held while the answer is written). */
async function* deliveriesOf(db: Kysely<Database>, shareId: number): AsyncGenerator<EmailDelivery> {
  let afterId = 0;
  for (;;) {
    const page = await emailsOfShare(db, shareId, afterId, EMAILS_PAGE);
    for (const email of page) yield toDelivery(email);
    if (page.length < EMAILS_PAGE) return;
    afterId = page.at(-1)!.id;
  }
}

/**
 * The item with its share attributes and the status of each message of its share. An item that
 * was never shared answers itself and no `<email/>`. Answered for encrypted items too: it only
 * shows the owner what was sent before.
 */
export async function emailShareInfo(ctx: AuthenticatedContext, ref: ItemRef): Promise<EmailShareInfo> {
  const accountId = ctx.caller.uid;
  const { services } = ctx;
  const { db } = services;
  const item: Item =
    ref.type === 'folder' ? await requireFolder(db, accountId, ref.id) : await requireFile(db, accountId, ref.id);
  const [share] = await findSharesOf(db, accountId, ref.type, [item.id]);
  if (!share) return { kind: 'emailShareInfo', count: 0, item, emails: [] };
  const count = await countEmailsOfShare(db, share.id);
  return {
    kind: 'emailShareInfo',
    count,
    item: { ...item, share: ownerShareAttributes(services, ctx.baseUrl, share) },
    emails: deliveriesOf(db, share.id),
  };
}

export function getFolderEmailShareInfo(ctx: AuthenticatedContext, params: ParamsOf<'GetFolderEmailShareInfo'>): Promise<EmailShareInfo> {
  return emailShareInfo(ctx, { type: 'folder', id: params.dirid });
}

export function getFileEmailShareInfo(ctx: AuthenticatedContext, params: ParamsOf<'GetFileEmailShareInfo'>): Promise<EmailShareInfo> {
  return emailShareInfo(ctx, { type: 'file', id: params.fid });
}
