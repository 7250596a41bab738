/**
 * A real SMTP server for the browser tests (the smtp-server package on 127.0.0.1, a free port, no
 * TLS and no login: it is loopback) that writes every message it receives into a folder, one
 * .eml file each, as the service sent it. The global setup starts it before the service and gives
 * the service its URL (FSS_SMTP_URL); e2e/mailbox.ts reads the folder.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';

/**
 * How long the server takes to accept a message. A message being handed over is still `queued`
 * (docs/protocol.md §16.5): the pause lets a test see it queued before it is sent.
 */
const ACCEPT_DELAY_MS = 1_500;

/** Recipients at this domain are refused for good (550), as a mail server refuses an unknown user. */
export const REFUSED_DOMAIN = 'refused.example';

export interface SmtpMailbox {
  /** smtp://127.0.0.1:PORT, for FSS_SMTP_URL. */
  readonly url: string;
  /** The folder the messages are written to. */
  readonly folder: string;
  close(): Promise<void>;
}

export async function startSmtpMailbox(): Promise<SmtpMailbox> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'fss-e2e-mailbox-'));
  let received = 0;
  const server = new SMTPServer({
    logger: false,
    // Without STARTTLS the service sends in plain text, which is what loopback needs.
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    onRcptTo(address, _session, callback) {
      if (!address.address.toLowerCase().endsWith(`@${REFUSED_DOMAIN}`)) return callback();
      callback(Object.assign(new Error('5.1.1 No such user here'), { responseCode: 550 }));
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const name = `${String(++received).padStart(5, '0')}-${Date.now()}.eml`;
        // Written under another name and renamed, so that a reader never sees half a message.
        const partial = path.join(folder, `.${name}.part`);
        setTimeout(() => {
          writeFile(partial, Buffer.concat(chunks))
            .then(() => rename(partial, path.join(folder, name)))
            .then(() => callback(), callback);
        }, ACCEPT_DELAY_MS);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as net.AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    folder,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(folder, { recursive: true, force: true });
    },
  };
}
