/**
 * E-mail sharing (docs/protocol.md §16). Links use FSS_PUBLIC_URL, never the request's Host, which the caller chooses
 * while the message leaves under the service's From; without it the calls are 503.
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
import { ensureShare, sealExtractionCode, shareAttributes } from './shares';
import { mailLanguageOf, type MailLanguage } from './mail-messages';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const EMAILS_PAGE = 500;

/** The item of a call: its type and the id as sent. */
export interface ItemRef {
  readonly type: ShareItemType;
  readonly id: bigint | number;
}

// ---- Recipients ------------------------------------------------------------------------------------

/** RFC 5321: an address is at most 254 octets. */
const MAX_ADDRESS_LENGTH = 254;
const MAX_LOCAL_LENGTH = 64;
const MAX_LABEL_LENGTH = 63;
/** RFC 5322 dot-atom: atext characters, dots only between them. */
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

/** Why `address` is not one we send to, or null: practical, not complete (dot-atom ASCII local part, a 2+ label domain). */
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
  // domainToASCII parses a URL host (ending at / ? # \, decoding %xx): an internationalized domain may
  // hold only letters, digits, dots and hyphens of ASCII, or "bob@bücher.example/x" would pass.
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

/** The distinct recipients of `to`, in order; 400 naming the first bad address, or when none or more than `max`. */
export function parseRecipients(to: string | null, max: number): string[] {
  const text = to ?? '';
  if (CONTROL.test(text.replace(/\t/g, ' '))) {
    const bad = text.split(/[,;]/).find((entry) => CONTROL.test(entry.replace(/\t/g, ' '))) ?? text;
    throw invalidArgument('email-invalid', `"${shown(bad.replace(/^[ \t]+|[ \t]+$/g, ''))}" is not a valid e-mail address: it contains a line break or another control character`);
  }
  const recipients = new Map<string, string>();
  for (const entry of text.split(/[,;]/)) {
    const address = entry.replace(/^[ \t]+|[ \t]+$/g, '');
    if (address === '') continue;
    const problem = addressProblem(address);
    if (problem) throw invalidArgument('email-invalid', `"${shown(address)}" is not a valid e-mail address: it ${problem}`);
    const key = address.toLowerCase();
    if (!recipients.has(key)) recipients.set(key, address);
  }
  if (recipients.size === 0) throw invalidArgument('recipients-empty', 'to holds no e-mail address');
  if (recipients.size > max) throw invalidArgument('too-many-recipients', `to holds ${recipients.size} e-mail addresses; at most ${max} are allowed`);
  return [...recipients.values()];
}

// ---- The sending limit -----------------------------------------------------------------------------

/** Whole seconds until `adding` more recipients fit under `limit` in a sliding `windowMs`; `sends` oldest first. */
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
    throw invalidArgument('too-many-recipients', `to holds ${adding} e-mail addresses; this account may e-mail at most ${Math.min(perHour, perDay)} at a time`);
  }
  const now = services.now();
  const sends = await emailSendsSince(tx, accountId, new Date(now.getTime() - DAY_MS));
  const hourWait = secondsUntilRoom(sends, adding, perHour, HOUR_MS, now);
  if (hourWait > 0) throw tooManyAttempts('email-hourly-limit', `too many e-mail recipients: at most ${perHour} in an hour`, hourWait);
  const dayWait = secondsUntilRoom(sends, adding, perDay, DAY_MS, now);
  if (dayWait > 0) throw tooManyAttempts('email-daily-limit', `too many e-mail recipients: at most ${perDay} in a day`, dayWait);
}

export const PUBLIC_URL_UNSET = 'public-url-unset' as const;

/** The base of share e-mails' links: FSS_PUBLIC_URL; 503 when unset (a request's Host must not write them). */
export function mailLinkBase(services: Services): string {
  const base = services.config.publicUrl;
  if (base === undefined) {
    throw unavailable(PUBLIC_URL_UNSET, 'this service cannot send share e-mails: its public address (FSS_PUBLIC_URL) is not set');
  }
  return base;
}

/**
 * Queues one message per recipient, sharing the item first if needed, in one transaction: 404, 423 (from
 * ensureShare) or 429 past the sending limit, and then nothing has changed.
 */
export async function emailShare(
  services: Services,
  accountId: number,
  ref: ItemRef,
  recipients: readonly string[],
  linkBase: string,
  language: MailLanguage = 'en',
): Promise<void> {
  const { db, secret } = services;
  await db.transaction().execute(async (tx) => {
    // ensureShare takes the account's row lock first, so concurrent calls count their recipients in turn.
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
        language,
      })),
      now,
    );
    await recordEmailSend(tx, accountId, recipients.length, now, new Date(now.getTime() - DAY_MS));
  });
  services.nudgeMailSender?.();
}

/** Both e-mail share calls. First: an installation that cannot send share e-mails says so, whatever else the call holds. */
async function emailShareCall(ctx: AuthenticatedContext, to: string | null, ref: ItemRef): Promise<Empty> {
  const linkBase = mailLinkBase(ctx.services);
  const recipients = parseRecipients(to, ctx.services.config.limits.maxEmailRecipients);
  await emailShare(ctx.services, ctx.caller.uid, ref, recipients, linkBase, mailLanguageOf(ctx.acceptLanguage));
  return { kind: 'empty' };
}

export function folderEmailShare(ctx: AuthenticatedContext, params: ParamsOf<'FolderEmailShare'>): Promise<Empty> {
  return emailShareCall(ctx, params.to, { type: 'folder', id: params.dirid });
}

export function fileEmailShare(ctx: AuthenticatedContext, params: ParamsOf<'FileEmailShare'>): Promise<Empty> {
  return emailShareCall(ctx, params.to, { type: 'file', id: params.fid });
}

function toDelivery(email: EmailRecord): EmailDelivery {
  return {
    to: email.recipient,
    time: email.status === 'sent' && email.sentAt ? email.sentAt : email.createdAt,
    status: email.status,
    error: email.status !== 'sent' && email.lastError !== null ? email.lastError : undefined,
  };
}

/** The share's messages, oldest first, page by page (no cursor held while the answer is written). */
async function* deliveriesOf(db: Kysely<Database>, shareId: number): AsyncGenerator<EmailDelivery> {
  let afterId = 0;
  for (;;) {
    const page = await emailsOfShare(db, shareId, afterId, EMAILS_PAGE);
    for (const email of page) yield toDelivery(email);
    if (page.length < EMAILS_PAGE) return;
    afterId = page.at(-1)!.id;
  }
}

/** The item, its share and each message's status; also for encrypted items (it only shows what was sent). */
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
    item: { ...item, share: shareAttributes(services.secret, ctx.baseUrl, share) },
    emails: deliveriesOf(db, share.id),
  };
}

export function getFolderEmailShareInfo(ctx: AuthenticatedContext, params: ParamsOf<'GetFolderEmailShareInfo'>): Promise<EmailShareInfo> {
  return emailShareInfo(ctx, { type: 'folder', id: params.dirid });
}

export function getFileEmailShareInfo(ctx: AuthenticatedContext, params: ParamsOf<'GetFileEmailShareInfo'>): Promise<EmailShareInfo> {
  return emailShareInfo(ctx, { type: 'file', id: params.fid });
}
