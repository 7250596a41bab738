/**
 * Reads the messages the tests' SMTP server received (e2e/smtp-mailbox.ts writes each one as a
 * .eml file into the folder named by FSS_E2E_MAILBOX): waits for the message to a recipient,
 * decodes its headers and its text and HTML parts (quoted-printable, base64, encoded words), and
 * finds the share page's link in it. Small on purpose: it reads what the service sends
 * (server/src/operations/sharing/mail-messages.ts through nodemailer), not every possible message.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { MAILBOX_VARIABLE } from './service';

export interface MailMessage {
  /** Header names in lower case; folded lines joined and encoded words decoded. */
  readonly headers: ReadonlyMap<string, string>;
  readonly subject: string;
  readonly to: string;
  readonly text: string;
  readonly html: string;
  /** The file it was read from. */
  readonly file: string;
}

function mailboxFolder(): string {
  const folder = process.env[MAILBOX_VARIABLE];
  if (!folder) throw new Error(`${MAILBOX_VARIABLE} is not set: the global setup did not start the SMTP server`);
  return folder;
}

const quotedPrintable = (text: string) =>
  Buffer.from(text.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`); the space between two of them goes. */
const decodeWords = (value: string) =>
  value
    .replace(/(=\?[^?]+\?[QqBb]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?[^?]+\?([QqBb])\?([^?]*)\?=/g, (_, kind: string, data: string) =>
      kind.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : quotedPrintable(data.replace(/_/g, ' ')),
    );

function splitHead(raw: string): [string, string] {
  const blank = /\r?\n\r?\n/.exec(raw);
  return blank ? [raw.slice(0, blank.index), raw.slice(blank.index + blank[0].length)] : [raw, ''];
}

function parseHeaders(head: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(line.slice(colon + 1).trim()));
  }
  return headers;
}

function decodeBody(body: string, encoding = '7bit'): string {
  switch (encoding.toLowerCase()) {
    case 'quoted-printable':
      return quotedPrintable(body);
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    default:
      return body;
  }
}

/** The text parts of a message, by content type, multiparts walked into. */
function textParts(headers: ReadonlyMap<string, string>, body: string, parts: Map<string, string>): void {
  const type = (headers.get('content-type') ?? 'text/plain').toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(headers.get('content-type') ?? '')?.[1];
  if (type.startsWith('multipart/') && boundary) {
    for (const piece of body.split(`--${boundary}`).slice(1)) {
      if (piece.startsWith('--')) break;
      const [head, content] = splitHead(piece.replace(/^\r?\n/, ''));
      textParts(parseHeaders(head), content.replace(/\r?\n$/, ''), parts);
    }
    return;
  }
  const kind = type.split(';')[0].trim();
  if (!parts.has(kind)) parts.set(kind, decodeBody(body, headers.get('content-transfer-encoding')));
}

export function parseMessage(raw: string, file = ''): MailMessage {
  const [head, body] = splitHead(raw);
  const headers = parseHeaders(head);
  const parts = new Map<string, string>();
  textParts(headers, body, parts);
  return {
    headers,
    subject: headers.get('subject') ?? '',
    to: headers.get('to') ?? '',
    text: (parts.get('text/plain') ?? '').replace(/\r\n/g, '\n'),
    html: parts.get('text/html') ?? '',
    file,
  };
}

/** Every message received so far, oldest first. */
export async function receivedMessages(): Promise<MailMessage[]> {
  const folder = mailboxFolder();
  const names = (await readdir(folder)).filter((name) => name.endsWith('.eml')).sort();
  return Promise.all(names.map(async (name) => parseMessage(await readFile(path.join(folder, name), 'utf8'), name)));
}

const addressesIn = (header: string) => [...header.matchAll(/[^\s<>,;"]+@[^\s<>,;"]+/g)].map((match) => match[0].toLowerCase());

/**
 * The first message to `recipient` (compared case-insensitively) whose subject contains `subject`,
 * when one arrives within `timeoutMs`.
 */
export async function waitForMessage(recipient: string, { subject = '', timeoutMs = 30_000 }: { subject?: string; timeoutMs?: number } = {}): Promise<MailMessage> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const message = (await receivedMessages()).find(
      (candidate) => addressesIn(candidate.to).includes(recipient.toLowerCase()) && candidate.subject.includes(subject),
    );
    if (message) return message;
    if (Date.now() > deadline) throw new Error(`No message to ${recipient}${subject ? ` about "${subject}"` : ''} arrived within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The share page's link in a message's text: `Open it here: http(s)://…/s/CODE`. */
export function shareLinkIn(message: MailMessage): string {
  const link = /Open it here: (https?:\/\/\S+)/.exec(message.text)?.[1];
  if (!link) throw new Error(`The message ${message.file} has no share link. Its text:\n${message.text}`);
  return link;
}

/** The extraction code in a message's text, if the share has one. */
export function extractionCodeIn(message: MailMessage): string | undefined {
  return /Extraction code: (\S+)/.exec(message.text)?.[1];
}
