/**
 * GET/HEAD /l/{code}/{name}: the permanent direct links that FileLink hands out
 * (operations/sharing/links.ts). The bytes are served exactly as the download URLs serve them
 * (protocol/files/downloads.ts serveFile): one Range, HEAD, a strong ETag, If-None-Match, If-Range.
 *
 * - The file is found by the code alone; `{name}` is for people and browsers, and may be anything
 *   or left out (`/l/{code}`). The answer names the file by its current name.
 * - 404 for an unknown or malformed code, a removed link, and a file that is in the bin (or beneath
 *   a folder in the bin) or deleted: one answer, so that a URL tells nothing about why. 423 while
 *   the file is locked (encrypted, or in an encrypted folder).
 * - `Content-Disposition: attachment` (RFC 6266, with filename*), never inline: the bytes are
 *   anyone's upload served from the service's own origin, so a browser must not render an HTML or
 *   SVG file as a page of this site. nosniff and `Content-Security-Policy: default-src 'none';
 *   sandbox` guard the same door should a browser render it anyway.
 * - Hits: counted once per GET that starts a transfer (operations/sharing/links.ts says which).
 * - The code is a capability: the request log keeps only `/l/…` (request-target.ts loggablePath).
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
