/**
 * Delivery of e-mail shares through a real SMTP server (smtp-server on 127.0.0.1, started by each
 * test, with AUTH): one message per recipient with the link and the extraction code; a mail server
 * that is down and comes up later gets every message exactly once; two instances never send one
 * message twice; a crashed instance's claim is taken over when its lease runs out; permanent
 * rejections and giving up are visible through GetFileEmailShareInfo. Then the whole service over
 * the wire: FolderEmailShare and GetFolderEmailShareInfo in all four forms.
 */
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { findOperation, type OperationSpec } from '../../src/catalog/operations';
import type { Config } from '../../src/config';
import { createLogger } from '../../src/log';
import type { EmailDelivery, Services } from '../../src/operations/context';
import { fileEmailShare, folderEmailShare, getFileEmailShareInfo } from '../../src/operations/sharing/email-shares';
import { MailSender, messageIdOf, type MailSenderSettings } from '../../src/operations/sharing/mail-queue';
import { fileShare } from '../../src/operations/sharing/shares';
import { claimDueEmail } from '../../src/storage/db/repositories/emails-repository';
import { closeDatabase, openDatabase } from '../../src/storage/db/engine/database';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { openTestServices, type TestServices } from '../helpers/database';
import { freePort, parseMail, smtpUrl, SMTP_PASSWORD, startSmtpServer, type TestSmtpServer } from '../helpers/mail';
import { FORMS, resultXml, type Form } from '../helpers/requests';
import { addFile, addFolder, as, testAccount } from '../helpers/tree';

const signed = { uid: 0n, token: 'test-token', sign: '' };
const MINUTE = 60_000;

async function smtpServer(port = 0, options: Parameters<typeof startSmtpServer>[1] = {}): Promise<TestSmtpServer> {
  const server = await startSmtpServer(port, options);
  onTestFinished(() => server.close());
  return server;
}

/** FSS_PUBLIC_URL: share e-mails are sent only with it, and their links are built on it. */
const PUBLIC_URL = 'https://files.example.com';

async function setUp(config: Partial<Config>): Promise<{ services: TestServices; alice: number }> {
  const services = await openTestServices({ config: { publicUrl: PUBLIC_URL, ...config } });
  return { services, alice: await testAccount(services, 'alice') };
}

function senderFor(services: Services, settings: Partial<MailSenderSettings> = {}) {
  const lines: string[] = [];
  const sender = new MailSender(services, createLogger((line) => lines.push(line)), { settings });
  onTestFinished(() => sender.stop());
  return { sender, lines };
}

const emailFile = (services: Services, accountId: number, fid: number, to: string) =>
  fileEmailShare(as(services, accountId), { ...signed, fid: BigInt(fid), to });

async function statuses(services: Services, accountId: number, fid: number): Promise<EmailDelivery[]> {
  const info = await getFileEmailShareInfo(as(services, accountId), { ...signed, fid: BigInt(fid) });
  const all: EmailDelivery[] = [];
  for await (const email of info.emails) all.push(email);
  return all;
}

async function shareCodeOf(services: Services, fileId: number): Promise<string> {
  const row = await services.db.selectFrom('shares').select('code').where('item_type', '=', 'file').where('item_id', '=', fileId).executeTakeFirstOrThrow();
  return row.code;
}

describe('delivery through SMTP', () => {
  test('FileEmailShare: one message per recipient, from FSS_MAIL_FROM, with the link and the extraction code', async () => {
    const server = await smtpServer();
    const { services, alice } = await setUp({ smtpUrl: server.url, mailFrom: 'Files <files@example.com>' });
    const file = await addFile(services, alice, 0, 'Plan – 2026.pdf', 7);
    await fileShare(as(services, alice), { ...signed, fids: String(file.id), downpwd: 'pA5s', downValue: 0, description: '' });
    await emailFile(services, alice, file.id, 'ann@example.com; bob@example.org');
    const code = await shareCodeOf(services, file.id);

    const { sender, lines } = senderFor(services);
    expect(await sender.sendDue()).toEqual({ sent: 2, retried: 0, failed: 0 });

    expect(server.received.map((mail) => [mail.mailFrom, mail.rcptTo])).toEqual(
      expect.arrayContaining([
        ['files@example.com', ['ann@example.com']],
        ['files@example.com', ['bob@example.org']],
      ]),
    );
    expect(server.received).toHaveLength(2);
    const rows = await services.db.selectFrom('emails').select(['id', 'recipient']).orderBy('id').execute();
    for (const received of server.received) {
      const mail = parseMail(received.raw);
      const row = rows.find((r) => r.recipient === received.rcptTo[0])!;
      expect(mail.headers.get('to')).toBe(row.recipient);
      expect(mail.headers.get('subject')).toBe('alice shared the file "Plan – 2026.pdf" with you');
      expect(mail.headers.get('message-id')).toBe(messageIdOf(services.secret, row.id, 'Files <files@example.com>'));
      // The link is built on FSS_PUBLIC_URL, never on the base URL of the call that queued it (http://fss.test).
      expect(mail.text).toContain(`${PUBLIC_URL}/s/${code}`);
      expect(mail.text).not.toContain('fss.test');
      expect(mail.text).toContain('Extraction code: pA5s');
      expect(mail.html).toContain(`<a href="${PUBLIC_URL}/s/${code}">`);
      expect(mail.html).toContain('Plan – 2026.pdf');
    }
    expect((await statuses(services, alice, file.id)).map((email) => email.status)).toEqual(['sent', 'sent']);
    const log = lines.join('\n');
    expect(log).not.toContain('pA5s');
    expect(log).not.toContain(SMTP_PASSWORD);
  });

  test('FolderEmailShare of a folder without a share: a new open share, and a message without an extraction code', async () => {
    const server = await smtpServer();
    const { services, alice } = await setUp({ smtpUrl: server.url });
    const folder = await addFolder(services, alice, 0, 'Holiday photos');
    await folderEmailShare(as(services, alice), { ...signed, dirid: BigInt(folder.id), to: 'ann@example.com' });
    const { sender } = senderFor(services);
    expect(await sender.sendDue()).toEqual({ sent: 1, retried: 0, failed: 0 });
    const code = (await services.db.selectFrom('shares').select('code').executeTakeFirstOrThrow()).code;
    const mail = parseMail(server.received[0].raw);
    expect(mail.headers.get('subject')).toBe('alice shared the folder "Holiday photos" with you');
    expect(mail.text).toContain(`${PUBLIC_URL}/s/${code}`);
    expect(mail.text).not.toContain('Extraction code');
  });

  test('a mail server that is down when messages are sent and up later gets every message exactly once', async () => {
    const port = await freePort();
    const { services, alice } = await setUp({ smtpUrl: smtpUrl(port) });
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    await emailFile(services, alice, file.id, 'ann@example.com, bob@example.org, carl@example.net');
    const { sender } = senderFor(services);

    // Down: every attempt fails, and is queued again for a minute later, with the error shown.
    expect(await sender.sendDue()).toEqual({ sent: 0, retried: 3, failed: 0 });
    for (const email of await statuses(services, alice, file.id)) {
      expect(email).toMatchObject({ status: 'queued', error: expect.stringContaining('ECONNREFUSED') });
    }

    const server = await smtpServer(port);
    // Up, but nothing is due before its back-off ends.
    expect(await sender.sendDue()).toEqual({ sent: 0, retried: 0, failed: 0 });
    services.clock.advance(MINUTE);
    expect(await sender.sendDue()).toEqual({ sent: 3, retried: 0, failed: 0 });
    for (let i = 0; i < 5; i++) {
      services.clock.advance(60 * MINUTE);
      expect(await sender.sendDue()).toEqual({ sent: 0, retried: 0, failed: 0 });
    }

    expect(server.received.map((mail) => mail.rcptTo[0]).sort()).toEqual(['ann@example.com', 'bob@example.org', 'carl@example.net']);
    expect((await statuses(services, alice, file.id)).map((email) => [email.status, email.error])).toEqual([
      ['sent', undefined],
      ['sent', undefined],
      ['sent', undefined],
    ]);
  });

  test('a mail server that never comes up: the messages fail after a day, with the last error', async () => {
    const port = await freePort();
    const { services, alice } = await setUp({ smtpUrl: smtpUrl(port) });
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    await emailFile(services, alice, file.id, 'ann@example.com');
    const { sender } = senderFor(services);
    const queuedAt = services.now().getTime();
    for (let round = 0; round < 40; round++) {
      await sender.sendDue();
      const row = await services.db.selectFrom('emails').select(['status', 'next_attempt_at']).executeTakeFirstOrThrow();
      if (row.status !== 'queued') break;
      services.clock.set(new Date(row.next_attempt_at));
    }
    const [email] = await statuses(services, alice, file.id);
    expect(email).toMatchObject({ status: 'failed', error: expect.stringContaining('ECONNREFUSED') });
    expect(services.now().getTime() - queuedAt).toBeGreaterThan(22 * 60 * MINUTE);
    expect(services.now().getTime() - queuedAt).toBeLessThanOrEqual(24 * 60 * MINUTE);
  });

  test('a recipient the mail server rejects (550) fails at once with its answer; the others are delivered', async () => {
    const server = await smtpServer(0, { rejectRecipients: ['nobody@example.com'] });
    const { services, alice } = await setUp({ smtpUrl: server.url });
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    await emailFile(services, alice, file.id, 'nobody@example.com, ann@example.com');
    const { sender } = senderFor(services, { concurrency: 1 });
    expect(await sender.sendDue()).toEqual({ sent: 1, retried: 0, failed: 1 });
    expect(await statuses(services, alice, file.id)).toMatchObject([
      { to: 'nobody@example.com', status: 'failed', error: expect.stringContaining('550') },
      { to: 'ann@example.com', status: 'sent' },
    ]);
    expect(server.received.map((mail) => mail.rcptTo)).toEqual([['ann@example.com']]);
  });

  test('a wrong SMTP password is retried (the settings can be fixed) and never logged', async () => {
    const server = await smtpServer();
    const wrong = server.url.replace(encodeURIComponent(SMTP_PASSWORD), 'wrong-password');
    const { services, alice } = await setUp({ smtpUrl: wrong });
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    await emailFile(services, alice, file.id, 'ann@example.com');
    const { sender, lines } = senderFor(services);
    expect(await sender.sendDue()).toEqual({ sent: 0, retried: 1, failed: 0 });
    expect((await statuses(services, alice, file.id))[0]).toMatchObject({ status: 'queued', error: expect.stringMatching(/login|auth/i) });
    expect(lines.join('\n')).not.toContain('wrong-password');
    expect(server.received).toEqual([]);
  });

  test('two instances sending from one database at once deliver each message exactly once', async () => {
    const server = await smtpServer();
    const { services, alice } = await setUp({ smtpUrl: server.url });
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const recipients = Array.from({ length: 20 }, (_, i) => `r${i}@example.com`);
    await emailFile(services, alice, file.id, recipients.join(','));

    // The second instance has its own connection to the same SQLite file, as another process would.
    const otherDb = await openDatabase(services.config);
    onTestFinished(() => closeDatabase(otherDb));
    const first = senderFor(services, { concurrency: 3 });
    const second = senderFor({ ...services, db: otherDb }, { concurrency: 3 });
    const [a, b] = await Promise.all([first.sender.sendDue(), second.sender.sendDue()]);

    expect(a.sent + b.sent).toBe(20);
    expect(server.received.map((mail) => mail.rcptTo[0]).sort()).toEqual([...recipients].sort());
    expect(new Set(server.received.map((mail) => parseMail(mail.raw).headers.get('message-id'))).size).toBe(20);
  });

  test("a message claimed by an instance that died is sent by another once the lease runs out, with the same Message-ID", async () => {
    const server = await smtpServer();
    const { services, alice } = await setUp({ smtpUrl: server.url });
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    await emailFile(services, alice, file.id, 'ann@example.com, bob@example.org');
    const { sender } = senderFor(services, { leaseMs: 5 * MINUTE });

    const dead = await claimDueEmail(services.db, services.now(), { holder: 'dead-instance', until: new Date(services.now().getTime() + 5 * MINUTE) });
    expect(await sender.sendDue()).toEqual({ sent: 1, retried: 0, failed: 0 });
    services.clock.advance(4 * MINUTE);
    expect(await sender.sendDue()).toEqual({ sent: 0, retried: 0, failed: 0 });
    services.clock.advance(MINUTE + 1);
    expect(await sender.sendDue()).toEqual({ sent: 1, retried: 0, failed: 0 });

    const late = server.received.find((mail) => mail.rcptTo[0] === dead!.recipient)!;
    expect(parseMail(late.raw).headers.get('message-id')).toBe(messageIdOf(services.secret, dead!.id, services.config.mailFrom));
    expect(server.received).toHaveLength(2);
  });
});

// ---- Over the wire -----------------------------------------------------------------------------------

const op = (name: string): OperationSpec => findOperation('FileService', name)!;
const FolderEmailShare = op('FolderEmailShare');
const GetFolderEmailShareInfo = op('GetFolderEmailShareInfo');
const FileEmailShare = op('FileEmailShare');
const GetFileEmailShareInfo = op('GetFileEmailShareInfo');

function emailsIn(xml: string): Array<Record<string, string>> {
  return [...xml.matchAll(/<email\b[^>]*\/>/g)].map((match) => element(match[0], 'email')!.attrs);
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('over the wire, with the SMTP server', () => {
  let server: TestSmtpServer;
  let app: TestApp;
  let aliceId: number;
  let bobId: number;

  beforeAll(async () => {
    server = await startSmtpServer();
    app = await startTestApp({ FSS_SMTP_URL: server.url, FSS_MAIL_FROM: 'files@example.com', FSS_PUBLIC_URL: PUBLIC_URL });
    aliceId = await addAccount(app, 'alice', 'alice-password-1');
    bobId = await addAccount(app, 'bob', 'bob-password-1');
  });
  afterAll(async () => {
    await app.close();
    await server.close();
  });

  /** Received by the SMTP server and marked sent. */
  async function sentTo(recipient: string): Promise<boolean> {
    if (!server.received.some((mail) => mail.rcptTo[0] === recipient)) return false;
    const row = await app.app.services.db.selectFrom('emails').select('status').where('recipient', '=', recipient).executeTakeFirst();
    return row?.status === 'sent';
  }

  describe.each(FORMS)('%s', (form: Form) => {
    let alice: Session;
    beforeAll(async () => {
      alice = await logIn(app, form, 'alice', 'alice-password-1');
    });

    test('FolderEmailShare answers code 0, the message is sent at once, and GetFolderEmailShareInfo shows the share and the recipient', async () => {
      const folder = await addFolder(app.app.services, aliceId, 0, `Shared ${form}`);
      const to = `friend-${form}@example.com`;
      const answer = await callSigned(app, form, FolderEmailShare, alice, { dirid: folder.id, to: ` ${to} ; ${to.toUpperCase()} ` });
      expect(answer.status).toBe(200);
      expect(element(resultXml(answer, FolderEmailShare), 'result')!.attrs).toMatchObject({ code: '0', msg: '' });

      // The sender is nudged: no waiting for its next round (5 s).
      await until(() => sentTo(to), `the message to ${to}`, 3_000);

      const info = await callSigned(app, form, GetFolderEmailShareInfo, alice, { dirid: folder.id });
      const xml = resultXml(info, GetFolderEmailShareInfo);
      expect(element(xml, 'result')!.attrs).toMatchObject({ code: '0', msg: '', count: '1' });
      const shared = element(xml, 'folder')!.attrs;
      expect(shared).toMatchObject({ id: String(folder.id), name: `Shared ${form}`, shared: '1', downpwd: '', downValue: '0', downloads: '0' });
      expect(shared.url).toBe(`${PUBLIC_URL}/s/${shared.code}`);
      const emails = emailsIn(xml);
      expect(emails).toHaveLength(1);
      expect(emails[0]).toMatchObject({ to, status: 'sent' });
      expect(emails[0].time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(emails[0]).not.toHaveProperty('error');

      const mail = parseMail(server.received.find((m) => m.rcptTo[0] === to)!.raw);
      expect(mail.text).toContain(shared.url);
    });

    test('FolderEmailShare refuses a bad address with 400 naming it, and another account\'s folder with 404', async () => {
      const folder = await addFolder(app.app.services, aliceId, 0, `Refused ${form}`);
      const bad = await callSigned(app, form, FolderEmailShare, alice, { dirid: folder.id, to: 'ok@example.com, not an address' });
      expect(element(resultXml(bad, FolderEmailShare), 'result')!.attrs).toMatchObject({ code: '400' });
      expect(element(resultXml(bad, FolderEmailShare), 'result')!.attrs.msg).toContain('"not an address"');
      // A line feed (XML turns a CR sent as itself into LF; the operations tests cover CR).
      const injection = await callSigned(app, form, FolderEmailShare, alice, { dirid: folder.id, to: 'ok@example.com\nBcc: eve@example.com' });
      expect(element(resultXml(injection, FolderEmailShare), 'result')!.attrs).toMatchObject({ code: '400' });
      const bobs = await addFolder(app.app.services, bobId, 0, `Bob's ${form}`);
      const foreign = await callSigned(app, form, FolderEmailShare, alice, { dirid: bobs.id, to: 'ok@example.com' });
      expect(element(resultXml(foreign, FolderEmailShare), 'result')!.attrs).toMatchObject({ code: '404' });
      const info = await callSigned(app, form, GetFolderEmailShareInfo, alice, { dirid: folder.id });
      const xml = resultXml(info, GetFolderEmailShareInfo);
      expect(element(xml, 'result')!.attrs).toMatchObject({ code: '0', msg: '', count: '0' });
      expect(element(xml, 'folder')!.attrs).toMatchObject({ shared: '0' });
      expect(emailsIn(xml)).toEqual([]);
    });
  });

  test('FileEmailShare and GetFileEmailShareInfo (ext) over HTTP POST', async () => {
    const alice = await logIn(app, 'post', 'alice', 'alice-password-1');
    const file = await addFile(app.app.services, aliceId, 0, 'notes.txt', 3);
    const answer = await callSigned(app, 'post', FileEmailShare, alice, { fid: file.id, to: 'reader@example.com' });
    expect(element(resultXml(answer, FileEmailShare), 'result')!.attrs).toEqual({ code: '0', msg: '' });
    await until(() => sentTo('reader@example.com'), 'the message to reader@example.com', 3_000);
    const info = resultXml(await callSigned(app, 'post', GetFileEmailShareInfo, alice, { fid: file.id }), GetFileEmailShareInfo);
    expect(element(info, 'file')!.attrs).toMatchObject({ id: String(file.id), name: 'notes.txt', shared: '1' });
    expect(emailsIn(info)).toMatchObject([{ to: 'reader@example.com', status: 'sent' }]);
  });

  test.each(FORMS)('a share e-mail is written in the Accept-Language of the call that queued it: zh-CN in Chinese, over %s', async (form) => {
    const alice = await logIn(app, form, 'alice', 'alice-password-1');
    const file = await addFile(app.app.services, aliceId, 0, `报告 ${form}.pdf`, 3);
    const to = `zh-${form}@example.com`;
    const answer = await callSigned(app, form, FileEmailShare, alice, { fid: file.id, to }, { 'Accept-Language': 'zh-CN,zh;q=0.9,en;q=0.8' });
    expect(element(resultXml(answer, FileEmailShare), 'result')!.attrs).toMatchObject({ code: '0', msg: '' });
    await until(() => sentTo(to), `the message to ${to}`, 3_000);
    const mail = parseMail(server.received.find((m) => m.rcptTo[0] === to)!.raw);
    expect(mail.headers.get('subject')).toBe(`alice 与你分享了文件“报告 ${form}.pdf”`);
    expect(mail.text).toContain('打开链接：');
    expect(mail.html).toContain('<html lang="zh-CN">');
    expect(mail.text).not.toContain('shared');
  });
});
