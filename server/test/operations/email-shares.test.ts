/**
 * E-mail sharing (DECISIONS.md §10) on a real SQLite file with a test clock: FileEmailShare and
 * FolderEmailShare queue one message per recipient and share the item; every refusal (bad
 * addresses, too many, header injection, another account's item, encrypted items, the sending
 * limit) queues nothing; Get*EmailShareInfo shows each recipient's status; the sender writes the
 * outbox when no SMTP server is configured. Delivery through a real SMTP server is in
 * test/mail/smtp-delivery.test.ts.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ConfigError, defaultLimits, loadConfig, type Config } from '../../src/config';
import { createLogger } from '../../src/log';
import type { EmailDelivery, EmailShareInfo, Services } from '../../src/operations/context';
import {
  addressProblem,
  fileEmailShare,
  folderEmailShare,
  getFileEmailShareInfo,
  getFolderEmailShareInfo,
  parseRecipients,
  PUBLIC_URL_UNSET,
} from '../../src/operations/sharing/email-shares';
import { ResultCode } from '../../src/operations/errors';
import { mailLanguageOf, shareMessage } from '../../src/operations/sharing/mail-messages';
import { MailSender, nextAttemptAt, defaultMailSenderSettings } from '../../src/operations/sharing/mail-queue';
import { moveToBin } from '../../src/operations/tree/recycle-bin';
import { fileShare, unshare } from '../../src/operations/sharing/shares';
import { openTestServices, type TestServices } from '../helpers/database';
import { parseMail } from '../helpers/mail';
import { rejected } from '../helpers/refusals';
import { addFile, addFolder, as, testAccount } from '../helpers/tree';

const signed = { uid: 0n, token: 'test-token', sign: '' };
const HOUR = 3_600_000;

const emailFile = (services: Services, accountId: number, fid: number, to: string | null) =>
  fileEmailShare(as(services, accountId), { ...signed, fid: BigInt(fid), to });
const emailFolder = (services: Services, accountId: number, dirid: number, to: string | null) =>
  folderEmailShare(as(services, accountId), { ...signed, dirid: BigInt(dirid), to });
const fileInfo = (services: Services, accountId: number, fid: number) =>
  getFileEmailShareInfo(as(services, accountId), { ...signed, fid: BigInt(fid) });
const folderInfo = (services: Services, accountId: number, dirid: number) =>
  getFolderEmailShareInfo(as(services, accountId), { ...signed, dirid: BigInt(dirid) });

async function deliveries(info: EmailShareInfo): Promise<EmailDelivery[]> {
  const all: EmailDelivery[] = [];
  for await (const email of info.emails) all.push(email);
  return all;
}

async function queued(services: Services) {
  return services.db.selectFrom('emails').selectAll().orderBy('id').execute();
}

async function shareCount(services: Services): Promise<number> {
  return (await services.db.selectFrom('shares').select('id').execute()).length;
}

/** FSS_PUBLIC_URL: share e-mails take their links from it, never from the call's own base (http://fss.test). */
const PUBLIC_URL = 'https://files.example.com';

async function setUp(config: Partial<Config> = {}): Promise<{ services: TestServices; alice: number; bob: number }> {
  const services = await openTestServices({ config: { publicUrl: PUBLIC_URL, ...config } });
  return { services, alice: await testAccount(services, 'alice'), bob: await testAccount(services, 'bob') };
}

function senderFor(services: Services) {
  const lines: string[] = [];
  const sender = new MailSender(services, createLogger((line) => lines.push(line)), { settings: { concurrency: 1 } });
  return { sender, lines };
}

const outbox = (services: Services) => path.join(services.config.dataDir, 'outbox');

describe('recipients', () => {
  test('addresses are separated by , or ; with spaces and tabs around them, and duplicates collapse case-insensitively', () => {
    expect(parseRecipients(' ann@example.com ;bob@example.org,\tAnn@Example.com ; ; carl.d+tag@mail.example.co.uk,', 20)).toEqual([
      'ann@example.com',
      'bob@example.org',
      'carl.d+tag@mail.example.co.uk',
    ]);
  });

  test.each([
    ['bob', 'has no @'],
    ['bob@', 'has no domain after the @'],
    ['@example.com', 'has nothing before the @'],
    ['bob@localhost', 'has a domain without a dot'],
    ['bob smith@example.com', 'has characters before the @'],
    ['bob@exa mple.com', 'has an invalid domain'],
    ['bob@example..com', 'has an invalid domain'],
    ['bob@-example.com', 'has an invalid domain'],
    ['.bob@example.com', 'has characters before the @'],
    ['bob..smith@example.com', 'has characters before the @'],
    ['"bob"@example.com', 'has characters before the @'],
    ['bob@[127.0.0.1]', 'has an invalid domain'],
    ['bob@127.0.0.1', 'has an invalid domain'],
    ['b<ob>@example.com', 'has characters before the @'],
    [`${'a'.repeat(65)}@example.com`, 'has more than 64 characters before the @'],
    [`bob@${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.eeee.com`, 'is longer than 254 characters'],
  ])('%s is refused: it %s', (address, problem) => {
    expect(addressProblem(address)).toContain(problem);
  });

  test('internationalized domains are accepted', () => {
    expect(addressProblem('hans@bücher.example')).toBeNull();
  });

  test.each(['hans@bücher.example/x', 'hans@bücher.example?x', 'hans@bücher.example#x', 'hans@bücher.example\\x', 'hans@bü%63her.example'])(
    '%s is refused: an internationalized domain is not read as a URL host that stops early or decodes %%xx',
    (address) => {
      expect(addressProblem(address)).toBe('has an invalid domain');
    },
  );

  test('a bad address is a 400 that names it', async () => {
    const error = await rejected(Promise.resolve().then(() => parseRecipients('ann@example.com, bob@@example.com', 20)));
    expect(error.code).toBe(ResultCode.InvalidArgument);
    expect(error.message).toContain('"bob@@example.com" is not a valid e-mail address');
  });

  test('a line break anywhere is a 400 that shows it, never a header', async () => {
    for (const to of ['ann@example.com\r\nBcc: eve@example.com', 'ann@example.com\n', '\rann@example.com', 'ann@example.com;\nbob@example.com', 'ann\u0000@example.com']) {
      const error = await rejected(Promise.resolve().then(() => parseRecipients(to, 20)));
      expect(error.code).toBe(ResultCode.InvalidArgument);
      expect(error.message).toMatch(/line break or another control character/);
      expect(error.message).not.toMatch(/[\r\n\u0000]/);
    }
  });

  test('empty, nothing but separators, and more than the limit are 400', async () => {
    for (const to of [null, '', ' ', ' ; , ']) {
      expect((await rejected(Promise.resolve().then(() => parseRecipients(to, 20)))).message).toBe('to holds no e-mail address');
    }
    const many = Array.from({ length: 21 }, (_, i) => `r${i}@example.com`).join(';');
    expect((await rejected(Promise.resolve().then(() => parseRecipients(many, 20)))).message).toBe('to holds 21 e-mail addresses; at most 20 are allowed');
    expect(parseRecipients(Array.from({ length: 20 }, (_, i) => `r${i}@example.com`).join(','), 20)).toHaveLength(20);
    // Twenty-one entries that are twenty addresses are twenty.
    expect(parseRecipients(`${Array.from({ length: 20 }, (_, i) => `r${i}@example.com`).join(',')},R0@EXAMPLE.COM`, 20)).toHaveLength(20);
  });
});

describe('FileEmailShare and FolderEmailShare', () => {
  test('queue one message per recipient, share the item, and show them queued in Get*EmailShareInfo', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'report.pdf', 10);
    expect(await emailFile(services, alice, file.id, 'ann@example.com; bob@example.org')).toEqual({ kind: 'empty' });

    const rows = await queued(services);
    expect(rows.map((row) => [row.recipient, row.status, row.attempts, row.base_url])).toEqual([
      ['ann@example.com', 'queued', 0, PUBLIC_URL],
      ['bob@example.org', 'queued', 0, PUBLIC_URL],
    ]);
    // An open share: no extraction code is kept with the messages.
    expect(rows.every((row) => row.extraction_code_sealed === null)).toBe(true);

    const info = await fileInfo(services, alice, file.id);
    expect(info.count).toBe(2);
    expect(info.item).toMatchObject({ type: 'file', id: file.id, name: 'report.pdf', shared: true });
    expect(info.item.share).toMatchObject({ downpwd: '', downValue: 0, downloads: 0 });
    expect(info.item.share!.url).toBe(`http://fss.test/s/${info.item.share!.code}`);
    expect(await deliveries(info)).toEqual([
      { to: 'ann@example.com', time: services.now(), status: 'queued', error: undefined },
      { to: 'bob@example.org', time: services.now(), status: 'queued', error: undefined },
    ]);
  });

  test('without FSS_PUBLIC_URL: 503 with reason public-url-unset, before anything else, and nothing changes', async () => {
    const { services, alice } = await setUp({ publicUrl: undefined });
    const file = await addFile(services, alice, 0, 'report.pdf', 10);
    const folder = await addFolder(services, alice, 0, 'Docs');
    for (const call of [
      () => emailFile(services, alice, file.id, 'ann@example.com'),
      () => emailFolder(services, alice, folder.id, 'ann@example.com'),
      () => emailFile(services, alice, file.id, 'not an address'),
    ]) {
      const refusal = await rejected(call());
      expect(refusal.code).toBe(ResultCode.Unavailable);
      expect(refusal.reason).toBe(PUBLIC_URL_UNSET);
    }
    expect(await shareCount(services)).toBe(0);
    expect(await queued(services)).toEqual([]);
    expect(await services.db.selectFrom('email_sends').selectAll().execute()).toEqual([]);
  });

  test('sharing again by e-mail keeps the one share and adds to its messages', async () => {
    const { services, alice } = await setUp();
    const folder = await addFolder(services, alice, 0, 'Photos');
    await emailFolder(services, alice, folder.id, 'ann@example.com');
    const code = (await folderInfo(services, alice, folder.id)).item.share!.code;
    services.clock.advance(1000);
    await emailFolder(services, alice, folder.id, 'ann@example.com, carl@example.net');
    const info = await folderInfo(services, alice, folder.id);
    expect(info.item.share!.code).toBe(code);
    expect((await deliveries(info)).map((email) => email.to)).toEqual(['ann@example.com', 'ann@example.com', 'carl@example.net']);
    expect(await shareCount(services)).toBe(1);
  });

  test('an item shared with an extraction code keeps the code, sealed, with each message', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'secret.txt', 5);
    await fileShare(as(services, alice), { ...signed, fids: String(file.id), downpwd: 'ab12', downValue: 3, description: '' });
    await emailFile(services, alice, file.id, 'ann@example.com');
    const [row] = await queued(services);
    expect(row.extraction_code_sealed).toMatch(/^v1\./);
    expect(row.extraction_code_sealed).not.toContain('ab12');
    expect((await fileInfo(services, alice, file.id)).item.share).toMatchObject({ downpwd: 'ab12', downValue: 3 });
  });

  test('a refused call queues nothing and creates no share: bad address, 21 recipients, CR/LF injection', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const folder = await addFolder(services, alice, 0, 'F');
    const many = Array.from({ length: 21 }, (_, i) => `r${i}@example.com`).join(',');
    for (const to of ['ann@example.com, not-an-address', many, 'ann@example.com\r\nBcc: eve@example.com', '']) {
      expect((await rejected(emailFile(services, alice, file.id, to))).code).toBe(ResultCode.InvalidArgument);
      expect((await rejected(emailFolder(services, alice, folder.id, to))).code).toBe(ResultCode.InvalidArgument);
    }
    expect(await queued(services)).toEqual([]);
    expect(await shareCount(services)).toBe(0);
    expect((await fileInfo(services, alice, file.id)).item.shared).toBe(false);
  });

  test("another account's item, an item in the bin and a missing id are 404, and nothing is queued", async () => {
    const { services, alice, bob } = await setUp();
    const bobsFile = await addFile(services, bob, 0, 'b.txt', 1);
    const bobsFolder = await addFolder(services, bob, 0, 'B');
    const binned = await addFile(services, alice, 0, 'gone.txt', 1);
    await moveToBin(services, alice, { folderIds: [], fileIds: [binned.id] });
    // Awaited together: they run at once on a PostgreSQL pool, so none may reject unobserved.
    const refusals = await Promise.all(
      [
        emailFile(services, alice, bobsFile.id, 'ann@example.com'),
        emailFolder(services, alice, bobsFolder.id, 'ann@example.com'),
        emailFile(services, alice, binned.id, 'ann@example.com'),
        emailFile(services, alice, 999_999, 'ann@example.com'),
        emailFolder(services, alice, 0, 'ann@example.com'),
        fileInfo(services, alice, bobsFile.id),
        folderInfo(services, alice, bobsFolder.id),
      ].map(rejected),
    );
    for (const refusal of refusals) expect(refusal.code).toBe(ResultCode.NotFound);
    expect(await queued(services)).toEqual([]);
    expect(await shareCount(services)).toBe(0);
  });

  test('an encrypted item, or one beneath an encrypted folder, is 423 with the id of what is encrypted', async () => {
    const { services, alice } = await setUp();
    const outer = await addFolder(services, alice, 0, 'Vault');
    const inner = await addFolder(services, alice, outer.id, 'Inner');
    const beneath = await addFile(services, alice, inner.id, 'deep.txt', 1);
    const file = await addFile(services, alice, 0, 'own.txt', 1);
    await services.db.updateTable('folders').set({ encrypted: 1 }).where('id', '=', outer.id).execute();
    await services.db.updateTable('files').set({ encrypted: 1 }).where('id', '=', file.id).execute();

    for (const [refusal, lockedId] of [
      [() => emailFolder(services, alice, outer.id, 'ann@example.com'), outer.id],
      [() => emailFolder(services, alice, inner.id, 'ann@example.com'), outer.id],
      [() => emailFile(services, alice, beneath.id, 'ann@example.com'), outer.id],
      [() => emailFile(services, alice, file.id, 'ann@example.com'), file.id],
    ] as const) {
      const error = await rejected(refusal());
      expect(error.code).toBe(ResultCode.Locked);
      expect(error.details).toMatchObject({ id: lockedId });
    }
    expect(await queued(services)).toEqual([]);
    expect(await shareCount(services)).toBe(0);
  });
});

describe('the sending limit', () => {
  const limits = { ...defaultLimits, maxEmailRecipientsPerHour: 5, maxEmailRecipientsPerDay: 8 };

  test('beyond the recipients allowed in an hour: 429 with retryAfter until the call fits, and nothing queued', async () => {
    const { services, alice } = await setUp({ limits });
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    await emailFile(services, alice, file.id, 'r1@example.com, r2@example.com');
    services.clock.advance(10 * 60_000);
    await emailFile(services, alice, file.id, 'r3@example.com, r4@example.com');
    services.clock.advance(5 * 60_000);

    const error = await rejected(emailFile(services, alice, file.id, 'r5@example.com, r6@example.com'));
    expect(error.code).toBe(ResultCode.TooManyAttempts);
    expect(error.message).toBe('too many e-mail recipients: at most 5 in an hour');
    // The first call's two recipients leave the hour 45 minutes from now; then 2 + 2 ≤ 5.
    expect(error.details).toEqual({ retryAfter: 45 * 60 });
    expect(await queued(services)).toHaveLength(4);

    // One more still fits now; the refused call counted nothing.
    await emailFile(services, alice, file.id, 'r5@example.com');
    services.clock.advance(45 * 60_000);
    await emailFile(services, alice, file.id, 'r6@example.com, r7@example.com');
    expect(await queued(services)).toHaveLength(7);
  });

  test('beyond the recipients allowed in a day: 429 until the oldest leave the day', async () => {
    const { services, alice } = await setUp({ limits });
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    for (let i = 0; i < 4; i++) {
      await emailFile(services, alice, file.id, `a${i}@example.com, b${i}@example.com`);
      services.clock.advance(2 * HOUR);
    }
    const error = await rejected(emailFile(services, alice, file.id, 'c@example.com'));
    expect(error.message).toBe('too many e-mail recipients: at most 8 in a day');
    expect(error.details).toEqual({ retryAfter: 16 * 3600 });
    services.clock.advance(16 * HOUR);
    await emailFile(services, alice, file.id, 'c@example.com');
  });

  test('the limit is per account, and unsharing does not reset it', async () => {
    const { services, alice, bob } = await setUp({ limits });
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const bobsFile = await addFile(services, bob, 0, 'b.txt', 1);
    await emailFile(services, alice, file.id, 'r1@example.com, r2@example.com, r3@example.com, r4@example.com, r5@example.com');
    await unshare(as(services, alice), { ...signed, dirids: '', fids: String(file.id) });
    expect(await queued(services)).toEqual([]);
    expect((await rejected(emailFile(services, alice, file.id, 'r6@example.com'))).code).toBe(ResultCode.TooManyAttempts);
    await emailFile(services, bob, bobsFile.id, 'r1@example.com, r2@example.com, r3@example.com, r4@example.com, r5@example.com');
  });

  test('a call with more recipients than the hourly limit itself is a 400, not a wait', async () => {
    const { services, alice } = await setUp({ limits });
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    const error = await rejected(emailFile(services, alice, file.id, Array.from({ length: 6 }, (_, i) => `r${i}@example.com`).join(',')));
    expect(error.code).toBe(ResultCode.InvalidArgument);
  });
});

describe('the message', () => {
  test('names the sharer and the item, links the share page, gives the extraction code, and escapes HTML', () => {
    const message = shareMessage({
      sharerName: 'alice',
      itemType: 'file',
      itemName: `Tom & Jerry's <script>alert(1)</script>.txt`,
      url: 'https://files.example.com/s/AbC_d-123"onmouseover="x',
      extractionCode: '<b>&12',
    });
    expect(message.subject).toBe(`alice shared the file "Tom & Jerry's <script>alert(1)</script>.txt" with you`);
    expect(message.text).toContain('Open it here: https://files.example.com/s/AbC_d-123');
    expect(message.text).toContain('Extraction code: <b>&12');
    expect(message.html).toContain('Tom &#38; Jerry&#39;s &#60;script&#62;alert(1)&#60;/script&#62;.txt');
    expect(message.html).toContain('href="https://files.example.com/s/AbC_d-123&#34;onmouseover=&#34;x"');
    expect(message.html).toContain('&#60;b&#62;&#38;12');
    expect(message.html).not.toMatch(/<script|<b>|"onmouseover/);
  });

  test('an open share has no extraction code, and the subject is one line whatever the name', () => {
    const message = shareMessage({ sharerName: 'bob', itemType: 'folder', itemName: 'a\r\nBcc: x@example.com', url: 'http://h/s/c', extractionCode: null });
    expect(message.text).not.toContain('Extraction code');
    expect(message.html).not.toContain('Extraction code');
    expect(message.subject).toBe('bob shared the folder "a Bcc: x@example.com" with you');
  });
});

describe('the sender, without an SMTP server: the outbox', () => {
  test('writes one .eml per recipient, with the link and the extraction code, and logs a line without the code', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, "Tom & Jerry's.txt", 5);
    await fileShare(as(services, alice), { ...signed, fids: String(file.id), downpwd: 'x7Kq-22', downValue: 0, description: '' });
    await emailFile(services, alice, file.id, 'ann@example.com, bob@example.org');
    const code = (await fileInfo(services, alice, file.id)).item.share!.code;

    const { sender, lines } = senderFor(services);
    expect(await sender.sendDue()).toEqual({ sent: 2, retried: 0, failed: 0 });

    const rows = await queued(services);
    const names = (await readdir(outbox(services))).sort();
    expect(names).toEqual(rows.map((row) => `email-${row.id}.eml`).sort());
    for (const row of rows) {
      const file = path.join(outbox(services), `email-${row.id}.eml`);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const raw = await readFile(file, 'utf8');
      expect(raw).toContain('\r\n');
      const mail = parseMail(raw);
      expect(mail.headers.get('to')).toBe(row.recipient);
      expect(mail.headers.get('from')).toBe('File Storage <no-reply@localhost>');
      expect(mail.headers.get('subject')).toBe(`alice shared the file "Tom & Jerry's.txt" with you`);
      expect(mail.headers.get('message-id')).toMatch(new RegExp(`^<${row.id}\\.[A-Za-z0-9_-]{22}@localhost>$`));
      expect(mail.text).toContain(`${PUBLIC_URL}/s/${code}`);
      expect(mail.text).toContain('Extraction code: x7Kq-22');
      expect(mail.html).toContain(`href="${PUBLIC_URL}/s/${code}"`);
      expect(raw).not.toContain('fss.test');
      expect(mail.html).toContain('Tom &#38; Jerry&#39;s.txt');
      expect(mail.html).toContain('x7Kq-22');
    }

    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.filter((line) => line.event === 'mail written to outbox').map((line) => line.to)).toEqual(['ann@example.com', 'bob@example.org']);
    expect(lines.join('\n')).not.toContain('x7Kq-22');

    const info = await fileInfo(services, alice, file.id);
    expect((await deliveries(info)).map((email) => [email.to, email.status, email.time])).toEqual([
      ['ann@example.com', 'sent', services.now()],
      ['bob@example.org', 'sent', services.now()],
    ]);
    // Nothing is sent twice.
    expect(await sender.sendDue()).toEqual({ sent: 0, retried: 0, failed: 0 });
  });

  test('an outbox it cannot write is retried with back-off and, after a day, fails with the error', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    await emailFile(services, alice, file.id, 'ann@example.com');
    // A file where the outbox folder should be.
    const { writeFile } = await import('node:fs/promises');
    await writeFile(outbox(services), 'not a folder');
    const { sender } = senderFor(services);

    expect(await sender.sendDue()).toEqual({ sent: 0, retried: 1, failed: 0 });
    let info = await deliveries(await fileInfo(services, alice, file.id));
    expect(info[0]).toMatchObject({ status: 'queued', error: expect.stringMatching(/EEXIST|ENOTDIR/) });

    let rounds = 1;
    for (; rounds < 100; rounds++) {
      const [row] = await queued(services);
      if (row.status !== 'queued') break;
      services.clock.set(new Date(row.next_attempt_at));
      await sender.sendDue();
    }
    const [row] = await queued(services);
    expect(row.status).toBe('failed');
    // 1, 2, 4, … 32 minutes, then hourly: about 24 hours in all.
    expect(row.attempts).toBeGreaterThan(20);
    expect(row.attempts).toBeLessThanOrEqual(30);
    expect(services.now().getTime() - row.created_at).toBeLessThanOrEqual(24 * HOUR);
    info = await deliveries(await fileInfo(services, alice, file.id));
    expect(info[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/EEXIST|ENOTDIR/) });
  });

  test('a message whose item went to the bin before it was sent fails with that reason and is not written', async () => {
    const { services, alice } = await setUp();
    const file = await addFile(services, alice, 0, 'a.txt', 1);
    await emailFile(services, alice, file.id, 'ann@example.com');
    await moveToBin(services, alice, { folderIds: [], fileIds: [file.id] });
    const { sender } = senderFor(services);
    expect(await sender.sendDue()).toEqual({ sent: 0, retried: 0, failed: 1 });
    const [row] = await queued(services);
    expect(row).toMatchObject({ status: 'failed', last_error: 'the shared file was deleted or moved to the recycle bin' });
    await expect(readdir(outbox(services))).rejects.toThrow();
  });

  test('retries wait 1, 2, 4 … minutes, at most an hour, and give up 24 hours after queueing', () => {
    const queuedAt = new Date('2026-01-01T00:00:00Z');
    const after = (attempts: number, now: Date) => nextAttemptAt(defaultMailSenderSettings, attempts, queuedAt, now)?.getTime();
    expect(after(1, queuedAt)).toBe(queuedAt.getTime() + 60_000);
    expect(after(2, queuedAt)).toBe(queuedAt.getTime() + 120_000);
    expect(after(6, queuedAt)).toBe(queuedAt.getTime() + 32 * 60_000);
    expect(after(7, queuedAt)).toBe(queuedAt.getTime() + HOUR);
    expect(after(50, queuedAt)).toBe(queuedAt.getTime() + HOUR);
    expect(after(20, new Date(queuedAt.getTime() + 23 * HOUR + 1))).toBeUndefined();
  });
});

describe('settings', () => {
  test('FSS_SMTP_URL takes smtp:// and smtps:// URLs; anything else is refused without repeating the value', () => {
    expect(loadConfig({ FSS_SMTP_URL: 'smtps://user:p%40ss@mail.example.com:465' }).smtpUrl).toBe('smtps://user:p%40ss@mail.example.com:465');
    expect(loadConfig({}).smtpUrl).toBeUndefined();
    for (const url of ['http://user:hunter2@mail.example.com', 'smtp://', 'not a url hunter2']) {
      const error = (() => {
        try {
          loadConfig({ FSS_SMTP_URL: url });
          return null;
        } catch (e) {
          return e as Error;
        }
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect(error!.message).not.toContain('hunter2');
    }
  });

  test('FSS_MAIL_FROM is one line with an address; the sending limits are configurable', () => {
    expect(loadConfig({}).mailFrom).toBe('File Storage <no-reply@localhost>');
    expect(loadConfig({ FSS_MAIL_FROM: 'Files <files@example.com>' }).mailFrom).toBe('Files <files@example.com>');
    expect(() => loadConfig({ FSS_MAIL_FROM: 'files@example.com\r\nBcc: x@example.com' })).toThrow(ConfigError);
    expect(() => loadConfig({ FSS_MAIL_FROM: 'nobody' })).toThrow(ConfigError);
    const { limits } = loadConfig({ FSS_EMAIL_RECIPIENTS_PER_HOUR: '7', FSS_EMAIL_RECIPIENTS_PER_DAY: '70' });
    expect([limits.maxEmailRecipientsPerHour, limits.maxEmailRecipientsPerDay]).toEqual([7, 70]);
    expect([defaultLimits.maxEmailRecipients, defaultLimits.maxEmailRecipientsPerHour, defaultLimits.maxEmailRecipientsPerDay]).toEqual([20, 100, 500]);
  });
});

describe('the language of a share e-mail', () => {
  test('is the most preferred of English and any Chinese in Accept-Language; English when neither or none', () => {
    expect(mailLanguageOf('zh-CN')).toBe('zh-CN');
    expect(mailLanguageOf('zh-TW,en;q=0.5')).toBe('zh-CN');
    expect(mailLanguageOf('en-US,zh-CN;q=0.9')).toBe('en');
    expect(mailLanguageOf('en;q=0.4, zh;q=0.8')).toBe('zh-CN');
    expect(mailLanguageOf('fr-FR, de;q=0.9')).toBe('en');
    expect(mailLanguageOf('zh;q=0, en')).toBe('en');
    expect(mailLanguageOf('')).toBe('en');
    expect(mailLanguageOf(undefined)).toBe('en');
  });

  test('a Chinese message says everything in Chinese, the names and link escaped as in English', () => {
    const message = shareMessage({ sharerName: 'alice', itemType: 'folder', itemName: '<照片>', url: 'https://f.example/s/abc', extractionCode: 'pA5s', language: 'zh-CN' });
    expect(message.subject).toBe('alice 与你分享了文件夹“<照片>”');
    expect(message.text).toContain('提取码：pA5s');
    expect(message.html).toContain('<strong>&#60;照片&#62;</strong>');
    expect(message.text).not.toMatch(/shared|Extraction|Open/);
  });
});
