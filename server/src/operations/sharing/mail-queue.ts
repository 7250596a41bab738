/**
 * The e-mail sender (docs/protocol.md §16): queued share messages sent from the database by any instance. A crash can
 * cause a second copy, so every copy has the same Message-ID; the send timeout stays below the lease.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import type { Logger } from '../../log';
import { writeFileSynced } from '../../storage/content/file-sync';
import { claimDueEmail, findShareMessageContext, markEmailAttemptFailed, markEmailSent, type ClaimedEmail } from '../../storage/db/repositories/emails-repository';
import { findSharedTarget } from '../../storage/db/repositories/shares-repository';
import type { Services } from '../context';
import { mailLanguageOf, shareMessage, type ShareMessage } from './mail-messages';
import { openExtractionCode, shareUrl } from './shares';
import { scheduleRounds, type BackgroundRounds } from '../background-rounds';

export interface MailSenderSettings {
  /** How often the queue is looked at without a nudge. */
  readonly intervalMs: number;
  /** The wait after the first failed attempt, doubling up to maxRetryMs. */
  readonly firstRetryMs: number;
  readonly maxRetryMs: number;
  /** A message not delivered this long after it was queued fails for good. */
  readonly giveUpAfterMs: number;
  /** How long a claimed message is held before another instance may take it over. */
  readonly leaseMs: number;
  /** A send still running after this is abandoned (and retried): must stay below leaseMs. */
  readonly sendTimeoutMs: number;
  /** Messages sent at the same time by one instance. */
  readonly concurrency: number;
  /** Messages one round sends at most, so stopping never waits long. */
  readonly maxPerRound: number;
}

const MINUTE = 60_000;

export const defaultMailSenderSettings: MailSenderSettings = {
  intervalMs: 5_000,
  firstRetryMs: MINUTE,
  maxRetryMs: 60 * MINUTE,
  giveUpAfterMs: 24 * 60 * MINUTE,
  leaseMs: 5 * MINUTE,
  sendTimeoutMs: 2 * MINUTE,
  concurrency: 4,
  maxPerRound: 200,
};

/** SMTP timeouts, each below sendTimeoutMs. */
const SMTP_TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

/** Stored error texts are cut to this. */
const MAX_ERROR_LENGTH = 500;

/** When to retry after the `attempts`-th failure: firstRetryMs · 2^(attempts−1), at most maxRetryMs; null past giveUpAfterMs. */
export function nextAttemptAt(settings: MailSenderSettings, attempts: number, queuedAt: Date, now: Date): Date | null {
  const delay = Math.min(settings.firstRetryMs * 2 ** Math.min(Math.max(attempts - 1, 0), 40), settings.maxRetryMs);
  const at = now.getTime() + delay;
  return at > queuedAt.getTime() + settings.giveUpAfterMs ? null : new Date(at);
}

// ---- Messages and their delivery -------------------------------------------------------------------

export interface OutgoingMail {
  readonly emailId: number;
  readonly from: string;
  readonly to: string;
  readonly messageId: string;
  readonly date: Date;
  readonly content: ShareMessage;
}

export interface MailDelivery {
  /** For the log: how and where messages go (never the SMTP user or password). */
  readonly kind: 'smtp' | 'outbox';
  readonly destination: string;
  /** Resolves once the message is accepted (by the mail server, or written). */
  deliver(mail: OutgoingMail): Promise<{ readonly file?: string }>;
  close(): void;
}

/** The domain of a From value (`a@b` or `Name <a@b>`), for Message-IDs. */
function fromDomain(from: string): string {
  const match = /@([^\s<>@]+)>?\s*$/.exec(from);
  return match ? match[1] : 'localhost';
}

/** A message's Message-ID: the same on every attempt and instance, so receivers can deduplicate; keyed by the server secret. */
export function messageIdOf(secret: Buffer, emailId: number, from: string): string {
  const tag = createHmac('sha256', secret).update(`fss/message-id/v1:${emailId}`).digest('base64url').slice(0, 22);
  return `<${emailId}.${tag}@${fromDomain(from)}>`;
}

function nodemailerMessage(mail: OutgoingMail) {
  return {
    from: mail.from,
    to: mail.to,
    subject: mail.content.subject,
    text: mail.content.text,
    html: mail.content.html,
    messageId: mail.messageId,
    date: mail.date,
  };
}

/** A nodemailer transport made at the first delivery: a service that sends no mail never loads nodemailer. */
function lazyTransport(make: (mailer: typeof import('nodemailer').default) => Transporter) {
  let transport: Promise<Transporter> | undefined;
  return {
    get: () => (transport ??= import('nodemailer').then((module) => make(module.default))),
    close: () => void transport?.then((made) => made.close()),
  };
}

/** SMTP through nodemailer: a connection per message (smtp:// upgrades with STARTTLS when offered; smtps:// is TLS). */
export function smtpDelivery(url: string, timeouts: Partial<typeof SMTP_TIMEOUTS> = {}): MailDelivery {
  const transport = lazyTransport((mailer) => mailer.createTransport({ url, ...SMTP_TIMEOUTS, ...timeouts }));
  const { protocol, host } = new URL(url);
  return {
    kind: 'smtp',
    destination: `${protocol}//${host}`,
    async deliver(mail) {
      await (await transport.get()).sendMail(nodemailerMessage(mail));
      return {};
    },
    close: transport.close,
  };
}

/**
 * The outbox: each message as `email-<id>.eml` in `dir`, written to a temporary file, synced and renamed so
 * no reader sees half a message. Private to the service's user (0700, 0600): they hold extraction codes.
 */
export function outboxDelivery(dir: string): MailDelivery {
  const composer = lazyTransport((mailer) => mailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' }));
  return {
    kind: 'outbox',
    destination: dir,
    async deliver(mail) {
      const info = await (await composer.get()).sendMail(nodemailerMessage(mail));
      const bytes = info.message as Buffer;
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const file = path.join(dir, `email-${mail.emailId}.eml`);
      const temp = path.join(dir, `.email-${mail.emailId}.${randomBytes(6).toString('hex')}.tmp`);
      await writeFileSynced(temp, bytes, 'wx').catch(async (error: unknown) => {
        await rm(temp, { force: true });
        throw error;
      });
      await rename(temp, file);
      return { file };
    },
    close: composer.close,
  };
}

/** The delivery the settings ask for: SMTP when FSS_SMTP_URL is set, else the data folder's outbox. */
export function configuredDelivery(services: Services): MailDelivery {
  const { smtpUrl, dataDir } = services.config;
  return smtpUrl ? smtpDelivery(smtpUrl) : outboxDelivery(path.join(dataDir, 'outbox'));
}

// ---- The sender -------------------------------------------------------------------------------------

export interface RoundReport {
  readonly sent: number;
  /** Failed attempts that will be retried. */
  readonly retried: number;
  readonly failed: number;
}

/** Why a claimed message cannot be sent at all (it then fails for good with this text). */
class Undeliverable extends Error {}

class SendTimeout extends Error {}

/** One line, at most MAX_ERROR_LENGTH characters, for last_error and the log. */
function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim() || 'unknown error';
  return line.length > MAX_ERROR_LENGTH ? `${line.slice(0, MAX_ERROR_LENGTH - 1)}…` : line;
}

/** A refusal that sending again cannot change: the server rejected the recipient or the message (5xx). */
function isPermanentRejection(error: unknown): boolean {
  const { responseCode, command } = (error ?? {}) as { responseCode?: unknown; command?: unknown };
  return typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600 && (command === 'RCPT TO' || command === 'DATA');
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SendTimeout(`no answer from the mail server within ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface MailSenderOptions {
  readonly delivery?: MailDelivery;
  readonly settings?: Partial<MailSenderSettings>;
}

/** Sends due messages in rounds: every `intervalMs`, and at once when nudged; rounds never overlap within an instance. */
export class MailSender {
  readonly settings: MailSenderSettings;
  /** This sender's name in the lease column. */
  readonly holder = `${os.hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  private readonly delivery: MailDelivery;
  private rounds: BackgroundRounds | null = null;
  private stopping = false;

  constructor(
    private readonly services: Services,
    private readonly log: Logger,
    options: MailSenderOptions = {},
  ) {
    this.settings = { ...defaultMailSenderSettings, ...options.settings };
    this.delivery = options.delivery ?? configuredDelivery(services);
  }

  /** Looks at the queue now and every intervalMs until stop(). */
  start(): void {
    if (this.rounds || this.stopping) return;
    this.log.info('mail sender started', { delivery: this.delivery.kind, to: this.delivery.destination });
    this.rounds = scheduleRounds(this.services, this.log, 'mail round', this.settings.intervalMs, async () => void (await this.sendDue()));
  }

  /** Messages were queued: send them now rather than at the next interval. */
  nudge(): void {
    if (this.rounds && !this.stopping) setImmediate(() => this.rounds?.kick());
  }

  /** Stops the rounds, waits for the one under way, and closes the delivery. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.rounds?.stop();
    this.delivery.close();
  }

  /** One round: claims and sends due messages until none is due (or maxPerRound were handled). */
  async sendDue(): Promise<RoundReport> {
    const report = { sent: 0, retried: 0, failed: 0 };
    let handled = 0;
    const worker = async () => {
      while (!this.stopping && handled < this.settings.maxPerRound) {
        const now = this.services.now();
        const claimed = await claimDueEmail(this.services.db, now, {
          holder: this.holder,
          until: new Date(now.getTime() + this.settings.leaseMs),
        });
        if (!claimed) return;
        handled++;
        report[await this.send(claimed)]++;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.settings.concurrency) }, worker));
    return report;
  }

  private async send(email: ClaimedEmail): Promise<keyof RoundReport> {
    const { db } = this.services;
    let mail: OutgoingMail;
    try {
      mail = await this.compose(email);
    } catch (error) {
      if (!(error instanceof Undeliverable)) throw error;
      await markEmailAttemptFailed(db, email.id, this.holder, error.message, null);
      this.log.error('mail not sent', { email: email.id, to: email.recipient, error: error.message });
      return 'failed';
    }

    let file: string | undefined;
    try {
      ({ file } = await withTimeout(this.delivery.deliver(mail), this.settings.sendTimeoutMs));
    } catch (error) {
      const text = errorText(error);
      const now = this.services.now();
      const attempts = email.attempts + 1;
      const retryAt = isPermanentRejection(error) ? null : nextAttemptAt(this.settings, attempts, email.createdAt, now);
      await markEmailAttemptFailed(db, email.id, this.holder, text, retryAt);
      this.log.error(retryAt ? 'mail delivery failed, will retry' : 'mail delivery failed for good', {
        email: email.id,
        to: email.recipient,
        attempts,
        retryAt: retryAt?.toISOString(),
        error: text,
      });
      return retryAt ? 'retried' : 'failed';
    }

    if (!(await markEmailSent(db, email.id, this.holder, this.services.now()))) {
      // Only when a send outlived the lease and another instance took the message over.
      this.log.error('mail sent after its lease ran out', { email: email.id, to: email.recipient });
    }
    const outbox = this.delivery.kind === 'outbox';
    this.log.info(outbox ? 'mail written to outbox' : 'mail sent', { email: email.id, to: email.recipient, ...(outbox ? { file } : {}) });
    return 'sent';
  }

  /** The message of a claimed row, read now; Undeliverable when its item can no longer be shared. */
  private async compose(email: ClaimedEmail): Promise<OutgoingMail> {
    const { db, config, secret } = this.services;
    const share = await findShareMessageContext(db, email.shareId);
    if (!share) throw new Undeliverable('the share was removed');
    const item = await findSharedTarget(db, share.accountId, { type: share.itemType, id: share.itemId });
    if (!item) throw new Undeliverable(`the shared ${share.itemType} was deleted or moved to the recycle bin`);
    if (item.lock) throw new Undeliverable(`the shared ${share.itemType} was encrypted, or a folder above it was`);
    let extractionCode: string | null = null;
    if (email.extractionCodeSealed !== null) {
      extractionCode = openExtractionCode(secret, email.extractionCodeSealed);
      if (extractionCode === null) throw new Undeliverable('the extraction code cannot be read: the server secret has changed');
    }
    return {
      emailId: email.id,
      from: config.mailFrom,
      to: email.recipient,
      messageId: messageIdOf(secret, email.id, config.mailFrom),
      date: this.services.now(),
      content: shareMessage({
        sharerName: share.accountName,
        itemType: share.itemType,
        itemName: item.record.name,
        url: shareUrl(email.baseUrl, share.code),
        extractionCode,
        language: mailLanguageOf(email.language),
      }),
    };
  }
}
