/**
 * GET/HEAD /l/{code}/{name}, the permanent direct links of FileLink (docs/protocol.md §17), served as downloads are
 * (serveFile). One 404 for every reason a link does not serve, so a URL tells nothing; always an attachment, since the
 * bytes are anyone's upload on this origin. The code is a capability: the log keeps only `/l/…`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { openLinkedFile } from '../../operations/sharing/links';
import { CapabilityRoute, refuse, serveFile } from './downloads';

export class LinkRoute extends CapabilityRoute {
  protected readonly path = /^\/l\/([^/]+)(?:\/[^/]*)?$/;

  protected async answer(req: IncomingMessage, res: ServerResponse, [code]: readonly string[]): Promise<void> {
    const lookup = await openLinkedFile(this.services, code);
    if (lookup.kind === 'notFound') return refuse(res, 404, 'This link does not exist, or the file is no longer available.');
    if (lookup.kind === 'locked') return refuse(res, 423, 'This file is encrypted. Its owner must decrypt it before the link works again.');
    await serveFile(req, res, lookup.file, this.log, { logPath: '/l/…', onTransfer: lookup.recordTransfer });
  }
}
