/**
 * Kills while share e-mails are queued and sent: the client shares one file by e-mail to three new
 * recipients per call (FileEmailShare), over and over, while the service's sender delivers them to
 * a real SMTP server (smtp-server on 127.0.0.1, in the test process).
 *
 * What the service guarantees, and this checks (docs/protocol.md §16.3–16.4, docs/reliability.md):
 *
 * - **Queueing is all or nothing**: an acknowledged call has a row for each of its recipients; the
 *   unacknowledged one has all three or none; there is no other row.
 * - **At least once**: a row marked `sent` was accepted by the SMTP server (it is marked after the
 *   acceptance); every acknowledged message is delivered in the end. A message the dead instance
 *   had claimed waits for its lease (5 minutes) to run out; at the end an instance running later
 *   (the sender in this process, on a clock 6 minutes ahead) delivers those.
 * - **Duplicates only from a kill**: a message is delivered twice only when the kill came between
 *   the SMTP server's acceptance and the row's update, so there are at most as many duplicates as
 *   the sender had messages under way at the kills (4 per kill), and every copy carries the same
 *   Message-ID.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/log';
import { passwordHashQueue } from '../../../src/operations/crypto/hash-queue';
import { callCaches } from '../../../src/operations/caches';
import { MailSender, smtpDelivery } from '../../../src/operations/sharing/mail-queue';
import { closeDatabase, openDatabase } from '../../../src/storage/db/engine/database';
import { loadServerSecret } from '../../../src/storage/secret';
import { parseMail, type TestSmtpServer } from '../../helpers/mail';
import { ok, Ops } from './client';
import { waitFor, type Scenario, type ScenarioContext } from './harness';
import { TreeClient } from './tree-client';

const RECIPIENTS_PER_CALL = 3;
/** The sender's messages under way at once (mail-queue.ts defaultMailSenderSettings.concurrency). */
const SENDING_AT_ONCE = 4;

interface EmailState {
  readonly client: TreeClient;
  fileId: number;
  /** Recipients of acknowledged calls. */
  readonly acknowledged: Set<string>;
  /** The recipients of the call under way. */
  pending: string[] | null;
  calls: number;
  readonly stats: { unacknowledgedQueued: number; unacknowledgedNot: number };
}

const states = new WeakMap<ScenarioContext, EmailState>();

interface Row {
  id: number;
  recipient: string;
  status: string;
  /** The lease holder: `host:pid:random` of the instance's sender. */
  locked_by: string | null;
}

function emailRows(ctx: ScenarioContext): Row[] {
  const db = new Database(path.join(ctx.dataDir, 'fss.sqlite'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return db.prepare('select id, recipient, status, locked_by from emails order by id').all() as Row[];
  } finally {
    db.close();
  }
}

/** Received copies per recipient, each with its Message-ID. */
function received(smtp: TestSmtpServer): Map<string, string[]> {
  const copies = new Map<string, string[]>();
  for (const mail of smtp.received) {
    const id = parseMail(mail.raw).headers.get('message-id') ?? '';
    for (const to of mail.rcptTo) copies.set(to, [...(copies.get(to) ?? []), id]);
  }
  return copies;
}

/** The queue is what the acknowledged calls made (and the one under way wholly or not at all). */
function checkQueue(ctx: ScenarioContext, state: EmailState, smtp: TestSmtpServer): Row[] {
  const rows = emailRows(ctx);
  const queued = new Set(rows.map((row) => row.recipient));
  if (queued.size !== rows.length) throw new Error(`a recipient has two rows: ${JSON.stringify(rows)}`);
  for (const recipient of state.acknowledged) if (!queued.has(recipient)) throw new Error(`acknowledged e-mail to ${recipient} is not in the queue`);
  if (state.pending) {
    const present = state.pending.filter((r) => queued.has(r));
    if (present.length !== 0 && present.length !== state.pending.length) throw new Error(`an unacknowledged call queued ${present.length} of its ${state.pending.length} messages`);
    if (present.length > 0) {
      for (const r of state.pending) state.acknowledged.add(r);
      state.stats.unacknowledgedQueued++;
    } else {
      state.stats.unacknowledgedNot++;
    }
    state.pending = null;
  }
  for (const recipient of queued) if (!state.acknowledged.has(recipient)) throw new Error(`a message to ${recipient} is queued that no call asked for`);
  const copies = received(smtp);
  for (const row of rows) if (row.status === 'sent' && !copies.has(row.recipient)) throw new Error(`email ${row.id} to ${row.recipient} is marked sent but never reached the SMTP server`);
  for (const row of rows) if (row.status === 'failed') throw new Error(`email ${row.id} to ${row.recipient} failed`);
  for (const [to, ids] of copies) {
    if (!queued.has(to)) throw new Error(`the SMTP server got a message to ${to}, which no row holds`);
    if (new Set(ids).size !== 1) throw new Error(`the copies to ${to} carry different Message-IDs: ${ids.join(' ')}`);
  }
  return rows;
}

/** A sender of another instance that runs 6 minutes later: it may take over the dead instances' leases. */
async function sendAsALaterInstance(ctx: ScenarioContext, smtp: TestSmtpServer): Promise<number> {
  const config = { ...loadConfig({ FSS_DATA_DIR: ctx.dataDir }), log: () => {} };
  const db = await openDatabase(config);
  try {
    const later = () => new Date(Date.now() + 6 * 60_000);
    const services = { db, config, now: later, secret: await loadServerSecret(config), passwordHashes: passwordHashQueue(config), caches: callCaches(config) };
    const sender = new MailSender(services, createLogger(() => {}), { delivery: smtpDelivery(smtp.url) });
    // A round sends at most maxPerRound messages; a long campaign leaves more than that to take over.
    let sent = 0;
    for (let round = 0; round < 1_000; round++) {
      const report = await sender.sendDue();
      sent += report.sent;
      if (report.sent + report.retried + report.failed === 0) break;
    }
    await sender.stop();
    return sent;
  } finally {
    await closeDatabase(db);
  }
}

export function emailScenario(smtp: TestSmtpServer): Scenario {
  return {
    name: 'e-mails',
    env: {
      // Share e-mails are sent only with a public address (the links are not followed here).
      FSS_PUBLIC_URL: 'https://files.example.com',
      FSS_SMTP_URL: smtp.url,
      FSS_EMAIL_RECIPIENTS_PER_HOUR: '1000000',
      FSS_EMAIL_RECIPIENTS_PER_DAY: '1000000',
    },
    minDelayMs: 5,
    maxDelayMs: 300,
    async prepare(ctx) {
      const client = new TreeClient(ctx);
      await client.uploadOriginals(1);
      const fileId = await client.addFile(0, 'shared report.txt', client.contents[0]);
      states.set(ctx, { client, fileId, acknowledged: new Set(), pending: null, calls: 0, stats: { unacknowledgedQueued: 0, unacknowledgedNot: 0 } });
    },
    async work(ctx) {
      const state = states.get(ctx)!;
      for (;;) {
        const call = ++state.calls;
        const recipients = Array.from({ length: RECIPIENTS_PER_CALL }, (_, i) => `r${call}-${i}@example.com`);
        state.pending = recipients;
        await ok(ctx.server.url, Ops.FileEmailShare, ctx.session, { fid: state.fileId, to: recipients.join('; ') });
        for (const r of recipients) state.acknowledged.add(r);
        state.pending = null;
        await new Promise((resolve) => setTimeout(resolve, ctx.random.int(0, 20)));
      }
    },
    async verify(ctx) {
      const state = states.get(ctx)!;
      await state.client.verify();
      checkQueue(ctx, state, smtp);
    },
    async finish(ctx) {
      const state = states.get(ctx)!;
      // The running instance sends whatever it may: every row sent but those that killed instances held.
      const heldByADeadInstance = (row: Row) => row.locked_by !== null && !row.locked_by.includes(`:${ctx.server.pid}:`);
      // Drained, or still sending: a long campaign leaves thousands queued, so what must not pass
      // is a minute without one more message sent, not a minute in all.
      const waiting = () => emailRows(ctx).filter((row) => row.status !== 'sent' && !heldByADeadInstance(row)).length;
      let left = waiting();
      let progressed = performance.now();
      await waitFor(
        'the queue to drain',
        () => {
          const now = waiting();
          if (now < left) [left, progressed] = [now, performance.now()];
          if (now > 0 && performance.now() - progressed > 60_000) throw new Error(`the queue stopped draining with ${now} messages left`);
          return now === 0;
        },
        Number.POSITIVE_INFINITY,
        50,
      );
      const heldByTheDead = emailRows(ctx).filter((row) => row.status !== 'sent').length;
      const takenOver = await sendAsALaterInstance(ctx, smtp);
      const rows = checkQueue(ctx, state, smtp);
      const unsent = rows.filter((row) => row.status !== 'sent');
      if (unsent.length > 0) throw new Error(`messages never sent: ${JSON.stringify(unsent)}`);
      const copies = received(smtp);
      const duplicates = [...copies.values()].reduce((n, ids) => n + ids.length - 1, 0);
      if (duplicates > ctx.round * SENDING_AT_ONCE) throw new Error(`${duplicates} duplicate deliveries for ${ctx.round} kills`);
      ctx.log(
        `${rows.length} messages queued by ${state.calls} calls, all delivered; ${heldByTheDead} were held by a killed instance and sent ${takenOver > 0 ? 'by a later one' : ''} (${takenOver}); ` +
          `duplicates: ${duplicates}; unacknowledged calls queued ${state.stats.unacknowledgedQueued}, not ${state.stats.unacknowledgedNot}`,
      );
    },
  };
}
