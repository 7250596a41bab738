/**
 * SQL for e-mail sharing: the queue (one row per recipient), its lease and the sending ledger. A row is claimed by one
 * conditional UPDATE and every later change names the lease holder, so any number of instances share the queue.
 */
import type { ExpressionBuilder, Kysely, Updateable } from 'kysely';
import type { Database, EmailStatus, EmailsTable, ShareItemType } from '../schema';

export type { EmailStatus } from '../schema';

/** Candidates a claim tries before leaving the queue to the instances that took them. */
const MAX_CLAIM_TRIES = 5;

// ---- Queueing --------------------------------------------------------------------------------------

export interface NewEmail {
  readonly shareId: number;
  readonly recipient: string;
  readonly baseUrl: string;
  readonly extractionCodeSealed: string | null;
  /** What the message is written in ('en', 'zh-CN'). */
  readonly language: string;
}

/** Queues one message per entry, due at once: one statement for all of them. */
export async function insertQueuedEmails(db: Kysely<Database>, emails: readonly NewEmail[], at: Date): Promise<void> {
  if (emails.length === 0) return;
  const time = at.getTime();
  await db
    .insertInto('emails')
    .values(
      emails.map((email) => ({
        share_id: email.shareId,
        recipient: email.recipient,
        status: 'queued' as const,
        attempts: 0,
        next_attempt_at: time,
        created_at: time,
        base_url: email.baseUrl,
        language: email.language,
        extraction_code_sealed: email.extractionCodeSealed,
      })),
    )
    .execute();
}

// ---- The sending ledger (rate limit) ---------------------------------------------------------------

export interface EmailSend {
  readonly recipients: number;
  readonly at: Date;
}

/** The account's accepted e-mail share calls since `since`, oldest first. */
export async function emailSendsSince(db: Kysely<Database>, accountId: number, since: Date): Promise<EmailSend[]> {
  const rows = await db
    .selectFrom('email_sends')
    .select(['recipients', 'created_at'])
    .where('account_id', '=', accountId)
    .where('created_at', '>', since.getTime())
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ recipients: row.recipients, at: new Date(row.created_at) }));
}

/** Records an accepted call, and forgets the account's calls from before `forgetBefore` (no window reaches them). */
export async function recordEmailSend(db: Kysely<Database>, accountId: number, recipients: number, at: Date, forgetBefore: Date): Promise<void> {
  await db.deleteFrom('email_sends').where('account_id', '=', accountId).where('created_at', '<=', forgetBefore.getTime()).execute();
  await db.insertInto('email_sends').values({ account_id: accountId, recipients, created_at: at.getTime() }).execute();
}

// ---- What Get*EmailShareInfo shows ------------------------------------------------------------------

export interface EmailRecord {
  readonly id: number;
  readonly recipient: string;
  readonly status: EmailStatus;
  readonly attempts: number;
  readonly createdAt: Date;
  readonly sentAt: Date | null;
  readonly lastError: string | null;
}

export async function countEmailsOfShare(db: Kysely<Database>, shareId: number): Promise<number> {
  const row = await db
    .selectFrom('emails')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('share_id', '=', shareId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The share's messages after id `afterId`, in queueing order, at most `limit`: one page of a keyset walk. */
export async function emailsOfShare(db: Kysely<Database>, shareId: number, afterId: number, limit: number): Promise<EmailRecord[]> {
  const rows = await db
    .selectFrom('emails')
    .select(['id', 'recipient', 'status', 'attempts', 'created_at', 'sent_at', 'last_error as lastError'])
    .where('share_id', '=', shareId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(({ created_at, sent_at, ...row }) => ({ ...row, createdAt: new Date(created_at), sentAt: sent_at === null ? null : new Date(sent_at) }));
}

// ---- The sender -------------------------------------------------------------------------------------

/** A message the sender holds the lease of. */
export interface ClaimedEmail extends NewEmail {
  readonly id: number;
  /** Attempts made before this one. */
  readonly attempts: number;
  readonly createdAt: Date;
}

export interface Lease {
  /** Who holds it: one sender of one instance. */
  readonly holder: string;
  readonly until: Date;
}

/**
 * Claims the longest-due free queued message for `lease`, null when none: a read finds a candidate (an idle queue
 * costs no write), one conditional UPDATE repeating the conditions claims it, so one instance wins; others try the next.
 */
export async function claimDueEmail(db: Kysely<Database>, now: Date, lease: Lease): Promise<ClaimedEmail | null> {
  const at = now.getTime();
  const dueAndFree = (eb: ExpressionBuilder<Database, 'emails'>) =>
    eb.and([eb('status', '=', 'queued'), eb('next_attempt_at', '<=', at), eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', at)])]);
  for (let tries = 0; tries < MAX_CLAIM_TRIES; tries++) {
    const candidate = await db
      .selectFrom('emails')
      .select('id')
      .where(dueAndFree)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (!candidate) return null;
    const row = await db
      .updateTable('emails')
      .set({ locked_until: lease.until.getTime(), locked_by: lease.holder })
      .where('id', '=', candidate.id)
      .where(dueAndFree)
      .returning(['id', 'share_id as shareId', 'recipient', 'base_url as baseUrl', 'extraction_code_sealed as extractionCodeSealed', 'language', 'attempts', 'created_at'])
      .executeTakeFirst();
    if (row) {
      const { created_at, ...claimed } = row;
      return { ...claimed, createdAt: new Date(created_at) };
    }
  }
  // Every candidate was taken by another instance in between: this round leaves the rest to them.
  return null;
}

/** Marks a held message sent and frees it; false when the lease was lost (another instance holds it now). */
export function markEmailSent(db: Kysely<Database>, id: number, holder: string, at: Date): Promise<boolean> {
  return releaseHeldEmail(db, id, holder, { status: 'sent', sent_at: at.getTime(), last_error: null });
}

/** Records a failed attempt of a held message and frees it: due again at `retryAt`, or failed for good when null. */
export function markEmailAttemptFailed(db: Kysely<Database>, id: number, holder: string, error: string, retryAt: Date | null): Promise<boolean> {
  return releaseHeldEmail(db, id, holder, { ...(retryAt === null ? { status: 'failed' } : { next_attempt_at: retryAt.getTime() }), last_error: error });
}

async function releaseHeldEmail(db: Kysely<Database>, id: number, holder: string, outcome: Updateable<EmailsTable>): Promise<boolean> {
  const result = await db
    .updateTable('emails')
    .set((eb) => ({ ...outcome, attempts: eb('attempts', '+', 1), locked_until: null, locked_by: null }))
    .where('id', '=', id)
    .where('locked_by', '=', holder)
    .where('status', '=', 'queued')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** What a message says about its share, read when it is sent. */
export interface ShareMessageContext {
  readonly accountId: number;
  readonly accountName: string;
  readonly code: string;
  readonly itemType: ShareItemType;
  readonly itemId: number;
}

export async function findShareMessageContext(db: Kysely<Database>, shareId: number): Promise<ShareMessageContext | null> {
  const row = await db
    .selectFrom('shares')
    .innerJoin('accounts', 'accounts.id', 'shares.account_id')
    .select(['shares.account_id', 'accounts.name', 'shares.code', 'shares.item_type', 'shares.item_id'])
    .where('shares.id', '=', shareId)
    .executeTakeFirst();
  if (!row) return null;
  return { accountId: row.account_id, accountName: row.name, code: row.code, itemType: row.item_type, itemId: row.item_id };
}
