/**
 * A real SMTP server for tests (the smtp-server package on 127.0.0.1), and a small reader of the
 * RFC 5322 messages it receives or the outbox holds: headers, and the text and HTML parts decoded.
 */
import net from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  readonly mailFrom: string;
  readonly rcptTo: readonly string[];
  readonly raw: string;
}

export interface TestSmtpServer {
  readonly port: number;
  /** smtp://user:pass@127.0.0.1:port */
  readonly url: string;
  readonly received: ReceivedMail[];
  close(): Promise<void>;
}

export const SMTP_USER = 'mailer';
export const SMTP_PASSWORD = 'smtp-secret-Pa55';

/** A port that was free a moment ago: for a server that starts later in the test. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function smtpUrl(port: number): string {
  return `smtp://${SMTP_USER}:${encodeURIComponent(SMTP_PASSWORD)}@127.0.0.1:${port}`;
}

export interface SmtpServerOptions {
  /** Recipients refused with `550 5.1.1 No such user`. */
  readonly rejectRecipients?: readonly string[];
}

/** An SMTP server requiring SMTP_USER/SMTP_PASSWORD (AUTH over plain text: it is loopback), without STARTTLS. */
export async function startSmtpServer(port = 0, options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (options.rejectRecipients?.includes(address.address)) {
        const error = new Error('No such user') as Error & { responseCode: number };
        error.responseCode = 550;
        callback(error);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  // A client that dies in the middle of a message (a service killed by a crash test) is reported
  // as an 'error' event; the message is simply not received, which is what those tests check.
  server.on('error', () => {});
  const actual = (server.server.address() as net.AddressInfo).port;
  return {
    port: actual,
    url: smtpUrl(actual),
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---- Reading messages ----------------------------------------------------------------------------

export interface ParsedMail {
  /** Header names in lower case, folded lines joined, encoded words decoded. */
  readonly headers: ReadonlyMap<string, string>;
  readonly text: string;
  readonly html: string;
}

function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=\s*/g, (_, _charset: string, kind: string, data: string) =>
    kind.toUpperCase() === 'B'
      ? Buffer.from(data, 'base64').toString('utf8')
      : Buffer.from(quotedPrintable(data.replace(/_/g, ' ')), 'latin1').toString('utf8'),
  );
}

function quotedPrintable(text: string): string {
  return text.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(line.slice(colon + 1).trim()));
  }
  return headers;
}

function splitHead(raw: string): [string, string] {
  const match = /\r?\n\r?\n/.exec(raw);
  return match ? [raw.slice(0, match.index), raw.slice(match.index + match[0].length)] : [raw, ''];
}

function decodeBody(body: string, encoding: string | undefined): string {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'quoted-printable':
      return Buffer.from(quotedPrintable(body), 'latin1').toString('utf8');
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    default:
      return body;
  }
}

export function parseMail(raw: string): ParsedMail {
  const [head, body] = splitHead(raw);
  const headers = parseHeaders(head);
  const parts: Array<{ type: string; content: string }> = [];
  const collect = (partHeaders: ReadonlyMap<string, string>, partBody: string) => {
    const type = partHeaders.get('content-type') ?? 'text/plain';
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (type.toLowerCase().startsWith('multipart/') && boundary) {
      for (const piece of partBody.split(`--${boundary}`).slice(1)) {
        if (piece.startsWith('--')) break;
        const [h, b] = splitHead(piece.replace(/^\r?\n/, ''));
        collect(parseHeaders(h), b.replace(/\r?\n$/, ''));
      }
      return;
    }
    parts.push({ type: type.toLowerCase(), content: decodeBody(partBody, partHeaders.get('content-transfer-encoding')) });
  };
  collect(headers, body);
  return {
    headers,
    text: parts.find((part) => part.type.startsWith('text/plain'))?.content ?? '',
    html: parts.find((part) => part.type.startsWith('text/html'))?.content ?? '',
  };
}
